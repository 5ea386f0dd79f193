// Constants of the softmax_fwd contract that its kernels, the op and the tests share.
#pragma once

#include <cstdint>

namespace kwb {

// Largest row, in bytes, that one block keeps in registers: 1024 threads x 4 vectors of 16
// bytes (16 data registers per thread, so ~40 registers and one 1024-thread block per SM).
// bf16/fp16 rows up to 32768 elements, fp32 rows up to 16384.
inline constexpr std::int64_t kSoftmaxRegisterRowBytes = 1024 * 4 * 16;

// Blocks of a thread-block cluster that share one row in fused_v3_cluster_split_row (8 is the
// portable maximum on sm_90): rows up to 8 x 64 KiB = 512 KiB, i.e. 262144 bf16/fp16 elements
// or 131072 fp32 elements.
inline constexpr int kSoftmaxMaxClusterBlocks = 8;
inline constexpr std::int64_t kSoftmaxClusterRowBytes = kSoftmaxMaxClusterBlocks * kSoftmaxRegisterRowBytes;

// Longest row of the op's own sweeps (a 256K vocabulary).
inline constexpr std::int64_t kSoftmaxLongestRow = 262144;

}  // namespace kwb
