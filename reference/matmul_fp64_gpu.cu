// The GPU path of the oracles' fp64 GEMM (reference/matmul_fp64_gpu.hpp): one kernel, one output
// element per thread, and the host code that feeds it and falls back cleanly.
//
// Bit-identical to the CPU loop (reference/matmul_fp64.cpp, rows_kernel) because each element
// makes the same roundings in the same order:
//   per block of k: acc = 0; for kk in the block, in order: t = a_ik * b_kj; acc = acc + t
//                   (with magnitudes also |t| and t * t summed the same way);
//                   c = alpha * acc + (beta_block == 0 ? 0 : beta_block * c)
// with __dmul_rn / __dadd_rn, which nvcc never fuses into an FMA (a plain `acc += a * b` would be,
// by default). The shared-memory tiles only move operands; the sum is walked in k order and the
// tile's zero padding past k is never added. Transposed operands are read in place (the CPU copies
// them into plain form first: the same values).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/oracle_device.hpp"
#include "reference/matmul_fp64_gpu.hpp"
#include "reference/oracle_gpu_support.hpp"

namespace kwb::ref {

namespace {

constexpr int kTile = 16;  // a block computes a kTile x kTile tile of C, kTile terms of k per step

// An operand as the kernel reads it: stored packed (ld = its stored width), maybe transposed.
struct DeviceOperand {
  const double* data = nullptr;
  std::int64_t ld = 0;
  bool transposed = false;
};

// tile[r][c] = op(X)[r0 + r, c0 + c] inside rows x cols, 0 outside (never summed). A transposed
// operand swaps which thread index walks which dim, so consecutive threads read consecutive
// addresses either way.
__device__ void load_tile(double (&tile)[kTile][kTile + 1], const DeviceOperand& x,
                          std::int64_t rows, std::int64_t cols, std::int64_t r0, std::int64_t c0) {
  const int r = x.transposed ? threadIdx.x : threadIdx.y;
  const int c = x.transposed ? threadIdx.y : threadIdx.x;
  const std::int64_t gr = r0 + r, gc = c0 + c;
  double v = 0.0;
  if (gr < rows && gc < cols) v = x.transposed ? x.data[gc * x.ld + gr] : x.data[gr * x.ld + gc];
  tile[r][c] = v;
}

// C (m x n, packed) as the CPU loop makes it; see the file comment. c is read only when beta != 0,
// the magnitudes likewise.
template <bool kMagnitudes>
__global__ void matmul_fp64_kernel(std::int64_t m, std::int64_t n, std::int64_t k,
                                   std::int64_t k_block, DeviceOperand a, DeviceOperand b,
                                   double* c, double* abs_sum, double* sum_sq, double alpha,
                                   double beta) {
  __shared__ double a_tile[kTile][kTile + 1];  // (TILE_M, TILE_K), +1 against bank conflicts
  __shared__ double b_tile[kTile][kTile + 1];  // (TILE_K, TILE_N)
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t i = row0 + threadIdx.y, j = col0 + threadIdx.x;
  const bool inside = i < m && j < n;
  double c_val = 0.0, abs_val = 0.0, sq_val = 0.0;
  if (inside && beta != 0.0) {
    c_val = c[i * n + j];
    if constexpr (kMagnitudes) abs_val = abs_sum[i * n + j], sq_val = sum_sq[i * n + j];
  }
  double block_beta = beta;
  for (std::int64_t kb = 0;; kb += k_block) {
    const std::int64_t k_end = kb + k_block < k ? kb + k_block : k;
    double acc = 0.0, abs_acc = 0.0, sq_acc = 0.0;
    for (std::int64_t k0 = kb; k0 < k_end; k0 += kTile) {
      load_tile(a_tile, a, m, k_end, row0, k0);
      load_tile(b_tile, b, k_end, n, k0, col0);
      __syncthreads();
      const int steps = static_cast<int>(k_end - k0 < kTile ? k_end - k0 : kTile);
      for (int kk = 0; kk < steps; ++kk) {
        const double t = __dmul_rn(a_tile[threadIdx.y][kk], b_tile[kk][threadIdx.x]);
        acc = __dadd_rn(acc, t);
        if constexpr (kMagnitudes) {
          abs_acc = __dadd_rn(abs_acc, fabs(t));
          sq_acc = __dadd_rn(sq_acc, __dmul_rn(t, t));
        }
      }
      __syncthreads();
    }
    c_val =
        __dadd_rn(__dmul_rn(alpha, acc), block_beta == 0.0 ? 0.0 : __dmul_rn(block_beta, c_val));
    if constexpr (kMagnitudes) {
      abs_val = __dadd_rn(abs_acc, block_beta == 0.0 ? 0.0 : __dmul_rn(block_beta, abs_val));
      sq_val = __dadd_rn(sq_acc, block_beta == 0.0 ? 0.0 : __dmul_rn(block_beta, sq_val));
    }
    block_beta = 1.0;
    if (k_end >= k) break;
  }
  if (!inside) return;
  c[i * n + j] = c_val;
  if constexpr (kMagnitudes) abs_sum[i * n + j] = abs_val, sum_sq[i * n + j] = sq_val;
}

std::atomic<std::int64_t> g_runs{0};
constexpr const char* kMatmulSource = "reference/matmul_fp64_gpu.cu";

// rows x cols doubles of pitch `ld` (elements) on the host <-> packed on the device; one plain
// copy where the host rows are packed too (the oracles' usual case).
cudaError_t upload(double* device, const double* host, std::int64_t rows, std::int64_t cols,
                   std::int64_t ld, cudaStream_t stream) {
  const std::size_t width = static_cast<std::size_t>(cols) * sizeof(double);
  if (ld == cols)
    return cudaMemcpyAsync(device, host, width * static_cast<std::size_t>(rows),
                           cudaMemcpyHostToDevice, stream);
  return cudaMemcpy2DAsync(device, width, host, static_cast<std::size_t>(ld) * sizeof(double),
                           width, static_cast<std::size_t>(rows), cudaMemcpyHostToDevice, stream);
}
cudaError_t download(double* host, std::int64_t ld, const double* device, std::int64_t rows,
                     std::int64_t cols, cudaStream_t stream) {
  const std::size_t width = static_cast<std::size_t>(cols) * sizeof(double);
  if (ld == cols)
    return cudaMemcpyAsync(host, device, width * static_cast<std::size_t>(rows),
                           cudaMemcpyDeviceToHost, stream);
  return cudaMemcpy2DAsync(host, static_cast<std::size_t>(ld) * sizeof(double), device, width,
                           width, static_cast<std::size_t>(rows), cudaMemcpyDeviceToHost, stream);
}

}  // namespace

std::int64_t matmul_fp64_gpu_runs() { return g_runs.load(); }

bool matmul_fp64_gpu(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b,
                     double* c, std::int64_t ldc, double alpha, double beta,
                     TermMagnitudes magnitudes, std::int64_t k_block) {
  if (m <= 0 || n <= 0) return true;  // nothing to compute, as on the CPU
  if (k_block <= 0) k_block = std::max<std::int64_t>(k, 1);
  const bool with_mag = magnitudes.abs_sum != nullptr && magnitudes.sum_sq != nullptr;
  if (!on_oracle_device()) return false;
  const std::int64_t row_tiles = (m + kTile - 1) / kTile, col_tiles = (n + kTile - 1) / kTile;
  if (row_tiles > 65535 || col_tiles > 0x7fffffff)
    return false;  // the grid's limits: the CPU does it

  // The operands as stored: A is m x k, or k x m when transposed; B k x n, or n x k.
  const std::int64_t a_rows = a.transposed ? k : m, a_cols = a.transposed ? m : k;
  const std::int64_t b_rows = b.transposed ? n : k, b_cols = b.transposed ? k : n;
  const std::size_t mn = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  auto failed = [](cudaError_t e, const char* step) {
    note_unexpected(kMatmulSource, e, step);
    cudaGetLastError();  // cleared: the caller's next check must not see ours
    return false;
  };
  Scratch s;
  double *da = nullptr, *db = nullptr, *dc = nullptr, *dabs = nullptr, *dsq = nullptr;
  cudaError_t e = s.create_stream();
  if (e != cudaSuccess) return failed(e, "create a stream");
  if ((e = s.allocate(&da, static_cast<std::size_t>(a_rows * a_cols))) != cudaSuccess ||
      (e = s.allocate(&db, static_cast<std::size_t>(b_rows * b_cols))) != cudaSuccess ||
      (e = s.allocate(&dc, mn)) != cudaSuccess ||
      (with_mag &&
       ((e = s.allocate(&dabs, mn)) != cudaSuccess || (e = s.allocate(&dsq, mn)) != cudaSuccess)))
    return failed(e, "cudaMalloc");

  // The operands, and C (with its magnitudes) only where beta reads it.
  const char* copy_in = "copy the operands to the device";
  if (k > 0 && ((e = upload(da, a.data, a_rows, a_cols, a.ld, s.stream())) != cudaSuccess ||
                (e = upload(db, b.data, b_rows, b_cols, b.ld, s.stream())) != cudaSuccess))
    return failed(e, copy_in);
  if (beta != 0.0 &&
      ((e = upload(dc, c, m, n, ldc, s.stream())) != cudaSuccess ||
       (with_mag && ((e = upload(dabs, magnitudes.abs_sum, m, n, ldc, s.stream())) != cudaSuccess ||
                     (e = upload(dsq, magnitudes.sum_sq, m, n, ldc, s.stream())) != cudaSuccess))))
    return failed(e, copy_in);

  const DeviceOperand dev_a{da, a_cols, a.transposed}, dev_b{db, b_cols, b.transposed};
  const dim3 block(kTile, kTile),
      grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles));
  if (with_mag)
    matmul_fp64_kernel<true><<<grid, block, 0, s.stream()>>>(m, n, k, k_block, dev_a, dev_b, dc,
                                                             dabs, dsq, alpha, beta);
  else
    matmul_fp64_kernel<false><<<grid, block, 0, s.stream()>>>(m, n, k, k_block, dev_a, dev_b, dc,
                                                              nullptr, nullptr, alpha, beta);
  if ((e = cudaGetLastError()) != cudaSuccess) return failed(e, "launch the kernel");
  if ((e = cudaStreamSynchronize(s.stream())) != cudaSuccess) return failed(e, "run the kernel");

  // The results back. Nothing of the caller's is written before this point; a failure here with
  // beta != 0 may have overwritten part of the C the CPU would need to redo the product.
  if ((e = download(c, ldc, dc, m, n, s.stream())) != cudaSuccess ||
      (with_mag &&
       ((e = download(magnitudes.abs_sum, ldc, dabs, m, n, s.stream())) != cudaSuccess ||
        (e = download(magnitudes.sum_sq, ldc, dsq, m, n, s.stream())) != cudaSuccess)) ||
      (e = cudaStreamSynchronize(s.stream())) != cudaSuccess) {
    if (beta == 0.0) return failed(e, "copy the results to the host");
    cudaGetLastError();
    throw std::runtime_error(
        std::string("the GPU fp64 reference (reference/matmul_fp64_gpu.cu) failed while "
                    "copying its result to the host: ") +
        cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
        "); the oracle's output is incomplete. Run again with KWB_ORACLE_GPU=0 to "
        "keep the oracles on the CPU.");
  }
  ++g_runs;
  return true;
}

}  // namespace kwb::ref
