// rmsnorm_fwd plugin_v1_warp_per_row: a variant of a catalogue op, from a plugin. One warp per
// row (8 rows per 256-thread block): the warp's shuffle reduction needs no shared memory and no
// block barrier, which should help short rows (cols <= 2048), where kwb's one-block-per-row v1
// leaves most of its block idle. The op (its oracle, tolerance and work model) is kwb's own.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb_example {
namespace {

using namespace kwb;

constexpr int kWarpsPerBlock = 8;

template <class T>
__global__ void rmsnorm_warp_per_row(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                     std::int64_t rows, int cols, float eps) {
  const std::int64_t row = std::int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  float sum_sq = 0;
  for (int c = lane; c < cols; c += 32) {
    const float v = to_float(xr[c]);
    sum_sq += v * v;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, offset);
  const float inv_rms = rsqrtf(sum_sq / static_cast<float>(cols) + eps);
  for (int c = lane; c < cols; c += 32) yr[c] = from_float<T>(to_float(xr[c]) * inv_rms * to_float(w[c]));
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const auto blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rmsnorm_warp_per_row<T><<<blocks, kWarpsPerBlock * 32, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), rows, static_cast<int>(cols),
      static_cast<float>(kRmsNormEps));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "plugin_v1_warp_per_row",
    .role = Role::fused,
    .description = "one warp per row, shuffle reduction, no shared memory (an example plugin's variant)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if ((rows + kWarpsPerBlock - 1) / kWarpsPerBlock > 2147483647) return "more rows than one grid of warps holds";
          if (cols > 2147483647) return "cols above 2^31-1 overflow the int column index";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb_example
