// The test-only slowdown switch (test_slowdown.hpp): calibration and the spin kernel (the parsing
// is host code, in test_slowdown.cpp).
#include "harness/worker/test_slowdown.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"

namespace kwb {
namespace {

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

double median_launch_ns(const std::function<void(cudaStream_t)>& launch,
                        const std::function<void(cudaStream_t)>& reset, cudaStream_t stream, int launches) {
  // Destroyed on every path: a failed launch throws from the loop, and the worker goes on.
  struct Events {
    cudaEvent_t begin = nullptr, end = nullptr;
    ~Events() {
      if (begin) cudaEventDestroy(begin);
      if (end) cudaEventDestroy(end);
    }
  } events;
  cuda_check(cudaEventCreate(&events.begin), "cudaEventCreate");
  cuda_check(cudaEventCreate(&events.end), "cudaEventCreate");
  const cudaEvent_t begin = events.begin, end = events.end;
  std::vector<double> ns;
  for (int i = 0; i < launches + 1; ++i) {  // the first launch warms up and is not counted
    if (reset) reset(stream);
    cuda_check(cudaEventRecord(begin, stream), "cudaEventRecord");
    launch(stream);
    cuda_check(cudaEventRecord(end, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
    if (i > 0) ns.push_back(1e6 * ms);
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  return ns[ns.size() / 2];
}

void launch_spin(cudaStream_t stream, double ns) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(std::llround(ns)));
  cuda_check_launch("test slowdown spin");
}

}  // namespace kwb
