// What the GPU tests of attention's derived inputs share (attention_bwd's and
// attention_varlen_bwd's O and lse, made on the device from the case's Q, K and V): the case's
// tensors on the device with its first inputs copied as the device holds them (the host copies
// rounded alike, so that the oracle sees the same values), a tensor read back to fp64, and the
// check of a derived O and lse against the forward's fp64 oracle.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"

namespace kwb::test {

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 1)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// One device buffer per spec; the first `uploaded` of `inputs` copied in, and rounded to the dtype
// in place on the host.
struct DeviceTensors {
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<void*> pointers;
};
inline DeviceTensors upload_inputs(const std::vector<TensorSpec>& specs, DType dtype, std::vector<HostTensor>& inputs,
                                   std::size_t uploaded) {
  DeviceTensors t;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ElemType type = specs[i].elem_type(dtype);
    const std::size_t bytes = static_cast<std::size_t>(specs[i].numel()) * elem_size(type);
    t.buffers.push_back(std::make_unique<DeviceBuffer>(bytes));
    t.pointers.push_back(t.buffers.back()->ptr);
    if (i < uploaded) {
      std::vector<unsigned char> raw(bytes);
      encode_elements(inputs[i].values.data(), type, specs[i].numel(), raw.data());
      decode_elements(raw.data(), type, specs[i].numel(), inputs[i].values.data());
      cuda_check(cudaMemcpy(t.pointers[i], raw.data(), bytes, cudaMemcpyHostToDevice), "copy input");
    }
  }
  return t;
}

// A tensor of `spec` copied back from the device, decoded to fp64.
inline HostTensor read_back(const TensorSpec& spec, DType dtype, const void* device) {
  const ElemType type = spec.elem_type(dtype);
  std::vector<unsigned char> raw(static_cast<std::size_t>(spec.numel()) * elem_size(type));
  cuda_check(cudaMemcpy(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost), "copy back");
  HostTensor h{spec.name, spec.dims, std::vector<double>(static_cast<std::size_t>(spec.numel()))};
  decode_elements(raw.data(), type, spec.numel(), h.values.data());
  return h;
}

// The derived O and lse against the forward oracle's `want` (o, lse), for queries that see at most
// `keys` keys: O within its rounding to the dtype (1.25 u of it) and fp32's errors over the keys'
// sums (|v| < 6); lse within fp32's.
inline void expect_derived_forward(const HostTensor& o, const HostTensor& lse, const std::vector<HostTensor>& want,
                                   DType dtype, std::int64_t keys) {
  const double u = unit_roundoff(elem_type_of(dtype));
  for (std::size_t e = 0; e < want[0].values.size(); ++e)
    ASSERT_NEAR(o.values[e], want[0].values[e],
                1.25 * u * std::abs(want[0].values[e]) + 6 * static_cast<double>(keys) * 1e-6)
        << "o[" << e << "]";
  for (std::size_t e = 0; e < want[1].values.size(); ++e)
    ASSERT_NEAR(lse.values[e], want[1].values[e], 1e-5 * (1 + std::abs(want[1].values[e]))) << "lse[" << e << "]";
}

}  // namespace kwb::test
