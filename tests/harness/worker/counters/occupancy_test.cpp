// Theoretical occupancy and waves of a launch against H100's limits, on CPU: the known answers of
// the CUDA occupancy calculator, then random launches checked against the CUDA toolkit's own
// calculator (cuda_occupancy.h, header-only host code: the oracle, not a copy), and the launches
// that cannot run at all read 0.
#include "harness/worker/counters/occupancy.hpp"

#include <cuda_occupancy.h>
#include <gtest/gtest.h>

#include <random>

namespace kwb {
namespace {

// An H100 SXM's SM (cudaGetDeviceProperties on the lent H100).
SmLimits h100() {
  SmLimits sm;
  sm.sm_count = 132;
  sm.max_warps = 64;
  sm.max_blocks = 32;
  sm.registers = 65536;
  sm.max_registers_per_block = 65536;
  sm.shared_bytes = 233472;  // 228 KiB
  sm.reserved_shared_bytes = 1024;
  return sm;
}

// The properties cudaGetDeviceProperties gives on the lent H100 (those the limits read).
cudaDeviceProp h100_properties() {
  cudaDeviceProp p{};
  p.multiProcessorCount = 132;
  p.warpSize = 32;
  p.maxThreadsPerMultiProcessor = 2048;
  p.maxBlocksPerMultiProcessor = 32;
  p.regsPerMultiprocessor = 65536;
  p.regsPerBlock = 65536;
  p.sharedMemPerMultiprocessor = 233472;
  p.reservedSharedMemPerBlock = 1024;
  return p;
}

TEST(Occupancy, TheSmLimitsComeFromTheDeviceProperties) {
  const SmLimits got = sm_limits(h100_properties()), want = h100();
  EXPECT_EQ(got.sm_count, want.sm_count);
  EXPECT_EQ(got.max_warps, want.max_warps);
  EXPECT_EQ(got.max_blocks, want.max_blocks);
  EXPECT_EQ(got.registers, want.registers);
  EXPECT_EQ(got.max_registers_per_block, want.max_registers_per_block);
  EXPECT_EQ(got.shared_bytes, want.shared_bytes);
  EXPECT_EQ(got.reserved_shared_bytes, want.reserved_shared_bytes);
  EXPECT_EQ(got.register_unit, 256);
  EXPECT_EQ(got.sub_partitions, 4);
}

KernelLaunch launch(std::int64_t blocks, std::int64_t threads, std::int64_t regs, std::int64_t static_smem = 0,
                    std::int64_t dynamic_smem = 0) {
  KernelLaunch l;
  l.grid[0] = blocks, l.grid[1] = 1, l.grid[2] = 1;
  l.block[0] = threads, l.block[1] = 1, l.block[2] = 1;
  l.registers_per_thread = regs;
  l.static_shared_bytes = static_smem;
  l.dynamic_shared_bytes = dynamic_smem;
  return l;
}

KernelLaunch filled(KernelLaunch l, const SmLimits& sm = h100()) {
  fill_occupancy(l, sm);
  return l;
}

// ---- the calculator's known answers --------------------------------------------------------

TEST(Occupancy, TwoHundredFiftySixThreadsAtThirtyTwoRegistersFillTheSm) {
  const KernelLaunch l = filled(launch(132 * 8 * 3, 256, 32));
  EXPECT_EQ(l.blocks_per_sm, 8);  // 64 warps: the warp limit
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 1.0);
  EXPECT_DOUBLE_EQ(l.waves, 3.0);  // blocks / (8 per SM x 132 SMs)
}

TEST(Occupancy, OneHundredTwentyEightRegistersLeaveTwoBlocksAQuarterOfTheWarps) {
  const KernelLaunch l = filled(launch(1000, 256, 128));
  EXPECT_EQ(l.blocks_per_sm, 2);  // 4096 registers a warp: 16 warps in 65536
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 0.25);
  EXPECT_DOUBLE_EQ(l.waves, 1000.0 / (2 * 132));
}

TEST(Occupancy, OneHundredKibOfDynamicSharedMemoryLeavesTwoBlocks) {
  const KernelLaunch l = filled(launch(264, 128, 32, 0, 100 * 1024));
  EXPECT_EQ(l.blocks_per_sm, 2);  // (100 KiB + 1 KiB reserved) x 2 fits 228 KiB, x 3 does not
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 8.0 / 64);
  EXPECT_DOUBLE_EQ(l.waves, 1.0);
}

TEST(Occupancy, SmallBlocksStopAtThirtyTwoPerSm) {
  const KernelLaunch l = filled(launch(132 * 32, 32, 16));
  EXPECT_EQ(l.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 0.5);
  EXPECT_DOUBLE_EQ(l.waves, 1.0);
}

TEST(Occupancy, RegistersAreAllocatedPerSchedulerPartition) {
  // 40 registers a thread: 1280 a warp. The SM's four partitions hold 16384 each, so 12 warps
  // each (48 an SM), not 65536 / 1280 = 51: two-warp blocks get 24 an SM, not 25.
  const KernelLaunch l = filled(launch(132, 64, 40));
  EXPECT_EQ(l.blocks_per_sm, 24);
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 48.0 / 64);
}

