// Element types: names, sizes, resolution, host encode/decode, poison patterns, tensor bytes;
// and the test-only ops stay out of the visible catalogue.
#include "harness/catalogue/elem_type.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/plan/planner.hpp"

#include <cstring>
#include <random>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"

namespace kwb {
namespace {

TEST(ElemType, NamesRoundTripAndCaseDtypeResolvesToTheCase) {
  for (ElemType t : kConcreteElemTypes) EXPECT_EQ(parse_elem_type(to_string(t)), t);
  EXPECT_EQ(parse_elem_type("bool"), ElemType::boolean);
  EXPECT_FALSE(parse_elem_type("int8").has_value());
  EXPECT_EQ(resolve(ElemType::case_dtype, DType::bf16), ElemType::bf16);
  EXPECT_EQ(resolve(ElemType::int32, DType::bf16), ElemType::int32);
  EXPECT_EQ(elem_size(ElemType::int64), 8u);
  EXPECT_EQ(elem_size(ElemType::boolean), 1u);
  EXPECT_THROW(elem_size(ElemType::case_dtype), std::invalid_argument);
}

TEST(ElemType, IntegerAndBoolValuesEncodeAndDecodeExactly) {
  std::mt19937_64 rng(17);
  std::vector<double> values(1000);
  for (auto& v : values) v = static_cast<double>(static_cast<std::int32_t>(rng()));
  values[0] = -100;
  for (ElemType t : {ElemType::int32, ElemType::int64}) {
    std::vector<unsigned char> bytes(values.size() * elem_size(t));
    encode_elements(values.data(), t, 1000, bytes.data());
    std::vector<double> back(values.size());
    decode_elements(bytes.data(), t, 1000, back.data());
    EXPECT_EQ(back, values) << to_string(t);
  }
  const std::vector<double> flags = {0, 1, 3, -2, 0};
  std::vector<unsigned char> bytes(flags.size());
  encode_elements(flags.data(), ElemType::boolean, 5, bytes.data());
  EXPECT_EQ(bytes, (std::vector<unsigned char>{0, 1, 1, 1, 0}));
  const unsigned char raw[3] = {0, 1, 7};
  double decoded[3];
  decode_elements(raw, ElemType::boolean, 3, decoded);
  EXPECT_EQ(decoded[2], 1.0) << "any non-zero byte is true";
}

TEST(ElemType, IntegerPoisonIsNotMinusOne) {
  const std::int32_t minus_one = -1;
  EXPECT_FALSE(is_poison(&minus_one, ElemType::int32)) << "-1 is a legitimate integer output";
  std::int32_t poisoned;
  std::memset(&poisoned, kIntegerPoisonByte, 4);
  EXPECT_TRUE(is_poison(&poisoned, ElemType::int32));
  const unsigned char bool_poison = kPoisonByte, bool_true = 1;
  EXPECT_TRUE(is_poison(&bool_poison, ElemType::boolean));
  EXPECT_FALSE(is_poison(&bool_true, ElemType::boolean));
  const float nan_poison = [] { float f; std::memset(&f, 0xFF, 4); return f; }();
  EXPECT_TRUE(is_poison(&nan_poison, ElemType::fp32));
}

TEST(TensorBytes, EachTensorCountsAtItsOwnElementSize) {
  const std::vector<TensorSpec> specs = {
      {.name = "x", .dims = {8, 16}},                                   // case dtype
      {.name = "labels", .dims = {8}, .elem = ElemType::int32},
      {.name = "pos", .dims = {8}, .elem = ElemType::int64},
      {.name = "keep", .dims = {8}, .elem = ElemType::boolean},
      {.name = "grad", .dims = {16}, .is_output = true, .elem = ElemType::fp32},
  };
  EXPECT_EQ(tensor_bytes(specs, DType::bf16), 8 * 16 * 2 + 8 * 4 + 8 * 8 + 8 + 16 * 4);
  EXPECT_EQ(tensor_bytes(specs, DType::fp32), 8 * 16 * 4 + 8 * 4 + 8 * 8 + 8 + 16 * 4);
  EXPECT_EQ(bytes_of(specs[1], DType::fp16), 32);
}

TEST(Registry, TestOnlyOpsStayOutOfDefaultPlansButAreFoundByName) {
  const auto& r = Registry::instance();
  const auto hidden = plan_cases(PlanRequest{}, r);
  PlanRequest with_tests;
  with_tests.include_test_variants = true;
  const auto shown = plan_cases(with_tests, r);
  for (const char* name : {"test_colsum", "test_label_nll", "test_bhsd_scale"}) {
    const Op* op = r.find_op(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_TRUE(op->test_only);
    auto of_op = [&](const CaseRequest& c) { return c.op == name; };
    EXPECT_FALSE(std::any_of(hidden.begin(), hidden.end(), of_op)) << name << " in the default plan";
    EXPECT_TRUE(std::any_of(shown.begin(), shown.end(), of_op)) << name << " missing with test variants";
    EXPECT_TRUE(r.variants(name, false).empty()) << "their variants are test-only too";
    EXPECT_FALSE(r.variants(name, true).empty());
  }
}

}  // namespace
}  // namespace kwb
