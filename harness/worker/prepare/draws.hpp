// The per-element draws of the generators, shared by the device fill kernels and the host (so
// CPU tests can check what the GPU draws, and whole-tensor generators use the same hash).
//
// Everything is a pure function of (key, element index): key = fill_key(seed, tensor index).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KWB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KWB_HOST_DEVICE inline
#endif

namespace kwb::draws {

KWB_HOST_DEVICE std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The key of one tensor of one case: tensors of a case are independent streams.
KWB_HOST_DEVICE std::uint64_t fill_key(std::uint64_t seed, std::uint64_t stream_id) {
  return seed * 0xD1B54A32D192ED03ull + stream_id * 0x8CB92BA72F3D8DD7ull;
}

// 64 random bits for element i.
KWB_HOST_DEVICE std::uint64_t element_bits(std::uint64_t key, std::uint64_t i) {
  return splitmix64(key ^ splitmix64(i));
}

// Uniform in [0, 1) with 53 random bits.
KWB_HOST_DEVICE double unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Uniform integer in [0, n) (n >= 1); the modulo bias is below 2^-32 for n < 2^32.
KWB_HOST_DEVICE std::int64_t below(std::uint64_t bits, std::int64_t n) {
  return static_cast<std::int64_t>(bits % static_cast<std::uint64_t>(n));
}

// integers: uniform in [low, high), except a fraction `ignore_fraction` of elements that hold
// `ignore_value` (labels the loss must skip).
KWB_HOST_DEVICE std::int64_t integer(std::uint64_t key, std::int64_t i, std::int64_t low,
                                     std::int64_t high, double ignore_fraction,
                                     std::int64_t ignore_value) {
  const std::uint64_t h = element_bits(key, static_cast<std::uint64_t>(i));
  if (ignore_fraction > 0 && unit_double(splitmix64(h ^ 0x5bd1e995ull)) < ignore_fraction)
    return ignore_value;
  return low + below(h, high - low);
}

// position_ids: element i is position (i % period) of sequence i / period, shifted by a start
// drawn per sequence in [0, max_start] (a chunk that continues a longer context).
KWB_HOST_DEVICE std::int64_t position_id(std::uint64_t key, std::int64_t i, std::int64_t period,
                                         std::int64_t max_start) {
  const std::int64_t seq = i / period;
  const std::int64_t start =
      max_start > 0 ? below(element_bits(key, static_cast<std::uint64_t>(seq)), max_start + 1) : 0;
  return start + i % period;
}

// mask: true with probability `true_fraction`.
KWB_HOST_DEVICE bool mask(std::uint64_t key, std::int64_t i, double true_fraction) {
  return unit_double(element_bits(key, static_cast<std::uint64_t>(i))) < true_fraction;
}

}  // namespace kwb::draws
