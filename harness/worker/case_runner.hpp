// Runs one case inside the worker process: inputs, poisoned outputs, verification against the
// oracle, timing (whose output is checked too), and the record. Every case starts from the device
// state the worker found (harness/worker/isolate/device_state.hpp) on a fresh stream; a variant
// that leaves that state changed fails, and the state is put back before the next case.
//
// Cases of one (op, dtype, shape) share their inputs and oracle: the planner orders each
// group's variants together, so inputs are generated and the oracle computed once per group, or
// read from the oracle cache on disk when an earlier run computed it
// (harness/worker/oracle_cache/oracle_cache.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/case_request.hpp"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/isolate/device_state.hpp"
#include "harness/worker/measure/measure.hpp"
#include "harness/record/record.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/test_slowdown.hpp"

namespace kwb {

class OracleCache;
class GroupPrefetch;
struct GroupOracle;

class CaseRunner {
 public:
  // Without an oracle cache (or with a null one) every group's oracle is computed: the
  // in-process GPU tests run so.
  CaseRunner(TimerKind timer, std::size_t l2_bytes);
  CaseRunner(TimerKind timer, std::size_t l2_bytes, std::unique_ptr<OracleCache> oracle_cache);
  ~CaseRunner();

  // Never throws for a case's own failure: the record says failed, with the error. After a CUDA
  // fault the context is unusable; context_lost() then tells the worker to exit.
  CaseRecord run(const CaseRequest& request);
  bool context_lost() const { return context_lost_; }

  // The first case of the group the session will run next: once the current group is prepared,
  // its inputs are copied to the host and its oracle computed on a background thread while the
  // current group is timed (harness/worker/prepare/group_prefetch.hpp). A hint only: a group that
  // comes otherwise prepares itself as before.
  void expect_next_group(const CaseRequest& first_case);

  // Called once a case has prepared a new group (its inputs and oracle: host work that can take a
  // minute or more at long sequences), before any of the variant's launches: the worker answers
  // "prepared", and the parent's watchdog, which is for a hung kernel, starts its time again.
  void on_group_prepared(std::function<void()> callback) { on_group_prepared_ = std::move(callback); }

 private:
  struct Group;       // inputs, sample plan and oracle answer, shared by a group's cases
  struct CaseLaunch;  // one case's workspace, prepare() state and launch arguments
  class StageTimer;   // host time per stage of run() (CaseStageTimes)

  // run()'s phases, in the order it calls them (case_runner.cpp says what each does and why).
  std::optional<std::string> make_room(const CaseRequest& request, const std::vector<TensorSpec>& specs,
                                       std::size_t workspace, const std::string& key);
  std::unique_ptr<Group> prepare_group(const Op& op, const CaseRequest& request,
                                       const std::vector<TensorSpec>& specs, std::string key,
                                       StageTimer& timer);
  void derive_inputs(const Op& op, const CaseRequest& request, const std::vector<TensorSpec>& specs, const Group& g);
  void fill_input(const Op& op, const CaseRequest& request, const std::vector<TensorSpec>& specs, std::size_t i,
                  void* device);
  std::optional<GroupOracle> take_prefetch(const std::string& key, StageTimer& timer);
  void prefetch_next_group(const CaseRequest& current);
  void prepare_variant(const Variant& variant, CaseLaunch& case_launch);
  std::int64_t launch_on_poisoned_outputs(const Variant& variant, const CaseRequest& request,
                                          const std::vector<TensorSpec>& specs, const LaunchArgs& args,
                                          std::size_t free_before_variant);
  VerifyResult verify_outputs(const Op& op, const CaseRequest& request,
                              const std::vector<TensorSpec>& specs);
  void time_case(const Op& op, const Variant& variant, const CaseRequest& request,
                 const std::vector<TensorSpec>& specs, const LaunchArgs& args, CaseRecord& rec);
  void collect_case_counters(const Variant& variant, const CaseRequest& request, const LaunchArgs& args,
                             CaseRecord& rec);
  void check_device_state(const DeviceState& before, CaseRecord& rec);
  void fail_on_cuda_error(CaseRecord& rec, const std::string& phase, const CudaError& error);
  void renew_stream();

  TimerKind timer_;
  std::size_t l2_bytes_;
  cudaStream_t stream_ = nullptr;  // a fresh one per case: no attribute a variant set outlives it
  std::unique_ptr<DeviceStateGuard> state_guard_;  // the device state every case starts from
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<L2Flusher> counter_flusher_;  // clean, for cold counter passes (made when first needed)
  std::unique_ptr<Group> group_;
  std::function<void()> on_group_prepared_;
  bool context_lost_ = false;
  std::vector<TestSlowdown> slowdowns_;  // KWB_TEST_SLOWDOWN, for proving the regression gate
  std::unique_ptr<OracleCache> oracle_cache_;
  std::optional<CaseRequest> next_request_;  // expect_next_group's hint, until the current group is prepared
  std::unique_ptr<GroupPrefetch> prefetch_;   // last: its thread may read oracle_cache_
};

// A record that names the case (identity and NVTX range) and nothing else yet.
CaseRecord record_for(const CaseRequest& request);

// What the cases that share their inputs and oracle have in common (op, dtype, shape, seed): the
// worker keeps one group's inputs while consecutive cases have its key, and the session keeps a
// group on one GPU.
std::string input_group_key(const CaseRequest& request);

// The NVTX range name of a case: its identity, "op:variant:dtype:shape[:tunables]"
// (harness/catalogue/case_identity.hpp).
std::string nvtx_case_name(const CaseRequest& request);

}  // namespace kwb
