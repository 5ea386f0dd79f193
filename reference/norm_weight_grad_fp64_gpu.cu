// The norm weight gradients in fp64 on the GPU (reference/norm_weight_grad_fp64_gpu.hpp).
#include "reference/norm_weight_grad_fp64_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/device_types.cuh"
#include "reference/oracle_gpu_support.hpp"

namespace kwb::ref {
namespace {

constexpr int kThreads = 128;
// Rows per partial sum, at least: a column of a million head vectors is a thousand threads' work,
// not one's. More where the chunks would pass the grid's 65535 in y.
constexpr std::int64_t kMinChunkRows = 1024;
constexpr std::int64_t kMaxChunks = 65535;

// Every storage type's values are exact in float, and so in double.
template <class T>
struct RowLoad {  // element c of one row
  const T* row;
  __device__ double operator()(std::int64_t c) const { return to_float(row[c]); }
};

template <class T>
struct MatrixLoad {  // element (r, c) of a [rows, cols] matrix
  const T* data;
  std::int64_t cols;
  __device__ double operator()(std::int64_t r, std::int64_t c) const { return to_float(data[r * cols + c]); }
};

template <class T>
__global__ void __launch_bounds__(kThreads)
    row_stats_kernel(const T* x, std::int64_t rows, std::int64_t cols, NormStats kind, double eps,
                     NormRowStats* out) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (r < rows) out[r] = norm_row_stats(RowLoad<T>{x + r * cols}, cols, kind, eps);
}

// Thread (column c, chunk k): the sums of column c over rows [k chunk_rows, (k + 1) chunk_rows).
template <class T>
__global__ void __launch_bounds__(kThreads)
    column_sums_kernel(const T* x, const T* dy, const NormRowStats* stats, std::int64_t rows,
                       std::int64_t cols, std::int64_t chunk_rows, NormColumnSums* partial) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::int64_t k = blockIdx.y;
  if (c >= cols) return;
  const std::int64_t begin = k * chunk_rows,
                     end = begin + chunk_rows < rows ? begin + chunk_rows : rows;
  partial[k * cols + c] =
      norm_column_sums(MatrixLoad<T>{x, cols}, MatrixLoad<T>{dy, cols}, stats, begin, end, cols, c);
}

template <class T>
std::vector<NormColumnSums> column_partials(const void* x, const void* dy, std::int64_t rows,
                                            std::int64_t cols, NormStats kind, double eps,
                                            cudaStream_t stream) {
  const std::int64_t chunk_rows = std::max(kMinChunkRows, (rows + kMaxChunks - 1) / kMaxChunks);
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  Scratch scratch;
  NormRowStats* stats = nullptr;
  NormColumnSums* partial = nullptr;
  cuda_check(scratch.allocate(&stats, static_cast<std::size_t>(rows)),
             "cudaMalloc (norm weight gradients)");
  cuda_check(scratch.allocate(&partial, static_cast<std::size_t>(chunks * cols)),
             "cudaMalloc (norm weight gradients)");
  const auto* xt = static_cast<const T*>(x);
  const auto* dyt = static_cast<const T*>(dy);
  row_stats_kernel<T>
      <<<static_cast<unsigned>((rows + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
          xt, rows, cols, kind, eps, stats);
  cuda_check(cudaGetLastError(), "launch (norm weight gradients: row statistics)");
  const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                  static_cast<unsigned>(chunks));
  column_sums_kernel<T>
      <<<grid, kThreads, 0, stream>>>(xt, dyt, stats, rows, cols, chunk_rows, partial);
  cuda_check(cudaGetLastError(), "launch (norm weight gradients: column sums)");
  std::vector<NormColumnSums> host(static_cast<std::size_t>(chunks * cols));
  cuda_check(cudaMemcpyAsync(host.data(), partial, host.size() * sizeof(NormColumnSums),
                             cudaMemcpyDeviceToHost, stream),
             "copy norm weight gradient partials");
  cuda_check(cudaStreamSynchronize(stream), "synchronize (norm weight gradients)");
  return host;
}

}  // namespace

NormWeightGrads norm_weight_grads_fp64_gpu(const void* x, const void* dy, DType dtype,
                                           std::int64_t rows, std::int64_t cols, NormStats kind,
                                           double eps, cudaStream_t stream) {
  NormWeightGrads g;
  if (rows <= 0 || cols <= 0) {  // no row: every sum is 0
    g.dweight = g.dweight_abs = g.dweight_rss = g.dbias = g.dbias_abs =
        std::vector<double>(cols > 0 ? cols : 0, 0.0);
    return g;
  }
  std::vector<NormColumnSums> partial;
  dispatch_dtype(dtype, [&](auto zero) {
    partial = column_partials<decltype(zero)>(x, dy, rows, cols, kind, eps, stream);
  });
  const std::int64_t chunks = static_cast<std::int64_t>(partial.size()) / cols;
  for (std::int64_t c = 0; c < cols; ++c) {
    NormColumnSums s;
    for (std::int64_t k = 0; k < chunks; ++k)
      add_column_sums(s, partial[static_cast<std::size_t>(k * cols + c)]);
    append_column(g, s);
  }
  return g;
}

}  // namespace kwb::ref
