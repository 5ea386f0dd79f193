// cross_entropy's per-row terms in fp64 on the GPU, from the whole logits as the device holds
// them: what the op's device oracle (Op::device_unaligned_oracle) sums into the scalar loss, so
// that a large case samples its gradient rows instead of bringing every logit to the host.
//
// Plain code: one block per row, every thread a strided share of the row in fp64, reduced in a
// fixed order (the same bits on every run). The host oracle (reference/cross_entropy.cpp) stays
// the ground truth: tests/gpu/cross_entropy_device_oracle_test.cpp compares the two.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "harness/catalogue/types.hpp"

namespace kwb::ref {

// Per row r of logits [tokens, vocab] (dtype bf16, fp16 or fp32) with int32 labels:
//   loss[r]      = log(sum_v exp(x_v)) - x[label]                  (0 for a label that does not count)
//   magnitude[r] = |max| + log(sum_v exp(x_v - max)) + |x[label]| + sqrt(vocab)   (0 likewise)
// as the host oracle computes them. Synchronises `stream`; throws CudaError on a CUDA failure.
void cross_entropy_rows_fp64_gpu(const void* logits, DType dtype, const std::int32_t* labels, std::int64_t tokens,
                                 std::int64_t vocab, std::vector<double>& loss, std::vector<double>& magnitude,
                                 cudaStream_t stream);

}  // namespace kwb::ref
