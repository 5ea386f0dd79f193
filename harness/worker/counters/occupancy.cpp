// Theoretical occupancy (see occupancy.hpp).
#include "harness/worker/counters/occupancy.hpp"

#include <algorithm>

namespace kwb {
namespace {

std::int64_t round_up(std::int64_t v, std::int64_t unit) { return unit > 0 ? (v + unit - 1) / unit * unit : v; }

}  // namespace

SmLimits sm_limits(const cudaDeviceProp& p) {
  SmLimits sm;
  sm.sm_count = p.multiProcessorCount;
  sm.max_warps = p.warpSize > 0 ? p.maxThreadsPerMultiProcessor / p.warpSize : 0;
  sm.max_blocks = p.maxBlocksPerMultiProcessor;
  sm.registers = p.regsPerMultiprocessor;
  sm.max_registers_per_block = p.regsPerBlock;
  sm.shared_bytes = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
  sm.reserved_shared_bytes = static_cast<std::int64_t>(p.reservedSharedMemPerBlock);
  return sm;
}

void fill_occupancy(KernelLaunch& launch, const SmLimits& sm) {
  launch.blocks_per_sm = 0;
  launch.theoretical_occupancy = 0;
  launch.waves = 0;
  const std::int64_t threads = launch.threads_per_block();
  if (threads <= 0 || sm.max_warps <= 0 || sm.sm_count <= 0) return;
  const std::int64_t warps = (threads + 31) / 32;
  std::int64_t blocks = std::min<std::int64_t>(sm.max_blocks, sm.max_warps / warps);
  if (launch.registers_per_thread > 0) {
    const std::int64_t per_warp = round_up(launch.registers_per_thread * 32, sm.register_unit);
    // The launch check counts the block's warps rounded up to whole partitions.
    const std::int64_t partitions = std::max(sm.sub_partitions, 1);
    if (sm.max_registers_per_block > 0 && per_warp * round_up(warps, partitions) > sm.max_registers_per_block) return;
    // Each partition holds whole warps of its own quarter of the registers: 40 registers a thread
    // fit 12 warps a partition (48 an SM), not 65536 / 1280 = 51.
    const std::int64_t warps_per_sm = sm.registers / partitions / per_warp * partitions;
    blocks = std::min(blocks, warps_per_sm / warps);
  }
  const std::int64_t shared = launch.static_shared_bytes + launch.dynamic_shared_bytes;
  if (shared > 0 || sm.reserved_shared_bytes > 0) {
    const std::int64_t per_block = round_up(shared + sm.reserved_shared_bytes, sm.shared_unit);
    blocks = std::min(blocks, per_block > 0 ? sm.shared_bytes / per_block : blocks);
  }
  if (blocks <= 0) return;
  launch.blocks_per_sm = blocks;
  launch.theoretical_occupancy = static_cast<double>(blocks * warps) / sm.max_warps;
  launch.waves = static_cast<double>(launch.blocks()) / static_cast<double>(blocks * sm.sm_count);
}

}  // namespace kwb
