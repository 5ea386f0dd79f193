// The worker process: owns the CUDA context, runs cases one at a time, answers in JSON Lines.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "harness/worker/measure/ceilings_measure.hpp"
#include "harness/worker/counters/range_profiler.hpp"
#include "harness/worker/measure/cupti_tracer.hpp"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/oracle_device.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "harness/worker/case_runner.hpp"
#include "harness/worker/oracle_cache/oracle_cache_settings.hpp"
#include "harness/worker/worker_protocol.hpp"
#include "harness/record/record_json.hpp"

namespace kwb {
namespace {

// The request's enumerations (dtype, mode, flush, launch) travel as their names: to_string() writes them
// and the type's own parser reads them back, so a name has one spelling on both sides of the pipe
// and no second list of names exists here. A name the parser refuses is a malformed request
// naming the field.
template <class E>
E named(const nlohmann::ordered_json& j, const char* key, std::optional<E> (*parse)(std::string_view)) {
  const std::string name = j.at(key).get<std::string>();
  if (const std::optional<E> value = parse(name)) return *value;
  throw std::invalid_argument(std::string(key) + ": unknown name '" + name + "'");
}

}  // namespace

nlohmann::ordered_json to_json(const CaseRequest& r) {
  nlohmann::ordered_json shape = nlohmann::ordered_json::object();
  for (const auto& [name, value] : r.shape.axes) {
    if (value.is_choice())
      shape[name] = value.choice();  // a choice travels as a string, an integer as a number
    else
      shape[name] = value.integer();
  }
  nlohmann::ordered_json tunables = nlohmann::ordered_json::object();
  for (const auto& [name, value] : r.tunables) tunables[name] = value;
  return {{"index", r.index}, {"op", r.op}, {"variant", r.variant},
          {"dtype", to_string(r.dtype)}, {"shape", shape}, {"tunables", tunables},
          {"mode", to_string(r.mode)}, {"flush", to_string(r.flush)}, {"launch", to_string(r.launch)},
          {"preset", r.preset}, {"seed", r.seed}, {"include_test_variants", r.include_test_variants},
          {"counter_sets", r.counter_sets}, {"counter_metrics", r.counter_metrics}};
}

CaseRequest case_request_from_json(const nlohmann::ordered_json& j) {
  CaseRequest r;
  r.index = j.at("index").get<int>();
  r.op = j.at("op").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.dtype = named(j, "dtype", parse_dtype);
  for (const auto& [name, value] : j.at("shape").items()) {
    if (value.is_string())
      r.shape.axes.push_back({name, AxisValue(value.get<std::string>())});
    else
      r.shape.axes.push_back({name, AxisValue(value.get<std::int64_t>())});
  }
  for (const auto& [name, value] : j.at("tunables").items())
    r.tunables.push_back({name, value.get<std::int64_t>()});
  r.mode = named(j, "mode", parse_mode);
  r.flush = named(j, "flush", parse_flush_kind);
  // A parent from before graph launches sends none: its cases are stream launches.
  if (j.contains("launch")) r.launch = named(j, "launch", parse_launch_kind);
  r.preset = j.at("preset").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.include_test_variants = j.value("include_test_variants", false);
  r.counter_sets = j.value("counter_sets", std::vector<std::string>{});
  r.counter_metrics = j.value("counter_metrics", std::vector<std::string>{});
  return r;
}

namespace {

FILE* g_protocol = nullptr;

void answer(const nlohmann::ordered_json& message) {
  const std::string line = dump_json(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), g_protocol);
  std::fflush(g_protocol);
}

}  // namespace

