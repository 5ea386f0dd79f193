// Theoretical occupancy (see occupancy.hpp).
#include "harness/worker/counters/occupancy.hpp"

#include <algorithm>
#include <limits>

namespace kwb {
namespace {

std::int64_t round_up(std::int64_t v, std::int64_t unit) { return unit > 0 ? (v + unit - 1) / unit * unit : v; }

}  // namespace

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
    if (per_warp * warps > sm.max_registers_per_block && sm.max_registers_per_block > 0) return;
    blocks = std::min(blocks, sm.registers / per_warp / warps);
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
