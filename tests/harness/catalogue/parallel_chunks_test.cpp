// Host work in fixed chunks: every element is visited once, the chunks depend on the count and
// the chunk size alone, and an exception in a chunk reaches the caller.
#include "harness/catalogue/parallel_chunks.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace kwb {
namespace {

TEST(ParallelChunks, VisitsEveryElementOnceInFixedChunks) {
  const std::int64_t n = 10 * 1000 + 7, chunk = 1000;
  std::vector<int> visits(static_cast<std::size_t>(n), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> bounds(static_cast<std::size_t>(chunk_count(n, chunk)));
  parallel_chunks(
      n,
      [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
        bounds[static_cast<std::size_t>(c)] = {begin, end};
        for (std::int64_t i = begin; i < end; ++i) ++visits[static_cast<std::size_t>(i)];
      },
      chunk);
  for (int v : visits) ASSERT_EQ(v, 1);
  ASSERT_EQ(bounds.size(), 11u);
  for (std::size_t c = 0; c < bounds.size(); ++c) {
    EXPECT_EQ(bounds[c].first, static_cast<std::int64_t>(c) * chunk);
    EXPECT_EQ(bounds[c].second, std::min<std::int64_t>(n, (static_cast<std::int64_t>(c) + 1) * chunk));
  }
  EXPECT_EQ(chunk_count(0, chunk), 0);
  parallel_chunks(0, [&](std::int64_t, std::int64_t, std::int64_t) { FAIL() << "no chunk of nothing"; }, chunk);
}

TEST(ParallelChunks, AChunksExceptionReachesTheCaller) {
  EXPECT_THROW(parallel_chunks(
                   100000,
                   [](std::int64_t c, std::int64_t, std::int64_t) {
                     if (c == 37) throw std::runtime_error("chunk 37");
                   },
                   100),
               std::runtime_error);
}

}  // namespace
}  // namespace kwb