int worker_main(int device, const std::string& timer_preference, bool counters) {
  g_protocol = fdopen(3, "w");
  if (!g_protocol) {
    std::fprintf(stderr, "kwb worker: fd 3 is not open; the worker is started by `kwb run`\n");
    return 2;
  }
  // 1. CUPTI first: activity tracing must be enabled before the context exists.
  TimerKind timer = TimerKind::events;
  std::string timer_note;
  if (timer_preference != "events") {
    std::string why;
    if (CuptiTracer::instance().start(&why)) {
      timer = TimerKind::cupti;
    } else {
      timer_note = "CUPTI unavailable (" + why + "; another profiler such as ncu or nsys may be "
                   "attached): timed with CUDA events, which include launch overhead";
      if (timer_preference == "cupti") {
        answer({{"event", "error"}, {"message", timer_note}});
        return 2;
      }
    }
  }
  // 2. The device.
  std::string why;
  const int count = cuda_device_count(&why);
  if (count == 0) {
    answer({{"event", "no_gpu"}, {"reason", why}});
    return 0;
  }
  if (device < 0 || device >= count) {
    answer({{"event", "no_gpu"},
            {"reason", "device " + std::to_string(device) + " does not exist; this machine has " +
                           std::to_string(count) + " (use --device 0.." + std::to_string(count - 1) + ")"},
            {"device_count", count}});
    return 0;
  }
  DeviceInfo info;
  try {
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    cuda_check(cudaFree(nullptr), "create the CUDA context");
    // The oracles this thread runs between cases may put their fp64 products on this device (the
    // same bits as the CPU's: reference/matmul_fp64_gpu.hpp); never while a case is timed.
    set_oracle_gpu_device(device);
    info = query_device(device);
    // Counters: the profiler starts before any kernel loads, and names the chip the session checks
    // the metrics against (a refusal is said by the first case's record).
    if (counters) info.chip = counter_access(device).chip;
  } catch (const std::exception& e) {
    answer({{"event", "no_gpu"}, {"reason", e.what()}});
    return 0;
  }
  answer({{"event", "hello"}, {"device", to_json(info)}, {"timer", to_string(timer)},
          {"timer_note", timer_note}, {"device_count", count}});

  // 3. Commands until exit.
  CaseRunner runner(timer, static_cast<std::size_t>(info.l2_bytes), oracle_cache_from_environment());
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::ordered_json cmd;
    try {
      cmd = nlohmann::ordered_json::parse(line);
    } catch (const std::exception& e) {
      answer({{"event", "error"}, {"message", std::string("unreadable command: ") + e.what()}});
      continue;
    }
    const std::string kind = cmd.value("cmd", "");
    if (kind == "exit") break;
    if (kind == "ceilings") {
      try {
        answer({{"event", "ceilings"}, {"ceilings", to_json(measure_ceilings(info, timer))}});
      } catch (const std::exception& e) {
        answer({{"event", "error"}, {"message", std::string("measuring ceilings: ") + e.what()}});
        return kWorkerExitContextLost;
      }
      continue;
    }
    if (kind == "copy_check") {  // the session's short re-check of a cached copy ceiling
      try {
        const CopyCheck check = check_copy_ceiling(info, timer);
        answer({{"event", "copy_check"}, {"copy_gbps", check.copy_gbps}, {"method", check.method}});
      } catch (const std::exception& e) {
        answer({{"event", "error"}, {"message", std::string("checking the copy ceiling: ") + e.what()}});
        return kWorkerExitContextLost;
      }
      continue;
    }
    if (kind == "prefetch") {  // the first case of the group to come; a hint, so never answered
      try {
        runner.expect_next_group(case_request_from_json(cmd.at("request")));
      } catch (const std::exception&) {  // an unreadable hint: that group prepares itself
      }
      continue;
    }
    if (kind == "case") {
      CaseRequest req;
      try {
        req = case_request_from_json(cmd.at("request"));
      } catch (const std::exception& e) {
        answer({{"event", "error"}, {"message", std::string("malformed case request: ") + e.what()}});
        continue;
      }
      answer({{"event", "started"}, {"index", req.index}});
      runner.on_group_prepared([index = req.index] { answer({{"event", "prepared"}, {"index", index}}); });
      const CaseRecord rec = runner.run(req);
      answer({{"event", "record"}, {"record", to_json(rec)}, {"worker_exiting", runner.context_lost()}});
      if (runner.context_lost()) {
        std::fflush(stderr);
        _exit(kWorkerExitContextLost);  // skip destructors: the context is unusable
      }
      continue;
    }
    answer({{"event", "error"}, {"message", "unknown command '" + kind + "'"}});
  }
  CuptiTracer::instance().stop();
  return 0;
}

}  // namespace kwb
