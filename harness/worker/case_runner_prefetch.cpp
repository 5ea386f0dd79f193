// The next group prepared while this one runs (CaseRunner's part of harness/worker/prepare/
// group_prefetch.hpp): the session's hint, the GPU's part done in order before the current case is
// timed, the host's part handed to a background thread, and its answer taken when the group comes.
#include <cstdlib>
#include <cstring>

#include "harness/catalogue/oracle_device.hpp"
#include "harness/catalogue/python_module_loader.hpp"
#include "harness/worker/case_runner.hpp"
#include "harness/worker/case_runner_parts.hpp"
#include "harness/worker/prepare/group_inputs.hpp"
#include "harness/worker/prepare/group_prefetch.hpp"

namespace kwb {

using case_runner_detail::DeviceBuffer;
using case_runner_detail::free_device_bytes;
using case_runner_detail::refusal;

namespace {

// KWB_PREFETCH=0 (or off) turns the next group's background preparation off: for measuring what
// it saves, and as a way around it should it ever be in the way.
bool prefetch_enabled() {
  const char* value = std::getenv("KWB_PREFETCH");
  return !(value && (std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0));
}

}  // namespace

// The background answer for the group of `key`, when one was prepared for it (nullopt: the group
// prepares its own). The wait for it is oracle time.
std::optional<GroupOracle> CaseRunner::take_prefetch(const std::string& key, StageTimer& timer) {
  // One for another group stays: the current group may be prepared again (after a CUDA error in
  // one of its cases) before the group it was made for comes. The next hint replaces it.
  if (!prefetch_ || prefetch_->key() != key) return std::nullopt;
  std::unique_ptr<GroupPrefetch> prefetch = std::move(prefetch_);
  timer.enter(&CaseStageTimes::oracle_ms);
  std::string why;
  std::optional<GroupOracle> answer = prefetch->take(&why);  // why: not kept (the stages show the wait)
  if (answer) timer.add_background_oracle(prefetch->background_ms());
  return answer;
}

// 2b. Once the session has named the next group, and before the current case is timed: its inputs
// drawn on the device one tensor at a time and copied to the host (the GPU's part), then the rest
// of that group's host half started on a background thread (group_prefetch.hpp). Nothing is
// prepared ahead under the events timer (its samples include the host's launch time, which a busy
// host would stretch), for a group that does not run here, for an op whose oracle is Python's, or
// for one whose oracle reads its inputs on the device, for one with derived inputs (they need
// every drawn input at once on the device, which would not fit beside this group's); an input that does not fit beside this group's leaves the group to itself.
void CaseRunner::prefetch_next_group(const CaseRequest& current) {
  if (!next_request_) return;
  const CaseRequest next = std::move(*next_request_);
  next_request_.reset();
  if (timer_ != TimerKind::cupti || !prefetch_enabled()) return;
  const Op* op = Registry::instance().find_op(next.op);
  const Variant* variant = Registry::instance().find_variant(next.op, next.variant);
  if (!op || !variant || refusal(*op, *variant, next)) return;
  // An op defined in a Python file has its oracle in Python: on a background thread it would hold
  // the interpreter's lock while the current group's Python variants wait for it to launch.
  if (op_from_python_file(Registry::instance(), next.op)) return;
  if (op->derive_inputs) return;
  std::string key = input_group_key(next);
  if (key == input_group_key(current)) return;
  try {
    auto specs = op->tensors(next.shape, next.dtype);
    SamplePlan plan = plan_sample(*op, next.shape, specs, next.seed, oracle_device_usable());
    if (plan.unaligned_on_device) return;
    std::vector<std::vector<unsigned char>> raw(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].is_output) continue;
      const std::size_t esize = elem_size(specs[i].elem_type(next.dtype));
      const std::size_t bytes = specs[i].numel() * esize;
      // Half the free memory at most: this group's variants still need their workspaces.
      if (static_cast<double>(bytes) > 0.5 * static_cast<double>(free_device_bytes())) return;
      DeviceBuffer input(bytes);
      fill_input(*op, next, specs, i, input.ptr);
      cuda_check(cudaStreamSynchronize(stream_), "synchronize after filling the next group's input");
      raw[i] = copy_for_verification(plan, input.ptr, specs[i], esize);
    }
    OracleCache* cache = oracle_cache_.get();
    prefetch_ = std::make_unique<GroupPrefetch>(
        std::move(key), [op, next, specs = std::move(specs), plan = std::move(plan), raw = std::move(raw), cache] {
          return oracle_for_group(*op, next, specs, plan, raw, cache, nullptr);
        });
  } catch (const CudaError&) {
    // An allocation that failed: the group prepares itself in its turn. A fault is no such thing:
    // the context is gone, and the case says so, under this phase.
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess) throw;
  } catch (const std::exception&) {
    // A group that cannot be prepared says why in its own case, where it belongs.
  }
}

void CaseRunner::expect_next_group(const CaseRequest& first_case) { next_request_ = first_case; }

}  // namespace kwb
