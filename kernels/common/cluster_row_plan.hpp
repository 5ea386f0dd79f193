// The host plan of a long row split over a thread-block cluster, each CTA's slice in shared
// memory (kernels/common/cluster_row_smem.cuh holds the device side and the launch): how many
// CTAs per row, how many 16-byte vectors each, and the shared memory that takes. Plain C++, so
// the CPU tests check the split (every vector covered once, slices on whole cache lines, the
// shrink for short rows, the refusals) without a GPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kwb::crow {

inline constexpr int kMaxClusterPortable = 8;
inline constexpr int kMaxCluster = 16;  // non-portable on sm_90 (H100/H200 allow 16)
// Dynamic shared memory one CTA may take (sm_90 allows 227 KB opt-in; a little left for the
// static scratch of the reductions).
inline constexpr std::int64_t kMaxSliceBytes = 220 * 1024;
// A cluster shrinks (halves) while half of it would still give each thread <= this many vectors:
// short rows then take fewer CTAs instead of many nearly empty ones.
inline constexpr std::int64_t kShrinkVectorsPerThread = 4;
// Slices start this many bytes apart from the row's first body vector, rounded up: a multiple of
// 128 keeps every CTA's loads and stores on whole 128-byte lines where the row's body starts on
// one (every row of a row-major tensor whose row is a multiple of 128 bytes). Without it, a
// vocabulary of 128256 bf16 split 8 ways gives slices of 32064 bytes and every odd rank starts
// 64 bytes into a line.
inline constexpr int kSliceAlignBytes = 128;

struct Plan {
  int cluster = 1;            // CTAs per row
  int threads = 128;          // per CTA
  int per_cta = 0;            // body vectors per CTA (the last CTAs may hold fewer, or none)
  std::size_t smem_bytes = 0; // dynamic shared memory per CTA: per_cta 16-byte vectors
};

// `max_cluster`: the cluster size for long rows (1, 2, 4, 8 or 16); shorter rows take the
// largest power of two below it that keeps them from being spread thin. `align_bytes` (a power of
// two, 16..4096): slices start a multiple of it apart (the last CTAs take what is left, maybe
// nothing). nullopt (with `why`): a slice does not fit in one CTA's shared memory, or the grid
// would overflow.
inline std::optional<Plan> plan_for(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, int max_cluster,
                                    int threads, std::string* why = nullptr, int align_bytes = kSliceAlignBytes) {
  const std::int64_t per_vector = 16 / static_cast<std::int64_t>(elem_bytes);
  const std::int64_t nvec = cols / per_vector;  // a misaligned row has fewer, never more
  auto fail = [&](std::string reason) -> std::optional<Plan> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (max_cluster < 1 || max_cluster > kMaxCluster || (max_cluster & (max_cluster - 1)) != 0)
    return fail("cluster size must be 1, 2, 4, 8 or 16");
  if (threads < 32 || threads > 1024 || threads % 32 != 0 || threads < 2 * (per_vector - 1))
    return fail("threads per CTA must be a multiple of 32 in [32, 1024]");
  if (align_bytes < 16 || align_bytes > 4096 || (align_bytes & (align_bytes - 1)) != 0)
    return fail("slice alignment must be a power of two from 16 to 4096 bytes");
  if (cols > 2147483647 - 16) return fail("cols above 2^31 - 17 exceed the kernel's int column index");
  Plan p;
  p.threads = threads;
  p.cluster = max_cluster;
  while (p.cluster > 1 && (nvec + p.cluster / 2 - 1) / (p.cluster / 2) <= kShrinkVectorsPerThread * threads)
    p.cluster /= 2;
  const std::int64_t align_vectors = align_bytes / 16;
  const std::int64_t even_share = (nvec + p.cluster - 1) / p.cluster;
  const std::int64_t per_cta = std::min(nvec, (even_share + align_vectors - 1) / align_vectors * align_vectors);
  const std::int64_t bytes = std::max<std::int64_t>(per_cta, 1) * 16;
  if (bytes > kMaxSliceBytes)
    return fail("a slice of " + std::to_string(per_cta * 16 / 1024) + " KiB (row / cluster of " +
                std::to_string(p.cluster) + ") exceeds one CTA's shared memory (220 KiB): take a larger cluster");
  if (rows * p.cluster > 2147483647) return fail("rows x cluster size exceed the grid's x dimension");
  p.per_cta = static_cast<int>(per_cta);
  p.smem_bytes = static_cast<std::size_t>(bytes);
  return p;
}

}  // namespace kwb::crow
