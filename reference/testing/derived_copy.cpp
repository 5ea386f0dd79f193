// test_derived_copy (TEST ONLY): an op with a derived input (Distribution::derived), copied to
// its output:
//
//   y = 2 x   (derived: written on the device by the op's derive_inputs, never drawn)
//   z = y     (the output, by the oracle from y as given)
//
// With written=half its derive_inputs leaves the second half of y unwritten, as a faulty one
// would: the harness must refuse the case (the poison it left there would otherwise reach the
// oracle and the variant alike, and NaN compares equal to NaN), never pass it.
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/testing/test_ops.hpp"

namespace kwb {
namespace {

std::vector<TensorSpec> derived_copy_tensors(const Shape& s, DType dtype) {
  const std::int64_t n = s.at("n");
  return {
      {.name = "x", .dims = {n}, .init = Distribution::normal(0.0, 1.0)},
      {.name = "y", .dims = {n}, .init = Distribution::derived()},
      {.name = "z", .dims = {n}, .is_output = true, .tolerance = default_tolerance(dtype)},
  };
}

KWB_REGISTER_OP(Op{
    .name = testing_ops::kDerivedCopy,
    .description = "TEST ONLY: z = y with y = 2 x a derived input (written=half: its derivation leaves half unwritten)",
    .axes = {{"n", 1000, {}, "elements"},
             {"written", 0, {}, "how much of y derive_inputs writes: all, or half (a planted defect)", {"all", "half"}}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = derived_copy_tensors,
    .work = [](const Shape& s, DType dtype) { return WorkModel{tensor_bytes(derived_copy_tensors(s, dtype), dtype), 0.0}; },
    .oracle = [](const Shape&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
      out[0].values = in[1].values;
    },
    .derive_inputs = testing_ops::derived_copy_derive,
    .default_shapes = {Shape{{{"n", 1000}, {"written", "all"}}}},
    .edge_shapes = {Shape{{{"n", 1}, {"written", "all"}}}, Shape{{{"n", 1000}, {"written", "half"}}}},
    .test_only = true,
});

}  // namespace
}  // namespace kwb
