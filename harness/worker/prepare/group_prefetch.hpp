// The host half of a group's preparation (the fp64 oracle, with its inputs decoded for it, or its
// cached answer), and doing it for the next group on a background thread while the GPU times this one.
//
// Why: a group's oracle is host work that the GPU used to wait for, group after group. The
// session tells the worker which group it will run next (the "prefetch" command); the worker
// copies that group's inputs to the host before it times the current group (so the GPU does
// nothing else while a case is timed), and a background thread looks the answer up or decodes them
// and computes the oracle meanwhile. The worker stays the only user of its GPU, and the background thread never
// touches it: an oracle step that would use the GPU there throws OracleNeedsDevice
// (harness/catalogue/oracle_device.hpp), and that group's oracle is computed in its turn, as
// before. The answer is the same either way: the same inputs, the same oracle code.
#pragma once

#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/case_request.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/oracle_cache/group_oracle.hpp"
#include "harness/worker/verify/sampling.hpp"

namespace kwb {

class OracleCache;

// What the host half gives a group: the sample plan, and the oracle's answer for it.
struct GroupOracle {
  SamplePlan plan;
  std::vector<HostTensor> expected;  // one per output, at the plan's dims
  OracleSource source = OracleSource::computed;
};

// The oracle's answer for `raw` (per tensor of `specs`, what copy_for_verification read; empty for
// outputs): from `cache` when it holds the answer for those very bytes (nullptr: computed), else
// the bytes decoded to fp64 and the oracle run on them. `device`: the tensors on the device, for an
// op whose unaligned outputs come from its device oracle (worker's thread only). `on_keyed` runs
// once the inputs are described, before the lookup (the case runner's stage timer: the lookup, the
// decoding and the oracle are the oracle stage).
GroupOracle oracle_for_group(const Op& op, const CaseRequest& request, const std::vector<TensorSpec>& specs,
                             SamplePlan plan, const std::vector<std::vector<unsigned char>>& raw,
                             OracleCache* cache, const DeviceOracleArgs* device,
                             const std::function<void()>& on_keyed = {});

// oracle_for_group on a background thread, at the lowest CPU priority (the threads it starts
// inherit it), so that the worker's thread launching timed kernels is never kept waiting. The
// price: when the worker then waits for it (take()) on a host kept busy by other work at normal
// priority (several GPUs' workers, another program), the thread gets little CPU, and the wait
// counts toward that case's watchdog (--case-timeout). On a host with a core per worker to spare,
// as the lent 16-core machines, it runs at full speed once the timed launches stop.
class GroupPrefetch {
 public:
  GroupPrefetch(std::string key, std::function<GroupOracle()> work);
  ~GroupPrefetch();  // waits for the thread
  GroupPrefetch(const GroupPrefetch&) = delete;
  GroupPrefetch& operator=(const GroupPrefetch&) = delete;

  // The group's input_group_key.
  const std::string& key() const { return key_; }
  // Waits for the thread: its answer, or nullopt with why it has none (*why).
  std::optional<GroupOracle> take(std::string* why);
  // Milliseconds the thread worked (known once take() has returned).
  double background_ms() const { return background_ms_; }

 private:
  std::string key_;
  double background_ms_ = 0;
  std::future<GroupOracle> result_;
};

}  // namespace kwb
