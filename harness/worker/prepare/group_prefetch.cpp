#include "harness/worker/prepare/group_prefetch.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "harness/catalogue/oracle_device.hpp"
#include "harness/catalogue/python_module_loader.hpp"
#include "harness/worker/oracle_cache/oracle_key.hpp"
#include "harness/worker/prepare/group_inputs.hpp"

namespace kwb {

GroupOracle oracle_for_group(const Op& op, const CaseRequest& req, const std::vector<TensorSpec>& specs,
                             SamplePlan plan, const std::vector<std::vector<unsigned char>>& raw,
                             OracleCache* cache, const DeviceOracleArgs* device,
                             const std::function<void()>& on_keyed) {
  GroupOracle g;
  g.plan = std::move(plan);
  std::vector<KeyInput> keyed;  // the inputs' bytes as copied back: what the key digests
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    if (t.is_output) {
      HostTensor out;  // filled by the oracle; NaN wherever it leaves an element unset
      out.name = t.name;
      out.dims = g.plan.dims(t);
      out.values.assign(static_cast<std::size_t>(g.plan.elements(t)), std::nan(""));
      g.expected.push_back(std::move(out));
      continue;
    }
    keyed.push_back({t.name, g.plan.dims(t), std::string(to_string(t.elem_type(req.dtype))), raw.at(i)});
  }
  if (on_keyed) on_keyed();
  const OracleKeyParts key_parts{op.name, req.dtype, req.shape, req.seed, g.plan,
                                 oracle_version_of(op.name, Registry::instance())};
  // An answer partly from the device oracle is not stored: it reads every input element on the
  // device, which the key's digest of the host's (sampled) inputs does not cover; it costs little.
  if (g.plan.unaligned_on_device) cache = nullptr;
  // An op from a Python file may compute its oracle in any module the file imports, which the
  // file's hash does not cover: its answers are never cached, lest an edit go unseen.
  if (op_from_python_file(Registry::instance(), op.name)) cache = nullptr;
  // The inputs are decoded to fp64 only when the oracle runs: a cached answer needs none of them.
  g.source = expected_for_group(cache, key_parts, keyed, g.expected, [&](std::vector<HostTensor>& expected) {
    std::vector<HostTensor> host_inputs;
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (!specs[i].is_output)
        host_inputs.push_back(decode_for_oracle(g.plan, specs[i], specs[i].elem_type(req.dtype), raw.at(i)));
    run_sampled_oracle(op, req.shape, g.plan, host_inputs, expected, device);
  });
  return g;
}

GroupPrefetch::GroupPrefetch(std::string key, std::function<GroupOracle()> work) : key_(std::move(key)) {
  result_ = std::async(std::launch::async, [this, work = std::move(work)] {
    // Linux keeps a nice value per thread, and threads inherit their creator's: the oracle's own
    // worker threads run at this priority too. Failing to lower it only costs the priority.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    BackgroundOracleScope background;
    const auto start = std::chrono::steady_clock::now();
    struct Clock {  // the thread's working time, whether it returns or throws
      std::chrono::steady_clock::time_point start;
      double& ms;
      ~Clock() { ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); }
    } clock{start, background_ms_};
    return work();
  });
}

GroupPrefetch::~GroupPrefetch() {
  if (result_.valid()) result_.wait();
}

std::optional<GroupOracle> GroupPrefetch::take(std::string* why) {
  try {
    return result_.get();
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace kwb
