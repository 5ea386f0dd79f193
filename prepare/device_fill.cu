// Counter-based random fill: splitmix64 of the element index, Box-Muller for normals.
#include "prepare/device_fill.hpp"

#include "catalogue/device_types.cuh"
#include "catalogue/host_tensor.hpp"

namespace kwb {
namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1]: never 0, so log() in Box-Muller stays finite.
__device__ __forceinline__ float unit_uniform(std::uint64_t bits) {
  return (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
}

template <class T>
__global__ void fill_random_kernel(T* out, std::int64_t count, int kind, float a, float b,
                                   std::uint64_t key) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(i)));
    const float u1 = unit_uniform(h);
    float value;
    if (kind == 0) {  // normal(a, b)
      const float u2 = unit_uniform(splitmix64(h));
      value = a + b * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    } else {  // uniform [a, b)
      value = a + (b - a) * (u1 - 1.0f / 16777216.0f);
    }
    out[i] = from_float<T>(value);
  }
}

template <class T>
cudaError_t launch_fill(void* ptr, std::int64_t count, const Distribution& d, std::uint64_t key,
                        cudaStream_t stream) {
  const int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((count + threads - 1) / threads, 65536);
  if (count == 0) return cudaSuccess;
  fill_random_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<T*>(ptr), count, d.kind == Distribution::Kind::normal ? 0 : 1,
      static_cast<float>(d.a), static_cast<float>(d.b), key);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_random(void* ptr, std::int64_t count, DType dtype, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream) {
  const std::uint64_t key = seed * 0xD1B54A32D192ED03ull + stream_id * 0x8CB92BA72F3D8DD7ull;
  cudaError_t status = cudaErrorInvalidValue;
  dispatch_dtype(dtype, [&](auto tag) { status = launch_fill<decltype(tag)>(ptr, count, dist, key, stream); });
  return status;
}

cudaError_t poison(void* ptr, std::size_t bytes, cudaStream_t stream) {
  return cudaMemsetAsync(ptr, kPoisonByte, bytes, stream);
}

}  // namespace kwb
