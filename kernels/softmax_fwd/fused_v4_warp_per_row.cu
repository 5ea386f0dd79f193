// softmax_fwd fused_v4_warp_per_row: short rows, one warp per row, the row in registers.
//
// What it changes from fused_v1: at 1024 bf16 columns v1 runs one 128-thread block per row,
// and every row pays two __syncthreads and a shared-memory round trip for its reduction while
// its 2 KiB row is a small share of what the SM keeps in flight (rmsnorm's block-per-row
// kernels reach 81-85% of copy at 1024 columns). Here a warp owns a row: up to 8 vectors of
// 16 bytes per lane (rows up to 256 vectors: 2048 bf16/fp16 or 1024 fp32 elements; 16 would
// take 168 registers a lane in bf16), the
// (max, sum) pair is combined with shuffles only, and 4 rows share a 128-thread block, so no
// barrier is ever reached. One read, one write, 16-byte vectors at any cols (head and tail on
// the first lanes). Longer rows are refused: fused_v1_row_in_registers covers them.
// Expected: >= 90% of copy at 1024 columns (bf16 and fp32), about v1's figure at 2048 bf16.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/softmax_fwd/online_softmax.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kMaxVectorsPerLane = 8;

template <class T, int VPT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
softmax_fwd_v4(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, int cols) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  const int lane = threadIdx.x & 31;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= rows) return;  // a whole warp leaves together: no shuffle is left waiting
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const RowSplit<T> split = split_row(xr, cols);
  const P* xb = reinterpret_cast<const P*>(xr + split.head);
  P* yb = reinterpret_cast<P*>(yr + split.head);

  P part[VPT];  // (VPT, E): vector lane + 32 i of the row's body
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (lane + 32 * i < split.nvec) part[i] = xb[lane + 32 * i];
  const bool has_edge = lane < split.edge_count();
  const int edge_col = split.edge_col(lane);
  const float edge = has_edge ? to_float(xr[edge_col]) : -INFINITY;

  float max = edge;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (lane + 32 * i < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) max = fmaxf(max, to_float(part[i].v[e]));
    }
  float sum = has_edge ? exp_shifted(edge, max) : 0.0f;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (lane + 32 * i < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) sum += exp_shifted(to_float(part[i].v[e]), max);
    }
  const MaxSum total = warp_combine({max, sum});
  const float inv_sum = 1.0f / total.sum;

  if (has_edge) yr[edge_col] = from_float<T>(exp_shifted(edge, total.max) * inv_sum);
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (lane + 32 * i < split.nvec) {
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(exp_shifted(to_float(part[i].v[e]), total.max) * inv_sum);
      yb[lane + 32 * i] = out;
    }
}

// Vectors per lane (a power of two), or 0 when the row is past a warp's registers.
int vectors_per_lane(std::int64_t cols, std::size_t elem_bytes) {
  const std::int64_t nvec = (cols * static_cast<std::int64_t>(elem_bytes) + 15) / 16;
  int vpt = 1;
  while (vpt * 32 < nvec) vpt *= 2;
  return vpt <= kMaxVectorsPerLane ? vpt : 0;
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols shape = RowsCols::of(a.shape);
  const std::int64_t rows = shape.rows;
  const auto cols = static_cast<int>(shape.cols);
  const auto blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const int vpt = vectors_per_lane(cols, sizeof(T));
  if (vpt == 0) return;  // refused before launch; see refuse()
  auto go = [&](auto vpt_tag) {
    constexpr int VPT = decltype(vpt_tag)::value;
    softmax_fwd_v4<T, VPT><<<blocks, 32 * kWarpsPerBlock, 0, a.stream>>>(
        a.tensor<const T>("x"), a.tensor<T>("y"), rows, cols);
  };
  switch (vpt) {
    case 1: go(std::integral_constant<int, 1>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    case 4: go(std::integral_constant<int, 4>{}); break;
    default: go(std::integral_constant<int, 8>{}); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v4_warp_per_row",
    .role = Role::fused,
    .description = "short rows: one warp per row in registers, shuffles only (no barrier), 4 rows per block",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if ((rows + kWarpsPerBlock - 1) / kWarpsPerBlock > 2147483647)
            return "rows / 4 above 2^31-1 exceed the grid's x dimension";
          if (vectors_per_lane(cols, dtype_size(dtype)) == 0)
            return "a row over 4 KiB (2048 bf16/fp16 or 1024 fp32 elements) does not fit in one warp's registers; "
                   "fused_v1_row_in_registers covers it";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
