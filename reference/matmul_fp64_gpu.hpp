// The GPU path of the oracles' fp64 GEMM (reference/matmul_fp64.hpp): plain CUDA kernels, one
// output element per thread over shared-memory tiles, that make exactly the roundings of the CPU
// loop in its order (explicit __dmul_rn / __dadd_rn, so that nvcc contracts nothing into an FMA).
// Its results are the CPU's bit for bit (tests/gpu/matmul_fp64_gpu_test.cpp proves it on odd
// shapes, every transpose, alpha, beta and the magnitudes); the CPU loop stays the ground truth.
//
// matmul_fp64 calls it by itself for products of at least kGpuMinMultiplyAdds on a thread that
// named a device (the worker's); it is exposed for the tests, which force it on at any size.
#pragma once

#include <cstdint>

#include "reference/matmul_fp64.hpp"

namespace kwb::ref {

// C = alpha op(A) op(B) + beta C as matmul_fp64 defines it, with the magnitudes when `magnitudes`
// holds both outputs, summed in blocks of `k_block` terms of k (matmul_fp64_k_blocks: alpha each
// block, beta the first, 1 after) or, with k_block 0, in one block (matmul_fp64).
// Runs on the device the calling thread named for the oracles (set_oracle_gpu_device,
// harness/catalogue/oracle_device.hpp), which must be its current one: allocates, copies
// (pageable), launches on a stream of its own and synchronises it, frees. Returns false, C and the
// magnitudes untouched, where it could not run: no device named on this thread, no driver, out of
// device memory, a product too tall for its grid, any CUDA error (an unexpected one is noted once
// per process on stderr; the error is cleared). The caller then computes on the CPU. Throws
// std::runtime_error only when copying a result back failed after part of C may have been written
// and beta != 0 (the CPU could not redo the product from the C it was given).
bool matmul_fp64_gpu(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b,
                     double* c, std::int64_t ldc, double alpha, double beta,
                     TermMagnitudes magnitudes = {}, std::int64_t k_block = 0);

// Products the GPU path has completed in this process (the tests check that a dispatch used it).
std::int64_t matmul_fp64_gpu_runs();

}  // namespace kwb::ref
