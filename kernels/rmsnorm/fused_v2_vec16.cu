// rmsnorm_fwd fused_v2_vec16: v1 plus 16-byte accesses and the row held in registers.
//
// Each thread loads its share of the row with 16-byte vector loads (8 bf16/fp16 or 4 fp32 per
// load), keeps it in registers, and after the block reduction writes y from those registers:
// x is read from DRAM exactly once and the load pipeline moves 16 bytes per instruction
// instead of 2. Several independent loads per thread are in flight before the first use.
// Rows whose length is not a multiple of 16 bytes (cols = 4100 in bf16) take the widest
// access that divides the row (8, 4 or 2 bytes), so every row start stays aligned.
// Expected: close to the copy ceiling for rows of 1K elements and more.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kPreferredThreads = 256;
constexpr int kMaxVectorsPerThread = 16;

// VPT: vectors per thread, a compile-time count so the row stays in registers.
template <class T, int E, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
rmsnorm_fwd_v2(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int cols,
               float eps) {
  __shared__ float scratch[32];
  using P = Pack<T, E>;
  const int nvec = cols / E;
  const P* xr = reinterpret_cast<const P*>(x + static_cast<std::int64_t>(blockIdx.x) * cols);
  const P* wv = reinterpret_cast<const P*>(w);
  P* yr = reinterpret_cast<P*>(y + static_cast<std::int64_t>(blockIdx.x) * cols);

  P row[VPT];  // (VPT, E): this thread's vectors of the row
  float sum_sq = 0;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < nvec) row[i] = xr[idx];
  }
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
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < nvec) {
      const P wp = wv[idx];
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e)
        out.v[e] = from_float<T>(to_float(row[i].v[e]) * inv_rms * to_float(wp.v[e]));
      yr[idx] = out;
    }
  }
}

struct LaunchPlan {
  int elements_per_vector = 1;
  int vectors_per_thread = 1;
  int threads = 32;
};

// Widest access (up to 16 bytes) that divides the row; fewest vectors per thread that fit in
// kPreferredThreads, else more threads, up to the block limit.
std::optional<LaunchPlan> plan_for(std::int64_t cols, std::size_t elem_bytes) {
  LaunchPlan p;
  for (int e = static_cast<int>(16 / elem_bytes); e >= 1; e /= 2)
    if (cols % e == 0) {
      p.elements_per_vector = e;
      break;
    }
  const std::int64_t nvec = cols / p.elements_per_vector;
  std::int64_t threads = 0;
  for (int vpt = 1; vpt <= kMaxVectorsPerThread; vpt *= 2) {
    p.vectors_per_thread = vpt;
    threads = (nvec + vpt - 1) / vpt;
    if (threads <= kPreferredThreads) break;
  }
  if (threads > kMaxThreads) return std::nullopt;
  p.threads = static_cast<int>(std::max<std::int64_t>(32, (threads + 31) / 32 * 32));
  return p;
}

template <class T, int E>
void launch_with_vpt(const LaunchArgs& a, const RowsCols& s, const LaunchPlan& p) {
  auto go = [&](auto vpt_tag) {
    constexpr int VPT = decltype(vpt_tag)::value;
    rmsnorm_fwd_v2<T, E, VPT><<<static_cast<unsigned>(s.rows), p.threads, 0, a.stream>>>(
        a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), static_cast<int>(s.cols),
        static_cast<float>(kRmsNormEps));
  };
  with_vectors_per_thread(p.vectors_per_thread, go);
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols s = RowsCols::of(a.shape);
  const auto plan = plan_for(s.cols, sizeof(T));
  if (!plan) return;  // refused before launch; see refuse()
  switch (plan->elements_per_vector) {
    case 1: launch_with_vpt<T, 1>(a, s, *plan); break;
    case 2: launch_with_vpt<T, 2>(a, s, *plan); break;
    case 4: launch_with_vpt<T, 4>(a, s, *plan); break;
    default:
      if constexpr (sizeof(T) == 2) launch_with_vpt<T, 8>(a, s, *plan);
      break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "fused_v2_vec16",
    .role = Role::fused,
    .description = "16-byte loads/stores, row kept in registers: x read from DRAM once",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if (auto why = refuse_rows_beyond_grid(rows)) return why;
          if (!plan_for(cols, dtype_size(dtype)))
            return "cols too long to hold in registers (more than 16 vectors per thread at 1024 "
                   "threads); use fused_v1_row_per_block";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
