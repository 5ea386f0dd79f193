// Counter-based random fill: splitmix64 of the element index, Box-Muller for normals; integer,
// position-id and mask draws from harness/worker/prepare/draws.hpp; permutations and offsets from the host.
#include "harness/worker/prepare/device_fill.hpp"

#include <stdexcept>
#include <type_traits>
#include <vector>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/worker/prepare/draws.hpp"
#include "harness/worker/prepare/host_generators.hpp"

namespace kwb {
namespace {

// Uniform in (0, 1]: never 0, so log() in Box-Muller stays finite.
__device__ __forceinline__ float unit_uniform(std::uint64_t bits) {
  return (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
}

template <class T>
__device__ __forceinline__ void store(T* out, float value) {
  if constexpr (std::is_same_v<T, bool>) {
    *out = value != 0.0f;
  } else if constexpr (std::is_integral_v<T>) {
    *out = static_cast<T>(value);
  } else {
    *out = from_float<T>(value);
  }
}

template <class T>
__global__ void fill_float_kernel(T* out, std::int64_t count, int kind, float a, float b,
                                  std::uint64_t key) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = draws::element_bits(key, static_cast<std::uint64_t>(i));
    const float u1 = unit_uniform(h);
    float value;
    if (kind == 0) {  // normal(a, b)
      const float u2 = unit_uniform(draws::splitmix64(h));
      value = a + b * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    } else {  // uniform [a, b)
      value = a + (b - a) * (u1 - 1.0f / 16777216.0f);
    }
    store(out + i, value);
  }
}

// integers, position ids and masks: exact integer draws shared with the host (draws.hpp).
template <class T>
__global__ void fill_discrete_kernel(T* out, std::int64_t count, Distribution d, std::uint64_t key) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t v = 0;
    switch (d.kind) {
      case Distribution::Kind::integers:
        v = draws::integer(key, i, static_cast<std::int64_t>(d.a), static_cast<std::int64_t>(d.b),
                           d.ignore_fraction, d.ignore_value);
        break;
      case Distribution::Kind::position_ids:
        v = draws::position_id(key, i, d.period, static_cast<std::int64_t>(d.a));
        break;
      default:  // mask
        v = draws::mask(key, i, d.a) ? 1 : 0;
        break;
    }
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(v);
    } else {
      out[i] = from_float<T>(static_cast<float>(v));
    }
  }
}

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 65536));
}

template <class T>
cudaError_t launch_fill(void* ptr, std::int64_t count, const Distribution& d, std::uint64_t key,
                        cudaStream_t stream) {
  using K = Distribution::Kind;
  if (d.kind == K::normal || d.kind == K::uniform) {
    if constexpr (std::is_integral_v<T>) {
      return cudaErrorInvalidValue;  // refused by distribution_problem before this
    } else {
      fill_float_kernel<T><<<blocks_for(count), 256, 0, stream>>>(
          static_cast<T*>(ptr), count, d.kind == K::normal ? 0 : 1, static_cast<float>(d.a),
          static_cast<float>(d.b), key);
    }
  } else {
    fill_discrete_kernel<T><<<blocks_for(count), 256, 0, stream>>>(static_cast<T*>(ptr), count, d, key);
  }
  return cudaGetLastError();
}

// Permutations, offsets and doubly stochastic blocks: drawn on the host, narrowed to the element
// type, copied.
cudaError_t copy_host_draws(void* ptr, const std::vector<double>& values, ElemType type, cudaStream_t stream) {
  std::vector<unsigned char> bytes(values.size() * elem_size(type));
  encode_elements(values.data(), type, static_cast<std::int64_t>(values.size()), bytes.data());
  const cudaError_t status = cudaMemcpyAsync(ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream);
  if (status != cudaSuccess) return status;
  return cudaStreamSynchronize(stream);  // `bytes` must outlive the copy
}

}  // namespace

cudaError_t fill_tensor(void* ptr, std::int64_t count, ElemType type, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream) {
  if (auto problem = distribution_problem(dist, type, count)) throw std::invalid_argument(*problem);
  if (dist.kind == Distribution::Kind::derived)
    throw std::invalid_argument("a derived input is computed by the op's derive_inputs, not drawn");
  if (count == 0) return cudaSuccess;
  const std::uint64_t key = draws::fill_key(seed, stream_id);
  const auto as_doubles = [](const std::vector<std::int64_t>& v) { return std::vector<double>(v.begin(), v.end()); };
  if (dist.kind == Distribution::Kind::permutation)
    return copy_host_draws(ptr, as_doubles(random_permutation(count, key)), type, stream);
  if (dist.kind == Distribution::Kind::offsets)
    return copy_host_draws(ptr, as_doubles(random_offsets(count, dist.total, key)), type, stream);
  if (dist.kind == Distribution::Kind::doubly_stochastic)
    return copy_host_draws(ptr, random_doubly_stochastic(count, dist.period, key), type, stream);
  cudaError_t status = cudaErrorInvalidValue;
  dispatch_elem(type, [&](auto tag) { status = launch_fill<decltype(tag)>(ptr, count, dist, key, stream); });
  return status;
}

cudaError_t fill_random(void* ptr, std::int64_t count, DType dtype, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream) {
  return fill_tensor(ptr, count, elem_type_of(dtype), dist, seed, stream_id, stream);
}

cudaError_t poison(void* ptr, std::size_t bytes, cudaStream_t stream) {
  return cudaMemsetAsync(ptr, kPoisonByte, bytes, stream);
}

cudaError_t poison(void* ptr, std::size_t bytes, ElemType type, cudaStream_t stream) {
  return cudaMemsetAsync(ptr, poison_byte(type), bytes, stream);
}

}  // namespace kwb
