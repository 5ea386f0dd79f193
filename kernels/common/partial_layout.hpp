// Where norm_backward_kernel (kernels/common/norm_backward.cuh) leaves a CTA's partial column
// sums, and how the second launch maps them back to columns. Host and device;
// tests/kernels/partial_layout_test.cpp checks that the map is a bijection onto the columns.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KWB_PARTIAL_LAYOUT_HD __host__ __device__
#else
#define KWB_PARTIAL_LAYOUT_HD
#endif

namespace kwb::norm_backward {

// The partials of one CTA in the threads' layout: warp w of a row group keeps a block of
// accumulators x VPT x V rows of 32 floats, and lane l of it stores accumulator n of its vector
// i, element e, at position ((w * accumulators + n) * VPT + i) * V + e) * 32 + l. Every store of
// the epilogue then writes 128 contiguous bytes per warp, at offsets that are constants of the
// kernel (column-major partials cost 16 scattered 4-byte stores per thread and vector, a large
// share of the kernel at 16384 columns; offsets scaled by the group's runtime
// width held ptxas to 64 registers and spilled). Lanes past the row store zeros. column_of maps a
// position back to (accumulator, column), or column -1 for padding; the second launch sums
// positions and stores through it.
struct PartialLayout {
  int tpr = 32, vpt = 1, v = 1, cols = 0, accumulators = 1;
  KWB_PARTIAL_LAYOUT_HD constexpr int width() const { return accumulators * vpt * v * tpr; }
  KWB_PARTIAL_LAYOUT_HD constexpr void column_of(int position, int& accumulator, int& column) const {
    const int per_lane = accumulators * vpt * v;
    const int lane_in_warp = position % 32, row = position / 32;
    const int warp = row / per_lane, k = row % per_lane;
    const int e = k % v, ni = k / v;
    const int i = ni % vpt;
    accumulator = ni / vpt;
    column = (warp * 32 + lane_in_warp + i * tpr) * v + e;
    if (column >= cols) column = -1;
  }
};
// A CTA's partials never need more than (cols + 128 x 8) floats per accumulator: tpr x VPT is at
// most the row's vectors plus 32 x VPT - 1 (VPT <= 4), and a vector holds at most 8 elements.
KWB_PARTIAL_LAYOUT_HD constexpr std::int64_t padded_cols(std::int64_t cols) { return cols + 128 * 8; }

}  // namespace kwb::norm_backward

#undef KWB_PARTIAL_LAYOUT_HD