TEST(Occupancy, AThreadCountThatIsNotAWarpMultipleRoundsUpToWholeWarps) {
  const KernelLaunch l = filled(launch(132, 100, 32));  // 4 warps
  EXPECT_EQ(l.blocks_per_sm, 16);
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 1.0);
}

// ---- launches that cannot run --------------------------------------------------------------

TEST(Occupancy, ABlockThatCannotRunOnOneSmReadsZero) {
  const KernelLaunch cases[] = {
      launch(10, 1024, 72),                // 72 x 32 -> 2304 a warp x 32 warps > 65536 a block
      launch(10, 128, 32, 0, 232 * 1024),  // + 1 KiB reserved > 228 KiB
      launch(10, 128, 32, 200 * 1024, 32 * 1024),
      launch(10, 0, 32),                   // no thread
  };
  for (const KernelLaunch& c : cases) {
    const KernelLaunch l = filled(c);
    SCOPED_TRACE(std::to_string(c.threads_per_block()) + " threads, " + std::to_string(c.registers_per_thread) +
                 " registers, " + std::to_string(c.static_shared_bytes + c.dynamic_shared_bytes) + " bytes");
    EXPECT_EQ(l.blocks_per_sm, 0);
    EXPECT_EQ(l.theoretical_occupancy, 0);
    EXPECT_EQ(l.waves, 0);
  }
}

TEST(Occupancy, UnknownLimitsReadZeroNotADivisionByZero) {
  const KernelLaunch l = filled(launch(100, 256, 32), SmLimits{});
  EXPECT_EQ(l.blocks_per_sm, 0);
  EXPECT_EQ(l.waves, 0);
}

TEST(Occupancy, StaleFiguresAreReplaced) {
  KernelLaunch l = launch(10, 1024, 72);
  l.blocks_per_sm = 9, l.theoretical_occupancy = 0.5, l.waves = 7;
  fill_occupancy(l, h100());
  EXPECT_EQ(l.blocks_per_sm, 0);
  EXPECT_EQ(l.waves, 0);
}

TEST(Occupancy, TheLargestBlockThatFitsRunsOnePerSm) {
  const KernelLaunch l = filled(launch(132, 1024, 64, 0, 227 * 1024));  // 227 KiB + 1 KiB = 228 KiB
  EXPECT_EQ(l.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(l.theoretical_occupancy, 0.5);
}

// ---- against the toolkit's calculator -------------------------------------------------------

int calculator_blocks(const KernelLaunch& l) {
  cudaOccDeviceProp p;
  p.computeMajor = 9;
  p.computeMinor = 0;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsPerMultiprocessor = 2048;
  p.regsPerBlock = 65536;
  p.regsPerMultiprocessor = 65536;
  p.warpSize = 32;
  p.sharedMemPerBlock = 48 * 1024;
  p.sharedMemPerMultiprocessor = 233472;
  p.numSms = 132;
  p.sharedMemPerBlockOptin = 232448;
  p.reservedSharedMemPerBlock = 1024;
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = 1024;
  a.numRegs = static_cast<int>(l.registers_per_thread);
  a.sharedSizeBytes = static_cast<std::size_t>(l.static_shared_bytes);
  // Kernels with more than 48 KiB opt in (cudaFuncAttributeMaxDynamicSharedMemorySize).
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.maxDynamicSharedSizeBytes = p.sharedMemPerBlockOptin - a.sharedSizeBytes;
  cudaOccDeviceState state;  // the default carveout: as much shared memory as the blocks need
  cudaOccResult result;
  const cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(
      &result, &p, &a, &state, static_cast<int>(l.threads_per_block()), static_cast<std::size_t>(l.dynamic_shared_bytes));
  EXPECT_EQ(e, CUDA_OCC_SUCCESS);
  return result.activeBlocksPerMultiprocessor;
}

TEST(Occupancy, RandomLaunchesAgreeWithTheToolkitsCalculator) {
  std::mt19937_64 rng(6029);
  std::uniform_int_distribution<int> threads(1, 1024), regs(8, 255), blocks(1, 100000);
  int limited = 0, unrunnable = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t static_smem = rng() % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % (48 * 1024));
    const std::int64_t dynamic_smem = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % (200 * 1024));
    const KernelLaunch in = launch(blocks(rng), threads(rng), regs(rng), static_smem, dynamic_smem);
    const KernelLaunch l = filled(in);
    const int want = calculator_blocks(in);
    ASSERT_EQ(l.blocks_per_sm, want) << in.threads_per_block() << " threads, " << in.registers_per_thread
                                     << " registers, " << static_smem << " + " << dynamic_smem << " bytes";
    const std::int64_t warps = (in.threads_per_block() + 31) / 32;
    if (want == 0) {
      ++unrunnable;
      EXPECT_EQ(l.waves, 0);
      continue;
    }
    EXPECT_DOUBLE_EQ(l.theoretical_occupancy, double(want * warps) / 64);
    EXPECT_DOUBLE_EQ(l.waves, double(in.blocks()) / (want * 132.0));
    if (want < std::min<std::int64_t>(32, 64 / warps)) ++limited;  // by registers or shared memory
  }
  // The draw reaches the register and shared-memory limits and the launches that cannot run, so
  // agreement is not an accident of the warp limit alone.
  EXPECT_GT(limited, 300);
  EXPECT_GT(unrunnable, 50);
}

}  // namespace
}  // namespace kwb
