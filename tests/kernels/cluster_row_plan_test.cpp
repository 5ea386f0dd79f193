// crow::plan_for, the split of a long row over a thread-block cluster (softmax_fwd fused_v5 and
// fused_v6, cross_entropy fused_v3): every body vector in exactly one slice, slices a whole
// number of cache lines apart, the cluster shrinking for short rows, and the refusals. The
// kernels compute their slice as [min(nvec, rank * per_cta), min(nvec, v0 + per_cta)) (crow::Slice),
// which the coverage check below replays.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/cluster_row_plan.hpp"

namespace kwb::crow {
namespace {

// Vectors of each rank as the kernels take them.
std::vector<std::int64_t> slice_counts(std::int64_t nvec, const Plan& p) {
  std::vector<std::int64_t> counts;
  for (int rank = 0; rank < p.cluster; ++rank) {
    const std::int64_t v0 = std::min<std::int64_t>(nvec, static_cast<std::int64_t>(rank) * p.per_cta);
    const std::int64_t v1 = std::min<std::int64_t>(nvec, v0 + p.per_cta);
    counts.push_back(v1 - v0);
  }
  return counts;
}

TEST(ClusterRowPlan, SlicesCoverTheRowOnceAndStartOnWholeCacheLines) {
  // Vocabularies and hidden sizes of the catalogue's defaults and odd ones, bf16 and fp32.
  for (std::int64_t cols : {4096LL, 4100LL, 32000LL, 50257LL, 128256LL, 131072LL, 151936LL, 262144LL, 262147LL}) {
    for (std::size_t elem : {std::size_t{2}, std::size_t{4}}) {
      for (int cluster : {2, 4, 8, 16}) {
        SCOPED_TRACE("cols " + std::to_string(cols) + ", " + std::to_string(elem) + "-byte elements, cluster " +
                     std::to_string(cluster));
        const auto plan = plan_for(1024, cols, elem, cluster, 256);
        const std::int64_t nvec = cols / static_cast<std::int64_t>(16 / elem);
        if (!plan) {  // refused only where an even share does not fit in one CTA's shared memory
          EXPECT_GT((nvec + cluster - 1) / cluster * 16 + kSliceAlignBytes, kMaxSliceBytes);
          continue;
        }
        std::int64_t covered = 0;
        for (std::int64_t n : slice_counts(nvec, *plan)) covered += n;
        EXPECT_EQ(covered, nvec);
        if (plan->cluster > 1) EXPECT_EQ(plan->per_cta % (kSliceAlignBytes / 16), 0) << "per_cta " << plan->per_cta;
        EXPECT_EQ(plan->smem_bytes, static_cast<std::size_t>(std::max(plan->per_cta, 1)) * 16);
        EXPECT_LE(plan->cluster, cluster);
      }
    }
  }
}

TEST(ClusterRowPlan, VocabularyOf128256SplitEightWaysTakesWholeLines) {
  // The case the alignment is for: 16032 vectors, an even share of 2004 (32064 bytes, half a line
  // off at every odd rank) rounded up to 2008; the last CTA takes the 1976 left.
  const auto plan = plan_for(2048, 128256, 2, 8, 256);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->cluster, 8);
  EXPECT_EQ(plan->per_cta, 2008);
  EXPECT_EQ(slice_counts(16032, *plan).back(), 1976);
  // The previous split, kept as the slice_align=16 tunable.
  const auto unaligned = plan_for(2048, 128256, 2, 8, 256, nullptr, 16);
  ASSERT_TRUE(unaligned.has_value());
  EXPECT_EQ(unaligned->per_cta, 2004);
}

TEST(ClusterRowPlan, ShortRowsTakeFewerCtasAndOneCtaNeverPadsPastTheRow) {
  // 4096 bf16 = 512 vectors: 256 threads x 4 vectors cover it in one CTA.
  const auto one = plan_for(16384, 4096, 2, 8, 256);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->cluster, 1);
  EXPECT_EQ(one->per_cta, 512);
  // 4100 bf16: 512 vectors plus a scalar tail; a lone CTA holds exactly the row's vectors.
  const auto odd = plan_for(16384, 4100, 2, 8, 256);
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->cluster, 1);
  EXPECT_EQ(odd->per_cta, 512);
  // 5 columns: no vector at all, one CTA of scalars, still some shared memory to point at.
  const auto tiny = plan_for(3, 5, 2, 8, 256);
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->per_cta, 0);
  EXPECT_EQ(tiny->smem_bytes, 16u);
}

TEST(ClusterRowPlan, RefusesWhatCannotRunAndSaysWhy) {
  std::string why;
  // 262144 fp32 = 64 Ki vectors; a cluster of 2 gives 512 KiB slices.
  EXPECT_FALSE(plan_for(1024, 262144, 4, 2, 256, &why).has_value());
  EXPECT_NE(why.find("exceeds one CTA's shared memory"), std::string::npos) << why;
  EXPECT_FALSE(plan_for(1024, 4096, 2, 3, 256, &why).has_value());
  EXPECT_NE(why.find("cluster size"), std::string::npos) << why;
  EXPECT_FALSE(plan_for(1024, 4096, 2, 8, 100, &why).has_value());
  EXPECT_NE(why.find("threads per CTA"), std::string::npos) << why;
  EXPECT_FALSE(plan_for(1024, 4096, 2, 8, 256, &why, 48).has_value());
  EXPECT_NE(why.find("slice alignment"), std::string::npos) << why;
}

}  // namespace
}  // namespace kwb::crow
