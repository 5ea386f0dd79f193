// The norm weight gradients (reference/norm_weight_grad_fp64.hpp) in fp64 on the GPU, from x and dy
// as the device holds them: what rmsnorm_bwd's, layernorm_bwd's and qk_norm_bwd's device oracles
// (Op::device_unaligned_oracle) give for their dweight (and dbias), so that a large case samples
// its dx rows instead of bringing every row to the host.
//
// Plain code: one thread per row for its statistics, one thread per column and chunk of rows for
// the sums, the chunks added on the host in order (the same bits on every run). The ops' host
// oracles stay the ground truth: tests/gpu/norm_weight_grad_device_oracle_test.cpp compares them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/types.hpp"
#include "reference/norm_weight_grad_fp64.hpp"

namespace kwb::ref {

// x and dy: [rows, cols] row-major in `dtype` (bf16, fp16 or fp32). Synchronises `stream`;
// throws CudaError on a CUDA failure.
NormWeightGrads norm_weight_grads_fp64_gpu(const void* x, const void* dy, DType dtype,
                                           std::int64_t rows, std::int64_t cols, NormStats kind,
                                           double eps, cudaStream_t stream);

}  // namespace kwb::ref
