// Device-side input generation and output poisoning.
//
// Inputs are drawn on the GPU from a counter-based hash of (seed, stream, element): a 256 MB
// tensor fills in well under a millisecond, the same seed always gives the same tensor, and no
// input is ever zero-filled.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "catalogue/registry.hpp"

namespace kwb {

// Fill `count` elements of `dtype` at `device_ptr` with draws from `dist`.
// `stream_id` separates the tensors of one case so they are independent.
cudaError_t fill_random(void* device_ptr, std::int64_t count, DType dtype, const Distribution& dist,
                        std::uint64_t seed, std::uint64_t stream_id, cudaStream_t stream);

// Write the poison byte over `bytes` bytes (see host_tensor.hpp: a NaN in every dtype).
cudaError_t poison(void* device_ptr, std::size_t bytes, cudaStream_t stream);

}  // namespace kwb
