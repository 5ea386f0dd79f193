// What the host reads of a group's tensors: the sampled slabs of the tensors aligned with the
// sample axis (or every element), copied from the device and decoded to fp64. Shared by the case
// runner (the group it runs) and the prefetch of the next group (group_prefetch.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/verify/sampling.hpp"

namespace kwb {

// The bytes of `t` (on the device, elements of `esize` bytes) that verification and the oracle
// read under `plan`: its sampled slabs packed, or all of it. Synchronous.
std::vector<unsigned char> copy_for_verification(const SamplePlan& plan, const void* device, const TensorSpec& t,
                                                 std::size_t esize);

// Those bytes decoded: a host tensor at the plan's dims of `t`. Host work only.
HostTensor decode_for_oracle(const SamplePlan& plan, const TensorSpec& t, ElemType type,
                             const std::vector<unsigned char>& raw);

}  // namespace kwb
