// Test-only variants whose timed launches are not the launch that was verified: each computes a
// correct RMSNorm on its first launch (the one verification reads) and then, on every later launch
// (warm-up and timed samples),
//   test_timed_trivial_kernel: launches a kernel that does nothing (a timer sees a fast kernel);
//   test_timed_no_launch:      launches nothing (CUDA events time an empty interval);
//   test_timed_half_rows:      computes the first half of the rows only.
// The harness must fail each under every timer: the last sample of each batch runs on poisoned
// outputs and is compared with the verified output (harness/worker/verify/timed_output.hpp).
// Hidden from `list` and default sweeps (`--include-test-variants`).
#include <algorithm>
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/testing/simple_rmsnorm.cuh"

namespace kwb {
namespace {

__global__ void do_nothing() {}

// The variant's state: how many times it has launched in this case.
struct LaunchCount {
  std::int64_t launches = 0;
};

std::shared_ptr<void> count_launches(const LaunchArgs&) { return std::make_shared<LaunchCount>(); }

// True on the case's first launch (the verified one), counting it.
bool first_launch(const LaunchArgs& a) { return a.state_as<LaunchCount>().launches++ == 0; }

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_timed_trivial_kernel",
    .role = Role::fused,
    .description = "TEST ONLY: correct on its first launch, then launches a kernel that does nothing",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      if (first_launch(a))
        testing::launch_simple_rmsnorm<T>(a);
      else
        do_nothing<<<1, 32, 0, a.stream>>>();
    }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
    .prepare = count_launches,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_timed_no_launch",
    .role = Role::fused,
    .description = "TEST ONLY: correct on its first launch, then launches nothing",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      if (first_launch(a)) testing::launch_simple_rmsnorm<T>(a);
    }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
    .prepare = count_launches,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_timed_half_rows",
    .role = Role::fused,
    .description = "TEST ONLY: correct on its first launch, then computes the first half of the rows only",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      const std::int64_t rows = RowsCols::of(a.shape).rows;
      testing::launch_simple_rmsnorm<T>(a, first_launch(a) ? rows : std::max<std::int64_t>(rows / 2, 1));
    }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
    .prepare = count_launches,
});

}  // namespace
}  // namespace kwb
