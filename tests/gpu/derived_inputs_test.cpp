// Derived inputs (Distribution::derived, Op::derive_inputs) through the case runner, with the
// test-only op test_derived_copy (reference/testing/derived_copy.cpp): a derivation that writes
// every element verifies and passes; one that leaves half of its input unwritten is refused with
// what and where, never passed (the poison would reach the oracle and the variant alike).
#include <string>

#include "harness/catalogue/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"

namespace kwb {
namespace {

Shape derived_copy_shape(std::int64_t n, const char* written) { return Shape{{{"n", n}, {"written", written}}}; }

TEST(DerivedInputs, AWholeDerivationPassesAndAHalfOneIsRefusedWithItsInputNamed) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::fp32, DType::bf16}) {
    const CaseRecord whole = test::run_in_process("test_derived_copy", "test_simple", dtype,
                                                  derived_copy_shape(4099, "all"), std::string(kVerifyOnlyPreset), 3);
    EXPECT_EQ(whole.disposition, Disposition::passed) << whole.reason;
    const CaseRecord half = test::run_in_process("test_derived_copy", "test_simple", dtype,
                                                 derived_copy_shape(4099, "half"), std::string(kVerifyOnlyPreset), 3);
    EXPECT_NE(half.disposition, Disposition::passed);
    EXPECT_NE(half.reason.find("derive_inputs left 2050 of the 4099 elements of input 'y' unwritten"),
              std::string::npos)
        << half.reason;
  }
}

}  // namespace
}  // namespace kwb
