#include "harness/worker/prepare/group_inputs.hpp"

#include <cuda_runtime_api.h>

#include <cmath>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/parallel_chunks.hpp"

namespace kwb {
namespace {

// Copies the sampled slabs of a device tensor to the host, packed (see harness/worker/verify/sampling.hpp):
// one 2D copy per run of consecutive indices, each covering every outer index at once.
std::vector<unsigned char> gather_slabs(const void* device, const TensorSpec& t, std::size_t esize,
                                        const std::vector<std::int64_t>& indices) {
  std::int64_t packed = static_cast<std::int64_t>(esize) * static_cast<std::int64_t>(indices.size());
  for (std::size_t d = 0; d < t.dims.size(); ++d)
    if (static_cast<int>(d) != t.sample_dim) packed *= t.dims[d];
  std::vector<unsigned char> host(static_cast<std::size_t>(packed));
  const auto* src = static_cast<const unsigned char*>(device);
  for (const SlabCopy& c : slab_copies(t.dims, t.sample_dim, indices, esize)) {
    // One plain copy per slab when there is one, or when a pitch is beyond what cudaMemcpy2D
    // takes (cudaDevAttrMaxPitch is 2^31 - 1 bytes on current GPUs).
    constexpr std::int64_t kMaxPitch = 2147483647;
    if (c.height > 1 && (c.src_pitch > kMaxPitch || c.dst_pitch > kMaxPitch)) {
      for (std::int64_t row = 0; row < c.height; ++row)
        cuda_check(cudaMemcpy(host.data() + c.dst_offset + row * c.dst_pitch,
                              src + c.src_offset + row * c.src_pitch, c.width, cudaMemcpyDeviceToHost),
                   "copy sampled slabs to host");
      continue;
    }
    if (c.height == 1) {
      cuda_check(cudaMemcpy(host.data() + c.dst_offset, src + c.src_offset, c.width, cudaMemcpyDeviceToHost),
                 "copy sampled slabs to host");
      continue;
    }
    cuda_check(cudaMemcpy2D(host.data() + c.dst_offset, c.dst_pitch, src + c.src_offset, c.src_pitch,
                            c.width, c.height, cudaMemcpyDeviceToHost),
               "copy sampled slabs to host (2D)");
  }
  return host;
}

}  // namespace

std::vector<unsigned char> copy_for_verification(const SamplePlan& plan, const void* device, const TensorSpec& t,
                                                 std::size_t esize) {
  if (plan.gathers(t)) return gather_slabs(device, t, esize, plan.indices);
  std::vector<unsigned char> host(t.numel() * esize);
  cuda_check(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost), "copy tensor to host");
  return host;
}

HostTensor decode_for_oracle(const SamplePlan& plan, const TensorSpec& t, ElemType type,
                             const std::vector<unsigned char>& raw) {
  const std::int64_t count = plan.elements(t);
  HostTensor h;
  h.name = t.name;
  h.dims = plan.dims(t);
  h.values.resize(static_cast<std::size_t>(count));
  // Over the host's cores: a large weight (525 M elements at 128256 x 4096) took 3.2 s on one.
  const std::size_t esize = elem_size(type);
  parallel_chunks(count, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    decode_elements(raw.data() + static_cast<std::size_t>(begin) * esize, type, end - begin, h.values.data() + begin);
  });
  return h;
}

}  // namespace kwb
