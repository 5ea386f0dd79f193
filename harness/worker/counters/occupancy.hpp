// Theoretical occupancy and waves of a kernel launch, from its block shape, registers and shared
// memory against one SM's limits: the figures Nsight Compute's launch statistics show, computed
// the way the CUDA occupancy calculator (cuda_occupancy.h) does: registers allocated per warp in
// units of 256 from each scheduler partition's quarter of the register file, shared memory per
// block in units of 128 bytes plus the driver's reserved 1 KiB.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/record/counters.hpp"

namespace kwb {

struct SmLimits {
  int sm_count = 0;
  int max_warps = 0;          // resident warps per SM (64 on Hopper)
  int max_blocks = 0;         // resident blocks per SM (32)
  int registers = 0;          // per SM (65536)
  int max_registers_per_block = 0;
  std::int64_t shared_bytes = 0;            // usable per SM (233472 on H100: 228 KiB)
  std::int64_t reserved_shared_bytes = 0;   // the driver's per block (1024)
  int register_unit = 256;    // registers are allocated per warp in units of this
  int sub_partitions = 4;     // the SM's scheduler partitions: each holds a quarter of the registers
  int shared_unit = 128;      // shared memory per block is allocated in units of this
};

// One SM's limits from the device's properties (cudaGetDeviceProperties).
SmLimits sm_limits(const cudaDeviceProp& p);

// Fills launch.blocks_per_sm, theoretical_occupancy and waves (all 0 when the block cannot run:
// too many registers or too much shared memory for one SM).
void fill_occupancy(KernelLaunch& launch, const SmLimits& sm);

}  // namespace kwb
