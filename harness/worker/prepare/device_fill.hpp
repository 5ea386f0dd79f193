// Device-side input generation and output poisoning.
//
// Inputs are drawn on the GPU from a counter-based hash of (seed, stream, element): a 256 MB
// tensor fills in well under a millisecond, the same seed always gives the same tensor, and no
// input is ever zero-filled. A permutation and monotone offsets are drawn on the host from the
// same hash (harness/worker/prepare/host_generators.hpp) and copied.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// Fill `count` elements of a concrete element type at `device_ptr` with draws from `dist`.
// `stream_id` separates the tensors of one case so they are independent. Throws
// std::invalid_argument when the distribution does not fit the type (distribution_problem).
// Host-drawn kinds synchronize `stream` before returning.
cudaError_t fill_tensor(void* device_ptr, std::int64_t count, ElemType type, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream);

// The same for a case dtype.
cudaError_t fill_random(void* device_ptr, std::int64_t count, DType dtype, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream);

// Write the poison byte over `bytes` bytes (see host_tensor.hpp: a NaN in every dtype).
cudaError_t poison(void* device_ptr, std::size_t bytes, cudaStream_t stream);
// Poison with the pattern of an element type (0x80 bytes for integers, see host_tensor.hpp).
cudaError_t poison(void* device_ptr, std::size_t bytes, ElemType type, cudaStream_t stream);

}  // namespace kwb
