// The partials layout of the norm backward kernels (kernels/common/partial_layout.hpp): the
// position each thread stores an accumulator at maps back to that accumulator's column, every
// (accumulator, column) is reached exactly once, padding maps to -1, and the width stays within
// the workspace the variants reserve (padded_cols).
#include "kernels/common/partial_layout.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kwb::norm_backward {
namespace {

TEST(PartialLayout, EveryColumnOnceFromTheThreadsStorePositions) {
  for (int v : {1, 2, 4, 8})
    for (int vpt : {1, 2, 4})
      for (int cols_vectors : {1, 7, 31, 32, 33, 96, 512, 513, 1025, 2048}) {
        const int cols = cols_vectors * v, nvec = cols_vectors;
        const int tpr = ((nvec + vpt - 1) / vpt + 31) / 32 * 32;  // as plan_for
        for (int accumulators : {1, 2}) {
          const PartialLayout layout{tpr, vpt, v, cols, accumulators};
          ASSERT_LE(layout.width(), accumulators * padded_cols(cols)) << cols << " v " << v << " vpt " << vpt;
          std::vector<int> seen(static_cast<std::size_t>(accumulators) * cols, 0);
          int padding = 0;
          for (int position = 0; position < layout.width(); ++position) {
            int n = -1, column = -2;
            layout.column_of(position, n, column);
            ASSERT_GE(n, 0);
            ASSERT_LT(n, accumulators);
            if (column < 0) {
              ++padding;
              continue;
            }
            ASSERT_LT(column, cols);
            ++seen[static_cast<std::size_t>(n) * cols + column];
          }
          for (int count : seen) ASSERT_EQ(count, 1) << cols << " v " << v << " vpt " << vpt;
          EXPECT_EQ(padding, layout.width() - accumulators * cols);
          // The kernel's store: lane l (warp l / 32), vector i, element e of accumulator n.
          for (int n = 0; n < accumulators; ++n)
            for (int lane = 0; lane < tpr; lane += 7)
              for (int i = 0; i < vpt; ++i)
                for (int e = 0; e < v; ++e) {
                  int got_n = -1, column = -2;
                  const int position = (lane / 32) * (accumulators * vpt * v * 32) + ((n * vpt + i) * v + e) * 32 + lane % 32;
                  layout.column_of(position, got_n, column);
                  const int idx = lane + i * tpr;
                  EXPECT_EQ(got_n, n);
                  EXPECT_EQ(column, idx < nvec ? idx * v + e : -1);
                }
        }
      }
}

}  // namespace
}  // namespace kwb::norm_backward
