// cross_entropy's per-row loss terms in fp64 on the GPU (reference/cross_entropy_fp64_gpu.hpp).
#include "reference/cross_entropy_fp64_gpu.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "harness/catalogue/cuda_check.hpp"
#include "reference/cross_entropy.hpp"

namespace kwb::ref {
namespace {

constexpr int kThreads = 256;

__device__ double to_double(float x) { return x; }
__device__ double to_double(__half x) { return __half2float(x); }
__device__ double to_double(__nv_bfloat16 x) { return __bfloat162float(x); }

// Tree reduction over the block's kThreads partials, in a fixed order; every thread gets the
// result. `op` combines two partials.
template <class Op>
__device__ double block_reduce(double value, double* shared, Op op) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const double result = shared[0];
  __syncthreads();  // the next reduction may overwrite shared[0]
  return result;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    row_terms_kernel(const T* logits, const std::int32_t* labels, std::int64_t vocab, double* loss, double* magnitude) {
  __shared__ double shared[kThreads];
  const std::int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  const std::int32_t label = labels[row];
  if (!cross_entropy_label_counts(label, vocab)) {  // the same for every thread of the block
    if (threadIdx.x == 0) loss[row] = magnitude[row] = 0;
    return;
  }
  double max = -INFINITY;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kThreads) max = fmax(max, to_double(x[v]));
  max = block_reduce(max, shared, [](double a, double b) { return fmax(a, b); });
  double sum = 0;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kThreads) sum += exp(to_double(x[v]) - max);
  sum = block_reduce(sum, shared, [](double a, double b) { return a + b; });
  if (threadIdx.x == 0) {
    const double log_sum = log(sum), x_label = to_double(x[label]);
    loss[row] = max + log_sum - x_label;
    magnitude[row] = fabs(max) + log_sum + fabs(x_label) + sqrt(static_cast<double>(vocab));
  }
}

// Device memory freed on every path.
struct DeviceDoubles {
  double* ptr = nullptr;
  explicit DeviceDoubles(std::int64_t count) {
    cuda_check(cudaMalloc(&ptr, static_cast<std::size_t>(count) * sizeof(double)), "cudaMalloc (cross_entropy device oracle)");
  }
  ~DeviceDoubles() { cudaFree(ptr); }
  DeviceDoubles(const DeviceDoubles&) = delete;
  DeviceDoubles& operator=(const DeviceDoubles&) = delete;
};

}  // namespace

void cross_entropy_rows_fp64_gpu(const void* logits, DType dtype, const std::int32_t* labels, std::int64_t tokens,
                                 std::int64_t vocab, std::vector<double>& loss, std::vector<double>& magnitude,
                                 cudaStream_t stream) {
  loss.assign(static_cast<std::size_t>(tokens), 0.0);
  magnitude.assign(static_cast<std::size_t>(tokens), 0.0);
  if (tokens == 0) return;
  DeviceDoubles d_loss(tokens), d_magnitude(tokens);
  const dim3 grid(static_cast<unsigned>(tokens));
  switch (dtype) {
    case DType::fp32:
      row_terms_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const float*>(logits), labels, vocab, d_loss.ptr,
                                                      d_magnitude.ptr);
      break;
    case DType::fp16:
      row_terms_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(logits), labels, vocab, d_loss.ptr,
                                                      d_magnitude.ptr);
      break;
    case DType::bf16:
      row_terms_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), labels, vocab,
                                                      d_loss.ptr, d_magnitude.ptr);
      break;
  }
  cuda_check(cudaGetLastError(), "launch (cross_entropy device oracle)");
  const auto bytes = static_cast<std::size_t>(tokens) * sizeof(double);
  cuda_check(cudaMemcpyAsync(loss.data(), d_loss.ptr, bytes, cudaMemcpyDeviceToHost, stream), "copy row losses");
  cuda_check(cudaMemcpyAsync(magnitude.data(), d_magnitude.ptr, bytes, cudaMemcpyDeviceToHost, stream),
             "copy row magnitudes");
  cuda_check(cudaStreamSynchronize(stream), "synchronize (cross_entropy device oracle)");
}

}  // namespace kwb::ref
