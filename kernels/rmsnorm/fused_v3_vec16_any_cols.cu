// rmsnorm_fwd fused_v3_vec16_any_cols: v2 with 16-byte accesses at any hidden size.
//
// v2 falls back to narrower accesses when cols is not a multiple of 16 bytes (cols = 4100 in
// bf16 runs 8-byte loads, well below 4096's bandwidth). Here every row is split
// into a head of up to 7 elements before its first 16-byte boundary, a body of 16-byte vectors
// and a short tail; head and tail are a few scalar accesses. The weight shares the row's
// offset, so its body loads take the widest access that the head length allows (16, 8, 4 or 2
// bytes, the same for the whole block). Long rows also get more threads (at most 4 vectors per
// thread above 1024 vectors) so that 16384-wide rows keep more loads in flight per SM.
// Expected: cols = 4100 as fast as 4096 (~98% of copy); 16384 faster than v2. Measured:
// docs/results.md.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/row_in_registers.cuh"
#include "kernels/rmsnorm/rms_row_vectors.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kMaxThreads = 1024;

// VPT: 16-byte vectors per thread, a compile-time count so the row stays in registers.
template <class T, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
rmsnorm_fwd_v3(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int cols,
               float eps) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * cols;

  // Row layout: [head | body of nvec 16-byte vectors | tail]; y shares x's alignment.
  const int misalign = static_cast<int>(reinterpret_cast<std::uintptr_t>(xr) & 15) / sizeof(T);
  const int head = min(cols, misalign == 0 ? 0 : E - misalign);
  const int nvec = (cols - head) / E;
  const int tail_start = head + nvec * E;
  const int w_align = head == 0 ? 16 : (head * sizeof(T)) & -(head * sizeof(T));  // lowest set bit
  const P* xb = reinterpret_cast<const P*>(xr + head);
  P* yb = reinterpret_cast<P*>(yr + head);

  P row[VPT];  // (VPT, E): this thread's body vectors
  float edge = 0;  // this thread's head or tail element (threads < head + tail)
  const int edge_count = head + (cols - tail_start);
  const int edge_col = threadIdx.x < head ? threadIdx.x : tail_start + (threadIdx.x - head);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < nvec) row[i] = xb[idx];
  }
  if (threadIdx.x < edge_count) edge = to_float(xr[edge_col]);

  float sum_sq = edge * edge;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    if (threadIdx.x + i * blockDim.x < nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float v = to_float(row[i].v[e]);
        sum_sq += v * v;
      }
    }
  }
  const float inv_rms = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);

  if (threadIdx.x < edge_count) yr[edge_col] = from_float<T>(edge * inv_rms * to_float(w[edge_col]));
  store_scaled_row(yb, row, inv_rms, threadIdx.x, blockDim.x, nvec,
                   [&](int idx) { return load_pack_aligned<T, E>(w + head + idx * E, w_align); });
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const auto plan = row_plan(cols, sizeof(T), kMaxThreads);
  if (!plan) return;  // refused before launch; see refuse()
  auto go = [&](auto vpt_tag) {
    constexpr int VPT = decltype(vpt_tag)::value;
    rmsnorm_fwd_v3<T, VPT><<<static_cast<unsigned>(rows), plan->threads, 0, a.stream>>>(
        a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), static_cast<int>(cols),
        static_cast<float>(kRmsNormEps));
  };
  // Only 1, 2 or 4 here; instantiating 8 and 16 would cost compile time for nothing.
  switch (plan->vectors_per_thread) {
    case 1: go(std::integral_constant<int, 1>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 4>{}); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "fused_v3_vec16_any_cols",
    .role = Role::fused,
    .description = "v2 + 16-byte body at any cols (scalar head/tail), more threads for long rows",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if (auto why = refuse_rows_beyond_grid(rows)) return why;
          if (!row_plan(cols, dtype_size(dtype), kMaxThreads))
            return "cols too long for 4 vectors per thread at 1024 threads; use "
                   "fused_v1_row_per_block";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
