// Theoretical occupancy as the counter passes record it (harness/worker/counters/occupancy.hpp,
// from this GPU's properties) against the CUDA runtime's own occupancy query, for kernels whose
// registers and shared memory limit them differently.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/counters/occupancy.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

// Few registers, no shared memory: the warp limit.
__global__ void light_kernel(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

// Many live values, so many registers: the register limit.
__global__ void __launch_bounds__(256, 1) heavy_kernel(float* out, float a) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = a * (threadIdx.x + i);
#pragma unroll
  for (int step = 0; step < 8; ++step)
#pragma unroll
    for (int i = 0; i < 64; ++i) v[i] = v[i] * v[(i + 7) % 64] + a;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Static and dynamic shared memory: the shared-memory limit.
__global__ void shared_kernel(float* out) {
  __shared__ float tile[2048];  // 8 KiB static
  extern __shared__ float dyn[];
  tile[threadIdx.x] = threadIdx.x;
  dyn[threadIdx.x] = tile[threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x];
}

TEST(GpuOccupancy, FillOccupancyAgreesWithTheRuntimesQuery) {
  KWB_REQUIRE_GPU();
  cuda_check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp props{};
  cuda_check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  const SmLimits sm = sm_limits(props);
  cuda_check(cudaFuncSetAttribute(shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(props.sharedMemPerBlockOptin) - 8192),
             "opt in to large dynamic shared memory");
  struct Case {
    const char* name;
    const void* kernel;
    int threads;
    std::size_t dynamic_smem;
  };
  const Case cases[] = {
      {"light 256", reinterpret_cast<const void*>(light_kernel), 256, 0},
      {"light 96", reinterpret_cast<const void*>(light_kernel), 96, 0},
      {"heavy 256", reinterpret_cast<const void*>(heavy_kernel), 256, 0},
      {"heavy 64", reinterpret_cast<const void*>(heavy_kernel), 64, 0},
      {"shared 256 + 40 KiB", reinterpret_cast<const void*>(shared_kernel), 256, 40 << 10},
      {"shared 128 + 100 KiB", reinterpret_cast<const void*>(shared_kernel), 128, 100 << 10},
      {"shared 512 + 150 KiB", reinterpret_cast<const void*>(shared_kernel), 512, 150 << 10},
  };
  for (const Case& c : cases) {
    cudaFuncAttributes attr{};
    cuda_check(cudaFuncGetAttributes(&attr, c.kernel), "cudaFuncGetAttributes");
    int want = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&want, c.kernel, c.threads, c.dynamic_smem),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    KernelLaunch l;
    l.grid[0] = 1000, l.grid[1] = 1, l.grid[2] = 1;
    l.block[0] = c.threads, l.block[1] = 1, l.block[2] = 1;
    l.registers_per_thread = attr.numRegs;
    l.static_shared_bytes = static_cast<std::int64_t>(attr.sharedSizeBytes);
    l.dynamic_shared_bytes = static_cast<std::int64_t>(c.dynamic_smem);
    fill_occupancy(l, sm);
    std::printf("%-22s %3d registers, %6zu + %6zu bytes shared: %lld blocks/SM (runtime %d), occupancy %.3f, waves %.3f\n",
                c.name, attr.numRegs, attr.sharedSizeBytes, c.dynamic_smem, static_cast<long long>(l.blocks_per_sm),
                want, l.theoretical_occupancy, l.waves);
    EXPECT_EQ(l.blocks_per_sm, want) << c.name << ": " << attr.numRegs << " registers";
  }
}

}  // namespace
}  // namespace kwb
