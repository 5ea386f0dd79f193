// What a pure read stream reaches at a given size, under kwb's two cold flushes: four of the
// ceiling's read kernels (read_blocks and read_unrolled, harness/worker/measure/stream_kernels.cuh)
// over N bytes, after a dirty flush (a memset of twice the L2) or a clean one (the memset, then
// the flush's own read sweep of another buffer). The best of these four kernels is a reference
// for a short memory-bound case's "% of the roof", not a proof of what any kernel can reach: the
// roof is measured at 1-2 GiB, where the ramp, the tail and the flush's write-back are a few
// percent; at 134 MB they are not.
//
//   # from the repository root (or build/kwb_probe_read_at_size, which the build makes)
//   nvcc -O3 -arch=sm_90 -std=c++17 -I. -o read_at_size scripts/probes/read_at_size.cu
//   ./read_at_size 134217728 805306368 [roof GB/s] [--kept-rows ROW_BYTES]...
//
// --kept-rows (repeatable): also read N bytes as the rows a mask keeps (mean pooling's pattern): a
// tensor of N / 0.75 bytes in rows of ROW_BYTES (a multiple of 512, up to 16384), of which a seeded
// draw keeps each with probability 3 in 4, read in memory order by the whole grid (a list of the
// kept rows; a block reads a row, 16 bytes a thread, block-stride over the list, one resident wave),
// and again in mean pooling's order (each block its own slice of rows, one 2 KB column block:
// read_row_slices), so that a kernel's figure can be read against both.
// GB/s count the kept bytes, so the line reads against the contiguous N bytes above it.
// Each pattern is read again with its loads hinted (ld.global.cs; an L2 evict_first policy:
// kernels/common/l2_hints.cuh), which under the dirty flush says what the write-back of the
// L2's dirty lines costs a read that does not evict them.
//
// Times come from CUDA events around each launch (the flush outside), median of 41 samples;
// the events' own cost is shown (an empty kernel between them) and taken off.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "harness/worker/measure/stream_kernels.cuh"
#include "kernels/common/l2_hints.cuh"

namespace {

using kwb::read_blocks;
using kwb::read_unrolled;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void empty_kernel() {}

using Method = std::pair<std::string, std::function<void()>>;  // a name, and one launch

// The hinted loads (kernels/common/l2_hints.cuh says why a read-only kernel may gain by them):
// does a read that marks its own lines first to go leave the dirty lines already in the L2 where
// they are, and so not pay their write-back (what the dirty flush charges a read of any size)?
namespace l2 = kwb::l2;

// read_blocks (stream_kernels.cuh) with the load chosen by L.
template <int UNROLL, kwb::l2::Hint L>
__global__ void read_blocks_with(const uint4* __restrict__ in, std::size_t n, unsigned* sink) {
  const std::uint64_t policy = L == kwb::l2::Hint::kEvictFirst ? kwb::l2::policy_evict_first() : 0;
  const std::size_t base = blockIdx.x * std::size_t{blockDim.x} * UNROLL + threadIdx.x;
  uint4 v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const std::size_t i = base + u * std::size_t{blockDim.x};
    v[u] = i < n ? kwb::l2::load16<L>(in + i, policy) : uint4{0, 0, 0, 0};
  }
  unsigned acc = 0;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc ^= kwb::fold(v[u]);
  if (acc == 0x9E3779B9u) *sink = acc;
}

// Reads the listed rows (rows[i] the i-th kept row, in memory order), a row a block at a time
// (blockDim.x vectors of 16 bytes: one a thread), UNROLL rows in flight, block-stride over the
// list: the grid reads one front of the kept rows, as read_unrolled reads one of all bytes.
template <int UNROLL>
__global__ void read_listed_rows(const uint4* __restrict__ in, const int* __restrict__ rows,
                                 std::size_t listed, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t r = blockIdx.x; r < listed; r += std::size_t{UNROLL} * gridDim.x) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t k = r + static_cast<std::size_t>(u) * gridDim.x;
      v[u] = k < listed ? in[std::size_t(rows[k]) * blockDim.x + threadIdx.x] : uint4{};
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= kwb::fold(v[u]);
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

