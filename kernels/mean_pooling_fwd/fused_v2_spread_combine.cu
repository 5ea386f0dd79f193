// mean_pooling_fwd fused_v2_spread_combine: fused_v1's slices (kept tokens only, 16-byte packs,
// fp32 partials a slice: pooling::pool_slices) and a combine made cheap, from fused_v1's profile
// (2026-11-27 notebook): its combine took 6-19 us of 159-302 at the large shapes (19 us at b4
// s32768 d4096) because each of its blocks counted the whole sequence's mask a byte a thread, and
// each thread added up to 132 slices one after the other, plus 2 us of gap before it.
//   - The combine counts the mask 16 bytes a load, and spreads a column's slices over up to 8
//     warps, added in warp order (the same order every launch: deterministic, no atomics).
//   - It is a programmatic dependent launch (dependent_launch.cuh), allowed by each slice block as
//     it ends: its launch overlaps the slices' last blocks, and it counts the mask (an input)
//     before it waits for their partials. The 2 us gap between the kernels closes.
//   - `packs`: 16-byte packs of a row a thread reads, and `rows_in_flight` rows' loads a thread has
//     in flight. One pack wins where the hidden size takes 16-byte packs; where it takes single
//     elements (d 4099), 4 a thread (2 rows in flight) read 1.5x faster than fused_v1's one.
//     In bf16, 4 rows in flight beat fused_v1's 8 at both sizes swept, at 16 blocks a
//     multiprocessor (2026-11-27 notebook, "mean pooling's loads in flight", calls 2 and 3): 153.6
//     and 152.5 against 157.8 and 157.0 us at b16 s4096, 286.5 and 286.9 against 292.3 and 291.4 at
//     b4 s32768; in fp32, 8 beat 4 (543.1 against 551.5 us at b4 s32768). 16 a thread was 21-81%
//     slower, and 2 blocks a multiprocessor slower at every setting: neither is offered.
//   - `blocks_per_sm` is what the slices aim at, not what is resident: at its 60 registers (bf16's
//     default; fp32's, 61) 8 blocks of 128 threads fit a multiprocessor, so 16 runs two waves of
//     8, and the sweeps above mix load depth with the waves' count (2026-11-28 notebook). fused_v3
//     sizes its grid to one resident wave.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/mean_pooling_fwd/spread_combine.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::block_columns;
using pooling::kThreads;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  pooling::with_pack_and_rows<T>(a, p, [&]<class U, int E, int Packs, int Rows, l2::Hint H>() {
    const std::int64_t slices = pooling::slices_for(
        p, block_columns(E, Packs), std::min(multiprocessor_count(), pooling::kMostMultiprocessors),
        a.tunable("blocks_per_sm"));
    const std::int64_t rows_per_slice = (p.seq + slices - 1) / slices;
    float* partial = static_cast<float*>(a.workspace);
    const dim3 grid(
        static_cast<unsigned>(pooling::column_blocks(p.hidden, block_columns(E, Packs))),
        static_cast<unsigned>(slices), static_cast<unsigned>(p.batch));
    pooling::pool_slices<U, E, Rows, Packs, H>
        <<<grid, kThreads, 0, a.stream>>>(a.tensor<const U>("x"), a.tensor<const bool>("mask"),
                                          partial, p.seq, p.hidden, rows_per_slice);
    pooling::launch_combine<U>(a, p, partial, slices);
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v2_spread_combine",
    .role = Role::fused,
    .description = "fused_v1's slices with a combine that counts the mask 16 bytes a load and "
                   "spreads the slices "
                   "over warps, launched programmatically dependent (resident as the slices end)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = pooling::refuse_batch_beyond_grid,
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          return pooling::partial_bytes(
              p, block_columns(pooling::pack_for(p.hidden, dtype), 4));  // packs 4: widest
        },
    .tunables = pooling::slice_tunables(),
});

}  // namespace
}  // namespace kwb
