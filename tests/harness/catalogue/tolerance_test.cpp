// Per-output tolerances: the default table per element type, and reductions that scale with K.
#include "harness/catalogue/tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kwb {
namespace {

TEST(Tolerance, DefaultTableIsPerElementTypeAndExactForIntegers) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(default_tolerance(elem_type_of(d)).atol, default_tolerance(d).atol);
    EXPECT_EQ(default_tolerance(elem_type_of(d)).rtol, default_tolerance(d).rtol);
  }
  for (ElemType t : {ElemType::int32, ElemType::int64, ElemType::boolean}) {
    EXPECT_EQ(default_tolerance(t).atol, 0);
    EXPECT_EQ(default_tolerance(t).rtol, 0);
  }
}

TEST(Tolerance, ReductionRtolGrowsAsSqrtKUnitsOfTheAccumulation) {
  const Tolerance base = default_tolerance(ElemType::fp32);
  const Tolerance k1k = reduction_tolerance(ElemType::fp32, 1024);
  const Tolerance k4k = reduction_tolerance(ElemType::fp32, 4096);
  const double u = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(k1k.rtol - base.rtol, 4 * 32 * u);
  EXPECT_DOUBLE_EQ((k4k.rtol - base.rtol) / (k1k.rtol - base.rtol), 2.0) << "4x K: 2x the added rtol";
  EXPECT_DOUBLE_EQ((k4k.atol - base.atol) / (k1k.atol - base.atol), 4.0) << "atol grows with K";
  // A narrower accumulation is looser; a bf16 output keeps its own, larger base.
  EXPECT_GT(reduction_tolerance(ElemType::fp32, 1024, ElemType::bf16).rtol, k1k.rtol);
  EXPECT_GE(reduction_tolerance(ElemType::bf16, 1024).rtol, default_tolerance(ElemType::bf16).rtol);
  // K = 1 adds almost nothing.
  EXPECT_NEAR(reduction_tolerance(ElemType::fp32, 1).rtol, base.rtol, 1e-6);
}

TEST(Tolerance, OutputsUseTheirOwnToleranceElseTheTableOfTheirElementType) {
  TensorSpec y{.name = "y", .dims = {4}, .is_output = true};
  EXPECT_EQ(tolerance_for(y, DType::bf16).rtol, default_tolerance(DType::bf16).rtol);
  y.elem = ElemType::fp32;
  EXPECT_EQ(tolerance_for(y, DType::bf16).rtol, default_tolerance(DType::fp32).rtol);
  y.tolerance = Tolerance{0.25, 0.5};
  EXPECT_EQ(tolerance_for(y, DType::bf16).atol, 0.25);
  EXPECT_EQ(tolerance_for(y, DType::bf16).rtol, 0.5);
}

}  // namespace
}  // namespace kwb
