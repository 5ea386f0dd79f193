// Kernel names as shown: the catalogue's own demangled names, the eager baselines' steps by their
// names (and lambdas by their place), the vendor's names untouched, and the empty names older
// records kept.
#include "reports/review/kernel_label.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

TEST(KernelLabel, NamespacesTypesAndLambdasAreShortened) {
  EXPECT_EQ(review::readable_kernel_name("kwb::(anonymous namespace)::rmsnorm_fwd_v2<__nv_bfloat16, 8, 2>"),
            "rmsnorm_fwd_v2<bf16, 8, 2>");
  EXPECT_EQ(review::readable_kernel_name("kwb::hopper::gemm_tn_warp_specialized<__half, 256, 3, 1, kwb::BiasRelu<__half>>"),
            "gemm_tn_warp_specialized<fp16, 256, 3, 1, BiasRelu<fp16>>");
  EXPECT_EQ(review::readable_kernel_name("kwb::eager_map_kernel<kwb::(anonymous namespace)::launch_typed<__nv_bfloat16>("
                                         "kwb::LaunchArgs const&)::{lambda(long)#2}>"),
            "eager_map_kernel<lambda #2 of launch_typed<bf16>>");
  // The enclosing function outside an anonymous namespace: the lambda still belongs to it.
  EXPECT_EQ(review::readable_kernel_name(
                "kwb::eager_map_kernel<kwb::launch_typed<__nv_bfloat16>(kwb::LaunchArgs const&)::{lambda(long)#2}>"),
            "eager_map_kernel<lambda #2 of launch_typed<bf16>>");
  // An eager step names itself: the kernel reads as the step, whatever its lambda or types.
  EXPECT_EQ(review::readable_kernel_name("kwb::eager_map_kernel<kwb::step::times_weight, kwb::(anonymous namespace)::"
                                         "launch_typed<__nv_bfloat16>(kwb::LaunchArgs const&)::{lambda(long)#2}>"),
            "eager_map_kernel<times_weight>");
  EXPECT_EQ(review::readable_kernel_name("kwb::sum_partials_kernel<kwb::step::dweight_sum, float, kwb::sum_partials<"
                                         "kwb::step::dweight_sum>(float const*, int, long, float*, CUstream_st*)::"
                                         "{lambda(float)#1}>"),
            "sum_partials_kernel<dweight_sum>");
  // Nsight Compute's name of the same kernel keeps the return type and the parameters.
  EXPECT_EQ(review::readable_kernel_name("void kwb::eager_map_kernel<kwb::step::times_weight, kwb::(anonymous namespace)::"
                                         "launch_typed<__nv_bfloat16>(kwb::LaunchArgs const&)::{lambda(long)#2}>(long, T2)"),
            "eager_map_kernel<times_weight>");
  EXPECT_EQ(review::readable_kernel_name("kwb::xent::mean_loss_kernel"), "mean_loss_kernel");
  EXPECT_EQ(review::readable_kernel_name("kwb::(anonymous namespace)::cast_kernel<float, __nv_bfloat16>"),
            "cast_kernel<fp32, bf16>");
  // The vendor's names have no namespace to drop.
  EXPECT_EQ(review::readable_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  // An older record kept only "kwb::".
  EXPECT_NE(review::readable_kernel_name("kwb::").find("no name"), std::string::npos);
}

}  // namespace
}  // namespace kwb
