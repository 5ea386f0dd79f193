// The launch of fused_v1 (rope_fwd and rope_bwd): the dtype, lane width and unroll dispatched.
// Its kernels are compiled in this file alone: the variants' registration files of rope_fwd and
// rope_bwd only declare the launcher (one copy of each kernel in the catalogue, not one per file).
#include "kernels/rope_fwd/rope_rotate.cuh"

namespace kwb::rope {

void launch_rotate(const LaunchArgs& a, const Rotation& r) {
  const std::int64_t items_per_block = a.tunables ? a.tunable("items") : kDefaultItemsPerBlock;
  const std::int64_t unroll = a.tunables ? a.tunable("unroll") : kDefaultUnroll;
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    RotateParams p = rotate_params<T>(a, r);
    const int lanes = lanes_for(p.half, sizeof(T));
    p.tokens_per_block = tokens_per_block_for(p.heads + p.kv_heads, p.half, lanes, items_per_block);
    p.by_chunks = FastDiv(static_cast<unsigned>(p.half / lanes));
    p.by_per_token = FastDiv(static_cast<unsigned>((p.heads + p.kv_heads) * (p.half / lanes)));
    const auto blocks = static_cast<unsigned>((p.tokens + p.tokens_per_block - 1) / p.tokens_per_block);
    const auto shared = static_cast<std::size_t>(p.tokens_per_block) * 2 * p.half * sizeof(float);
    auto go = [&](auto lanes_tag) {
      constexpr int E = decltype(lanes_tag)::value;
      if constexpr (E * sizeof(T) <= 16) {
        if (unroll == 4)
          rope_rotate_kernel<T, E, 4><<<blocks, kThreads, shared, a.stream>>>(p);
        else if (unroll == 1)
          rope_rotate_kernel<T, E, 1><<<blocks, kThreads, shared, a.stream>>>(p);
        else
          rope_rotate_kernel<T, E, kDefaultUnroll><<<blocks, kThreads, shared, a.stream>>>(p);
      }
    };
    switch (lanes) {
      case 8: go(std::integral_constant<int, 8>{}); break;
      case 4: go(std::integral_constant<int, 4>{}); break;
      case 2: go(std::integral_constant<int, 2>{}); break;
      default: go(std::integral_constant<int, 1>{}); break;
    }
  });
}

}  // namespace kwb::rope
