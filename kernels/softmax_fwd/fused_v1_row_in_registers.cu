// softmax_fwd fused_v1_row_in_registers: one block per row, the row held in registers.
//
// Why it should be fast: x is read once and y written once (the op's minimum traffic), with
// 16-byte accesses at any cols (scalar head and tail, kernels/softmax_fwd/online_softmax.cuh).
// Each thread first takes the max of its own elements (no exp), then its sum of exp(x - max)
// (one exp per element); the block combines the (max, sum) pairs with the online rule in ONE
// block reduction (two barriers) instead of a max reduction followed by a sum reduction. The
// output pass recomputes exp (a second exp per element) rather than keeping fp32 copies,
// which would double the registers of a bf16 row.
//
// Napkin math (H100, bf16): the copy ceiling ~3.0 TB/s is ~3.4 elements per clock per SM at
// 4 bytes each; two ex2 per element use ~40% of the SFU's 16 per clock, so memory stays the
// limit. Launch plan as rmsnorm's fused_v3 (98-104% of copy at 4096-16384 cols): rows up to
// 1024 vectors take the fewest vectors per thread at <= 256 threads; longer rows 4 vectors
// per thread and up to 1024 threads, so one block holds at most 64 KiB of row
// (kSoftmaxRegisterRowBytes: 32768 bf16/fp16 or 16384 fp32 elements). Longer rows are
// refused: fused_v3_cluster_split_row and fused_v2_online_two_pass cover them.
// Expected: >= 90% of copy from 4096 cols up; ~80% at 1024 cols (blocks of 128 threads spend
// a larger share in the reduction, as rmsnorm's v3 does there).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/softmax_fwd/online_softmax.cuh"
#include "reference/rows_cols_op.hpp"
#include "reference/softmax.hpp"

namespace kwb {
namespace {

constexpr int kMaxThreads = 1024;

// VPT: 16-byte vectors per thread, a compile-time count so the row stays in registers.
template <class T, int VPT>
__global__ void __launch_bounds__(kMaxThreads) softmax_fwd_v1(const T* __restrict__ x, T* __restrict__ y, int cols) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ MaxSum scratch[32];
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * cols;
  const T* xr = x + offset;
  T* yr = y + offset;
  const RowSplit<T> split = split_row(xr, cols);
  const P* xb = reinterpret_cast<const P*>(xr + split.head);
  P* yb = reinterpret_cast<P*>(yr + split.head);

  P row[VPT];  // (VPT, E): this thread's body vectors, vector i at index threadIdx.x + i * blockDim.x
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < split.nvec) row[i] = xb[idx];
  }
  const bool has_edge = static_cast<int>(threadIdx.x) < split.edge_count();
  const int edge_col = split.edge_col(threadIdx.x);
  const float edge = has_edge ? to_float(xr[edge_col]) : -INFINITY;

  // This thread's max (no exp), then its sum of exp(x - max): one exp per element.
  float max = edge;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (threadIdx.x + i * blockDim.x < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) max = fmaxf(max, to_float(row[i].v[e]));
    }
  float sum = has_edge ? exp_shifted(edge, max) : 0.0f;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (threadIdx.x + i * blockDim.x < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) sum += exp_shifted(to_float(row[i].v[e]), max);
    }
  const MaxSum total = block_combine({max, sum}, scratch);
  const float inv_sum = 1.0f / total.sum;

  if (has_edge) yr[edge_col] = from_float<T>(exp_shifted(edge, total.max) * inv_sum);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < split.nvec) {
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(exp_shifted(to_float(row[i].v[e]), total.max) * inv_sum);
      yb[idx] = out;
    }
  }
}

struct LaunchPlan {
  int vectors_per_thread = 1;
  int threads = 32;
};

// nullopt: the row does not fit in one block's registers.
std::optional<LaunchPlan> plan_for(std::int64_t cols, std::size_t elem_bytes) {
  if (cols * static_cast<std::int64_t>(elem_bytes) > kSoftmaxRegisterRowBytes) return std::nullopt;
  const std::int64_t per_vector = 16 / static_cast<std::int64_t>(elem_bytes);
  const std::int64_t nvec = cols / per_vector;  // a misaligned row has fewer, never more
  LaunchPlan p;
  std::int64_t threads;
  if (nvec <= 1024) {
    while ((nvec + p.vectors_per_thread - 1) / p.vectors_per_thread > 256) p.vectors_per_thread *= 2;
    threads = (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread;
  } else {
    p.vectors_per_thread = 4;
    threads = (nvec + 3) / 4;
  }
  threads = std::max(threads, 2 * (per_vector - 1));  // one thread per head or tail element
  if (threads > kMaxThreads) return std::nullopt;
  p.threads = static_cast<int>((threads + 31) / 32 * 32);
  return p;
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols shape = RowsCols::of(a.shape);
  const auto rows = static_cast<unsigned>(shape.rows);
  const auto cols = static_cast<int>(shape.cols);
  const auto plan = plan_for(cols, sizeof(T));
  if (!plan) return;  // refused before launch; see refuse()
  auto go = [&](auto vpt_tag) {
    constexpr int VPT = decltype(vpt_tag)::value;
    softmax_fwd_v1<T, VPT><<<rows, plan->threads, 0, a.stream>>>(a.tensor<const T>("x"),
                                                                  a.tensor<T>("y"), cols);
  };
  switch (plan->vectors_per_thread) {
    case 1: go(std::integral_constant<int, 1>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 4>{}); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v1_row_in_registers",
    .role = Role::fused,
    .description = "one block per row held in registers, 16-byte vectors at any cols, one (max, sum) reduction",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if (auto why = refuse_rows_beyond_grid(rows)) return why;
          if (!plan_for(cols, dtype_size(dtype)))
            return "a row over 64 KiB (32768 bf16/fp16 or 16384 fp32 elements) does not fit in one block's "
                   "registers; fused_v3_cluster_split_row (up to 512 KiB) and fused_v2_online_two_pass (any "
                   "length) cover it";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
