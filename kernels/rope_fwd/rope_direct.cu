// The launch of fused_v2 (rope_fwd and rope_bwd): the dtype, lane width and items per thread dispatched.
// Its kernels are compiled in this file alone: the variants' registration files of rope_fwd and
// rope_bwd only declare the launcher (one copy of each kernel in the catalogue, not one per file).
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb::rope {

void launch_direct(const LaunchArgs& a, const Rotation& r) {
  const std::int64_t per_thread = a.tunables ? a.tunable("items_per_thread") : kDirectDefaultItems;
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const RotateParams p = rotate_params<T>(a, r);
    with_pack<T>(p, [&](auto lanes_tag, int lanes) {
      constexpr int E = decltype(lanes_tag)::value;
      auto go = [&](auto items_tag) {
        constexpr int U = decltype(items_tag)::value;
        launch_slices<2, T>(a, p, lanes, rope_direct_kernel<T, E, U>, kThreads, U);
      };
      if (per_thread == 4) go(std::integral_constant<int, 4>{});
      else if (per_thread == 1) go(std::integral_constant<int, 1>{});
      else go(std::integral_constant<int, kDirectDefaultItems>{});
    });
  });
}

}  // namespace kwb::rope