// Mean pooling's pattern without its arithmetic: block (column block, slice) reads its slice's
// kept rows (mask[r] != 0), 16 bytes a thread of a 2 KB column block, ROWS rows' loads in flight,
// the next group's mask bytes read under this group's loads (as pooling::sum_kept_rows does).
template <int ROWS, kwb::l2::Hint L = kwb::l2::Hint::kNormal>
__global__ void read_row_slices(const uint4* __restrict__ in, const unsigned char* __restrict__ mask,
                                std::size_t all_rows, std::size_t row_vectors, std::size_t rows_per_slice,
                                unsigned* sink) {
  const std::size_t v = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t first = blockIdx.y * rows_per_slice;
  const std::size_t last = first + rows_per_slice < all_rows ? first + rows_per_slice : all_rows;
  if (v >= row_vectors || first >= last) return;
  auto kept_of = [&](std::size_t r0) {
    unsigned bits = 0;
#pragma unroll
    for (int u = 0; u < ROWS; ++u)
      if (r0 + u < last && mask[r0 + u]) bits |= 1u << u;
    return bits;
  };
  const std::uint64_t policy = L == kwb::l2::Hint::kEvictFirst ? kwb::l2::policy_evict_first() : 0;
  unsigned acc = 0, kept = kept_of(first);
  for (std::size_t r0 = first; r0 < last; r0 += ROWS) {
    uint4 x[ROWS];
#pragma unroll
    for (int u = 0; u < ROWS; ++u) x[u] = kept >> u & 1u ? kwb::l2::load16<L>(in + (r0 + u) * row_vectors + v, policy) : uint4{};
    const unsigned next = kept_of(r0 + ROWS);
#pragma unroll
    for (int u = 0; u < ROWS; ++u) acc ^= kwb::fold(x[u]);
    kept = next;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes, row_sizes;  // row_sizes: --kept-rows, repeatable
  double roof = 0;
  auto number = [&](const char* text, const char* what) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0)) {
      std::fprintf(stderr, "%s '%s': not a positive number. Usage: read_at_size BYTES... [ROOF_GBPS] [--kept-rows ROW_BYTES]...\n", what, text);
      std::exit(2);
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--kept-rows") {
      if (i + 1 == argc) {
        std::fprintf(stderr, "--kept-rows needs a row size in bytes (a multiple of 512, up to 16384)\n");
        return 2;
      }
      const auto row = static_cast<std::size_t>(number(argv[++i], "--kept-rows"));
      // A row is read by one block, a thread a 16-byte vector: whole warps, at most 1024 threads.
      if (row % 512 != 0 || row > 16384) {
        std::fprintf(stderr, "--kept-rows %s: give a multiple of 512 bytes up to 16384 (a block reads a row, a thread 16 bytes)\n", argv[i]);
        return 2;
      }
      row_sizes.push_back(row);
    } else if (arg.rfind("-", 0) == 0) {
      std::fprintf(stderr, "%s: unknown option (the only one is --kept-rows ROW_BYTES)\n", argv[i]);
      return 2;
    } else {
      const double v = number(argv[i], "argument");  // a size in bytes, or the roof in GB/s
      if (v > 1e5) sizes.push_back(static_cast<std::size_t>(v) / 16 * 16);
      else roof = v;
    }
  }
  if (sizes.empty()) sizes = {std::size_t{134217728}};
  int sms = 0, l2 = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  const std::size_t flush_bytes = std::max<std::size_t>(2 * std::size_t(l2), std::size_t{64} << 20);
  // The kept rows are drawn from a tensor 4/3 the size read.
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  const std::size_t most = row_sizes.empty() ? largest : largest / 3 * 4 + 16384;
  void *in = nullptr, *flush = nullptr, *clean = nullptr;
  unsigned* sink = nullptr;
  check(cudaMalloc(&in, most), "input");
  check(cudaMalloc(&flush, flush_bytes), "flush buffer");
  check(cudaMalloc(&clean, flush_bytes), "clean buffer");
  check(cudaMalloc(&sink, sizeof(unsigned)), "sink");
  check(cudaMemset(in, 0x3C, most), "fill");
  check(cudaMemset(clean, 0x5A, flush_bytes), "fill");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  unsigned char pattern = 0;
  auto do_flush = [&](bool dirty) {
    cudaMemsetAsync(flush, ++pattern, flush_bytes);
    if (!dirty) kwb::read_stream<<<sms * 4, 512>>>(static_cast<const uint4*>(clean), flush_bytes / 16, sink);
  };
  auto median_us = [&](const std::function<void()>& launch, bool dirty) {
    std::vector<float> t;
    for (int rep = 0; rep < 46; ++rep) {
      do_flush(dirty);
      check(cudaEventRecord(start), "record");
      launch();
      check(cudaGetLastError(), "launch");  // a launch that failed would time as the fastest
      check(cudaEventRecord(stop), "record");
      check(cudaEventSynchronize(stop), "sync");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
      if (rep >= 5) t.push_back(ms * 1000);  // the first five warm the clocks
    }
    std::sort(t.begin(), t.end());
    return double(t[t.size() / 2]);
  };
  const double events = median_us([] { empty_kernel<<<1, 32>>>(); }, true);
  std::printf("GPU: %d SMs, L2 %d MiB; events around an empty kernel: %.2f us (taken off below)\n", sms, l2 >> 20,
              events);
  const auto* src = static_cast<const uint4*>(in);
  // The best of `methods` after each flush, in GB/s over `counted` bytes; `what` names the pattern.
  auto report_best = [&](const std::string& what, const std::vector<Method>& methods, double counted) {
    for (bool dirty : {true, false}) {
      double best = 1e30;
      std::string best_name;
      for (const auto& [name, launch] : methods) {
        const double us = median_us(launch, dirty) - events;
        if (us < best) best = us, best_name = name;
      }
      const double gbps = counted / best / 1e3;
      std::printf("%8.1f MB %-5s %sbest %-28s %8.2f us %7.1f GB/s", counted / 1e6, dirty ? "dirty" : "clean",
                  what.c_str(), best_name.c_str(), best, gbps);
      if (roof > 0) std::printf("  %5.1f%% of %.0f", 100 * gbps / roof, roof);
      std::printf("\n");
    }
  };
  for (std::size_t bytes : sizes) {
    const std::size_t n = bytes / 16;
    const std::vector<Method> methods = {
        {"read_blocks<2>", [&] { read_blocks<2><<<unsigned((n + 511) / 512), 256>>>(src, n, sink); }},
        {"read_blocks<4>", [&] { read_blocks<4><<<unsigned((n + 1023) / 1024), 256>>>(src, n, sink); }},
        {"read_unrolled<4> 4x512", [&] { read_unrolled<uint4, 4><<<sms * 4, 512>>>(src, n, sink); }},
        {"read_unrolled<8> 2x512", [&] { read_unrolled<uint4, 8><<<sms * 2, 512>>>(src, n, sink); }},
    };
    report_best("", methods, double(bytes));
    // The same reads with their lines marked first to leave the L2 (l2_hints.cuh).
    const std::vector<Method> streaming = {
        {"read_blocks<2> ld.cs", [&] { read_blocks_with<2, l2::Hint::kStreaming><<<unsigned((n + 511) / 512), 256>>>(src, n, sink); }},
        {"read_blocks<4> ld.cs", [&] { read_blocks_with<4, l2::Hint::kStreaming><<<unsigned((n + 1023) / 1024), 256>>>(src, n, sink); }},
    };
    const std::vector<Method> evict_first = {
        {"read_blocks<2> L2 evict_first", [&] { read_blocks_with<2, l2::Hint::kEvictFirst><<<unsigned((n + 511) / 512), 256>>>(src, n, sink); }},
        {"read_blocks<4> L2 evict_first", [&] { read_blocks_with<4, l2::Hint::kEvictFirst><<<unsigned((n + 1023) / 1024), 256>>>(src, n, sink); }},
    };
    report_best("ld.global.cs: ", streaming, double(bytes));
    report_best("L2 evict_first policy: ", evict_first, double(bytes));
    for (std::size_t row_bytes : row_sizes) {
      // The kept rows of a tensor of bytes / 0.75, 3 in 4 drawn with a fixed seed (an LCG).
      const std::size_t row_vectors = row_bytes / 16, all_rows = bytes * 4 / 3 / row_bytes;
      std::vector<int> kept;
      unsigned long long state = 0x2545F4914F6CDD1DULL;
      for (std::size_t r = 0; r < all_rows; ++r) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        if ((state >> 33) % 4 != 0) kept.push_back(static_cast<int>(r));
      }
      int* rows = nullptr;
      check(cudaMalloc(&rows, kept.size() * sizeof(int)), "row list");
      check(cudaMemcpy(rows, kept.data(), kept.size() * sizeof(int), cudaMemcpyHostToDevice), "row list");
      // One resident wave of each kernel (the block-stride loop assumes every block runs from the
      // start): the runtime's occupancy at this block size.
      const int threads = static_cast<int>(row_vectors);
      int resident4 = 0, resident8 = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident4, read_listed_rows<4>, threads, 0), "occupancy");
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident8, read_listed_rows<8>, threads, 0), "occupancy");
      // Mean pooling's slices: one wave of 8 blocks of 128 threads an SM (fused_v3's residency),
      // 2 KB column blocks, the slices as many as fill the wave.
      std::vector<unsigned char> mask_bytes(all_rows, 0);
      for (int r : kept) mask_bytes[r] = 1;
      unsigned char* mask = nullptr;
      check(cudaMalloc(&mask, all_rows), "mask");
      check(cudaMemcpy(mask, mask_bytes.data(), all_rows, cudaMemcpyHostToDevice), "mask");
      const std::size_t column_blocks = (row_vectors + 127) / 128;
      const std::size_t slices = std::max<std::size_t>(1, std::size_t(sms) * 8 / column_blocks);
      const std::size_t rows_per_slice = (all_rows + slices - 1) / slices;
      const dim3 slice_grid{static_cast<unsigned>(column_blocks), static_cast<unsigned>(slices)};
      const std::vector<Method> listed = {
          {"read_listed_rows<4>", [&] { read_listed_rows<4><<<sms * resident4, threads>>>(src, rows, kept.size(), sink); }},
          {"read_listed_rows<8>", [&] { read_listed_rows<8><<<sms * resident8, threads>>>(src, rows, kept.size(), sink); }},
      };
      const std::vector<Method> sliced = {
          {"read_row_slices<4> 8x128", [&] { read_row_slices<4><<<slice_grid, 128>>>(src, mask, all_rows, row_vectors, rows_per_slice, sink); }},
          {"read_row_slices<8> 8x128", [&] { read_row_slices<8><<<slice_grid, 128>>>(src, mask, all_rows, row_vectors, rows_per_slice, sink); }},
      };
      // GB/s count the kept rows' bytes; the row list's and the mask's own reads are not counted.
      const double kept_bytes = double(kept.size()) * row_bytes;
      char what[160];
      std::snprintf(what, sizeof what, "kept rows of %zu B (%zu of %zu) in one front, %d/%d blocks an SM: ", row_bytes,
                    kept.size(), all_rows, resident4, resident8);
      report_best(what, listed, kept_bytes);
      std::snprintf(what, sizeof what, "the same rows in %zu slices x %zu column blocks (pooling's order): ", slices,
                    column_blocks);
      report_best(what, sliced, kept_bytes);
      const std::vector<Method> sliced_streaming = {
          {"read_row_slices<4> 8x128 ld.cs", [&] { read_row_slices<4, l2::Hint::kStreaming><<<slice_grid, 128>>>(src, mask, all_rows, row_vectors, rows_per_slice, sink); }},
          {"read_row_slices<8> 8x128 ld.cs", [&] { read_row_slices<8, l2::Hint::kStreaming><<<slice_grid, 128>>>(src, mask, all_rows, row_vectors, rows_per_slice, sink); }},
      };
      report_best("the same, ld.global.cs: ", sliced_streaming, kept_bytes);
      cudaFree(mask);
      cudaFree(rows);
    }
  }
  check(cudaGetLastError(), "launch");
  return 0;
}
