// The launch of fused_v3 (rope_fwd and rope_bwd): the dtype and lane width dispatched.
// Its kernels are compiled in this file alone: the variants' registration files of rope_fwd and
// rope_bwd only declare the launcher (one copy of each kernel in the catalogue, not one per file).
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb::rope {

void launch_per_pack(const LaunchArgs& a, const Rotation& r) {
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const RotateParams p = rotate_params<T>(a, r);
    with_pack<T>(p, [&](auto lanes_tag, int lanes) {
      constexpr int E = decltype(lanes_tag)::value;
      constexpr int kCache = E * sizeof(T) == 16 ? kCacheTablesLast : kCacheDefault;
      launch_slices<1, T>(a, p, lanes, rope_direct_kernel<T, E, 1, kPerPackThreads, kOrderTensorMajor, kCache, 1>,
                          kPerPackThreads, 1);
    });
  });
}

}  // namespace kwb::rope
