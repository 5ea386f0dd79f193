// Test-only variants that break on purpose, to prove that one bad case cannot take a sweep down (an
// illegal address, a failed device-side assert, a kernel that never ends) and that verification
// catches an output of zeros. Hidden from `list` and default sweeps (`--include-test-variants`).
#undef NDEBUG  // the assert below must stay in release builds
#include <cassert>
#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

__global__ void write_to_illegal_address(float* out) {
  // An address far outside any allocation: the MMU faults, the context is lost.
  float* bad = reinterpret_cast<float*>(0x10);
  bad[threadIdx.x] = out ? 1.0f : 2.0f;
}

__global__ void fail_device_assert(const int* flag) {
  assert(flag == nullptr && "test_fault_device_assert: deliberate device-side assert");
}

__global__ void write_zeros(std::uint16_t* out, std::int64_t n_halves) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n_halves;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = 0;
}

__global__ void spin_forever(volatile int* flag) {
  while (*flag == 0) {  // nobody ever sets it
  }
}

// The variants take rmsnorm_fwd's buffers as raw bytes (a.tensor<void>): what they write is no result.
KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_fault_illegal_address",
    .role = Role::fused,
    .description = "TEST ONLY: writes to address 0x10 (cudaErrorIllegalAddress)",
    .launch = [](const LaunchArgs& a) {
      write_to_illegal_address<<<1, 32, 0, a.stream>>>(static_cast<float*>(a.tensor<void>("y")));
    },
    .test_only = true,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_fault_device_assert",
    .role = Role::fused,
    .description = "TEST ONLY: fails a device-side assert (cudaErrorAssert)",
    .launch = [](const LaunchArgs& a) {
      fail_device_assert<<<1, 1, 0, a.stream>>>(static_cast<const int*>(a.tensor<const void>("x")));
    },
    .test_only = true,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_hang",
    .role = Role::fused,
    .description = "TEST ONLY: spins forever; the watchdog must end it",
    .launch = [](const LaunchArgs& a) {
      spin_forever<<<1, 1, 0, a.stream>>>(static_cast<volatile int*>(a.workspace));
    },
    .workspace_bytes = [](const Shape&, DType) -> std::size_t { return 64; },
    .test_only = true,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_wrong_all_zeros",
    .role = Role::fused,
    .description = "TEST ONLY: writes zeros everywhere; verification must fail it",
    .launch = [](const LaunchArgs& a) {
      const auto [rows, cols] = RowsCols::of(a.shape);
      const std::int64_t halves = rows * cols * std::int64_t(dtype_size(a.dtype)) / 2;
      write_zeros<<<256, 256, 0, a.stream>>>(static_cast<std::uint16_t*>(a.tensor<void>("y")), halves);
    },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
