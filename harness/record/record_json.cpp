// The record codec: CaseRecord and RunInfo to and from JSON. The worker protocol, the journal,
// the reports and the ceilings cache all go through these functions, so a new record field is
// written and read in this one file (a case's hardware counters and their measured point:
// counters_json.cpp; the device and its ceilings: device_json.cpp; stage times: stage_times.cpp).
#include "harness/record/record_json.hpp"

#include "harness/catalogue/excerpt.hpp"
#include "harness/catalogue/shape_label.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "harness/record/counters_json.hpp"
#include "harness/record/device_json.hpp"
#include "harness/record/stage_times.hpp"
#include "harness/record/json_node.hpp"
#include "harness/record/run_provenance_json.hpp"

namespace kwb {
namespace {

using json_read::Node;
using json_write::number;

using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Writing


Json numbers(const std::vector<double>& values) {
  Json out = Json::array();
  for (double v : values) out.push_back(number(v));
  return out;
}

Json stats_json(const SummaryStats& s) {
  Json j = Json::object();
  j["count"] = s.count;
  j["median"] = number(s.median);
  j["p10"] = number(s.p10);
  j["p90"] = number(s.p90);
  j["min"] = number(s.min);
  j["max"] = number(s.max);
  j["mean"] = number(s.mean);
  j["stdev"] = number(s.stdev);
  j["noise"] = number(s.noise);
  return j;
}

Json verify_json(const VerifyResult& v) {
  Json j = Json::object();
  j["passed"] = v.passed;
  j["atol"] = number(v.atol);
  j["rtol"] = number(v.rtol);
  j["elements_checked"] = v.elements_checked;
  j["mismatches"] = v.mismatches;
  j["nonfinite_mismatches"] = v.nonfinite_mismatches;
  j["unwritten"] = v.unwritten;
  j["all_zero"] = v.all_zero;
  j["max_abs_err"] = number(v.max_abs_err);
  j["max_rel_err"] = number(v.max_rel_err);
  j["rel_l2_err"] = number(v.rel_l2_err);
  j["rows_checked"] = v.rows_checked;
  j["rows_total"] = v.rows_total;
  Json list = Json::array();
  for (const Mismatch& m : v.first_mismatches) {
    Json e = Json::object();
    e["tensor"] = m.tensor;
    e["index"] = m.index;
    e["got"] = number(m.got);
    e["expected"] = number(m.expected);
    list.push_back(std::move(e));
  }
  j["first_mismatches"] = std::move(list);
  j["sampling"] = v.sampling;
  if (!v.sampled_block_starts.empty()) {
    j["sampled_block_starts"] = v.sampled_block_starts;
    j["sampled_block_length"] = v.sampled_block_length;
  }
  j["worst_bound_fraction"] = number(v.worst_bound_fraction);
  if (!v.oracle_source.empty()) j["oracle_source"] = v.oracle_source;
  Json outputs = Json::array();
  for (const OutputCheck& o : v.outputs) {
    Json e = Json::object();
    e["name"] = o.name;
    e["elem"] = to_string(o.elem);
    e["atol"] = number(o.atol);
    e["rtol"] = number(o.rtol);
    if (o.abs_sum_scale > 0 || o.root_sum_sq_scale > 0) {
      e["abs_sum_scale"] = number(o.abs_sum_scale);
      e["root_sum_sq_scale"] = number(o.root_sum_sq_scale);
    }
    e["worst_bound_fraction"] = number(o.worst_bound_fraction);
    e["elements_checked"] = o.elements_checked;
    e["elements_total"] = o.elements_total;
    e["sampled"] = o.sampled;
    e["device_scanned"] = o.device_scanned;
    e["nonfinite"] = o.nonfinite;
    e["unwritten"] = o.unwritten;
    e["mismatches"] = o.mismatches;
    e["nonfinite_mismatches"] = o.nonfinite_mismatches;
    e["max_abs_err"] = number(o.max_abs_err);
    e["max_rel_err"] = number(o.max_rel_err);
    e["passed"] = o.passed;
    outputs.push_back(std::move(e));
  }
  j["outputs"] = std::move(outputs);
  return j;
}

Json clocks_json(const ClockSummary& c) {
  Json j = Json::object();
  j["sm_min_mhz"] = number(c.sm_min_mhz);
  j["sm_max_mhz"] = number(c.sm_max_mhz);
  if (c.sm_mean_mhz > 0) j["sm_mean_mhz"] = number(c.sm_mean_mhz);
  j["sm_rated_max_mhz"] = number(c.sm_rated_max_mhz);
  j["readings"] = c.readings;
  j["samples"] = c.samples;
  j["throttled_samples"] = c.throttled_samples;
  j["throttle_reasons"] = c.throttle_reasons;
  return j;
}

Json timing_json(const TimingResult& t) {
  Json j = Json::object();
  j["timer"] = t.timer;
  j["mode"] = to_string(t.mode);
  j["flush"] = t.flush;
  j["launch"] = to_string(t.launch);
  j["preset"] = t.preset;
  j["span"] = stats_json(t.span);
  j["busy"] = stats_json(t.busy);
  j["kernel_sum"] = stats_json(t.kernel_sum);
  j["kernels_per_sample"] = t.kernels_per_sample;
  Json kernels = Json::array();
  for (const KernelBreakdown& k : t.kernels) {
    Json e = Json::object();
    e["name"] = k.name;
    e["launches_per_sample"] = k.launches_per_sample;
    e["median_us"] = number(k.median_us);
    kernels.push_back(std::move(e));
  }
  j["kernels"] = std::move(kernels);
  j["stop_reason"] = to_string(t.stop_reason);
  j["warmup_ms"] = number(t.warmup_ms);
  j["measure_wall_ms"] = number(t.measure_wall_ms);
  j["samples_us"] = numbers(t.samples_us);
  if (t.launch_overhead_us) j["launch_overhead_us"] = number(*t.launch_overhead_us);
  if (t.clocks) j["clocks"] = clocks_json(*t.clocks);
  if (!t.output_check.empty()) j["output_check"] = t.output_check;
  return j;
}

Json derived_json(const Derived& d) {
  Json j = Json::object();
  j["model_bytes"] = number(d.model_bytes);
  j["model_flops"] = number(d.model_flops);
  j["executed_bytes"] = number(d.executed_bytes);
  j["executed_flops"] = number(d.executed_flops);
  j["bandwidth_gbps"] = number(d.bandwidth_gbps);
  j["tflops"] = number(d.tflops);
  j["intensity"] = number(d.intensity);
  j["bound"] = d.bound;
  j["roofline_tflops"] = number(d.roofline_tflops);
  j["pct_of_roofline"] = number(d.pct_of_roofline);
  j["compute_roof_tflops"] = number(d.compute_roof_tflops);
  j["pct_of_compute_roof"] = number(d.pct_of_compute_roof);
  j["bandwidth_roof_gbps"] = number(d.bandwidth_roof_gbps);
  j["write_fraction"] = number(d.write_fraction);
  j["pct_of_bandwidth_ceiling"] = number(d.pct_of_bandwidth_ceiling);
  if (d.l2_resident) j["l2_resident"] = true;
  if (d.pct_of_l2_ceiling) j["pct_of_l2_ceiling"] = number(*d.pct_of_l2_ceiling);
  if (d.speedup_vs_baseline) j["speedup_vs_baseline"] = number(*d.speedup_vs_baseline);
  j["baseline_variant"] = d.baseline_variant;
  j["baseline_math"] = d.baseline_math;
  if (d.measured) j["measured"] = to_json(*d.measured);
  return j;
}

constexpr Role kAllRoles[] = {Role::fused, Role::baseline, Role::vendor};
constexpr Mode kAllModes[] = {Mode::cold, Mode::hot};
constexpr LaunchKind kAllLaunchKinds[] = {LaunchKind::stream, LaunchKind::graph};
constexpr Disposition kAllDispositions[] = {Disposition::passed, Disposition::failed,
                                            Disposition::skipped, Disposition::not_verified};
constexpr StopReason kAllStopReasons[] = {StopReason::converged, StopReason::time_limit,
                                          StopReason::max_samples};

// Records hold resolved element types only: "case_dtype" is not a valid value there.
std::optional<ElemType> parse_concrete_elem_type(std::string_view text) {
  auto type = parse_elem_type(text);
  if (type == ElemType::case_dtype) return std::nullopt;
  return type;
}

std::vector<double> read_numbers(const Node& n) {
  std::vector<double> out;
  out.reserve(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) out.push_back(n.at(i).number());
  return out;
}

SummaryStats read_stats(const Node& n) {
  SummaryStats s;
  s.count = n["count"].integer<std::int64_t>();
  s.median = n["median"].number();
  s.p10 = n["p10"].number();
  s.p90 = n["p90"].number();
  s.min = n["min"].number();
  s.max = n["max"].number();
  s.mean = n["mean"].number();
  s.stdev = n["stdev"].number();
  s.noise = n["noise"].number();
  return s;
}

Shape read_shape(const Node& n) {
  Shape shape;
  for (const auto& item : n.object().items()) {  // ordered_json: document order, i.e. axis order
    const Node value(item.value(), n.child_path(item.key()));
    if (item.value().is_string())
      shape.axes.emplace_back(item.key(), AxisValue(value.string()));
    else
      shape.axes.emplace_back(item.key(), AxisValue(value.integer<std::int64_t>()));
  }
  return shape;
}

TunableValues read_tunables(const Node& n) {
  TunableValues tunables;
  for (const auto& item : n.object().items())
    tunables.emplace_back(item.key(),
                          Node(item.value(), n.child_path(item.key())).integer<std::int64_t>());
  return tunables;
}

VerifyResult read_verify(const Node& n) {
  VerifyResult v;
  v.passed = n["passed"].boolean();
  v.atol = n["atol"].number();
  v.rtol = n["rtol"].number();
  v.elements_checked = n["elements_checked"].integer<std::int64_t>();
  v.mismatches = n["mismatches"].integer<std::int64_t>();
  v.nonfinite_mismatches = n["nonfinite_mismatches"].integer<std::int64_t>();
  v.unwritten = n["unwritten"].integer<std::int64_t>();
  v.all_zero = n["all_zero"].boolean();
  v.max_abs_err = n["max_abs_err"].number();
  v.max_rel_err = n["max_rel_err"].number();
  v.rel_l2_err = n["rel_l2_err"].number();
  v.rows_checked = n["rows_checked"].integer<std::int64_t>();
  v.rows_total = n["rows_total"].integer<std::int64_t>();
  Node list = n["first_mismatches"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    Node e = list.at(i);
    v.first_mismatches.push_back({e["tensor"].string(), e["index"].integer<std::int64_t>(),
                                  e["got"].number(), e["expected"].number()});
  }
  v.sampling = n["sampling"].string();
  // Reports written before the sample was drawn from the seed, or before bounds were recorded,
  // lack these keys: read as none.
  if (auto starts = n.find("sampled_block_starts")) {
    for (std::size_t i = 0; i < starts->size(); ++i)
      v.sampled_block_starts.push_back(starts->at(i).integer<std::int64_t>());
    v.sampled_block_length = n["sampled_block_length"].integer<std::int64_t>();
  }
  if (auto w = n.find("worst_bound_fraction")) v.worst_bound_fraction = w->number();
  if (auto o = n.find("oracle_source")) v.oracle_source = o->string();  // absent before the oracle cache
  Node outputs = n["outputs"];
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Node e = outputs.at(i);
    OutputCheck o;
    o.name = e["name"].string();
    o.elem = e["elem"].enumeration(parse_concrete_elem_type, kConcreteElemTypes);
    o.atol = e["atol"].number();
    o.rtol = e["rtol"].number();
    if (auto a = e.find("abs_sum_scale")) o.abs_sum_scale = a->number();
    if (auto r = e.find("root_sum_sq_scale")) o.root_sum_sq_scale = r->number();
    if (auto w = e.find("worst_bound_fraction")) o.worst_bound_fraction = w->number();
    o.elements_checked = e["elements_checked"].integer<std::int64_t>();
    o.elements_total = e["elements_total"].integer<std::int64_t>();
    o.sampled = e["sampled"].boolean();
    o.device_scanned = e["device_scanned"].boolean();
    o.nonfinite = e["nonfinite"].integer<std::int64_t>();
    o.unwritten = e["unwritten"].integer<std::int64_t>();
    o.mismatches = e["mismatches"].integer<std::int64_t>();
    o.nonfinite_mismatches = e["nonfinite_mismatches"].integer<std::int64_t>();
    o.max_abs_err = e["max_abs_err"].number();
    o.max_rel_err = e["max_rel_err"].number();
    o.passed = e["passed"].boolean();
    v.outputs.push_back(std::move(o));
  }
  return v;
}

ClockSummary read_clocks(const Node& n) {
  ClockSummary c;
  c.sm_min_mhz = n["sm_min_mhz"].number();
  c.sm_max_mhz = n["sm_max_mhz"].number();
  if (auto mean = n.find("sm_mean_mhz")) c.sm_mean_mhz = mean->number();
  c.sm_rated_max_mhz = n["sm_rated_max_mhz"].number();
  c.readings = n["readings"].integer<std::int64_t>();
  c.samples = n["samples"].integer<std::int64_t>();
  c.throttled_samples = n["throttled_samples"].integer<std::int64_t>();
  Node reasons = n["throttle_reasons"];
  for (std::size_t i = 0; i < reasons.size(); ++i) c.throttle_reasons.push_back(reasons.at(i).string());
  return c;
}

TimingResult read_timing(const Node& n) {
  TimingResult t;
  t.timer = n["timer"].string();
  t.mode = n["mode"].enumeration(parse_mode, kAllModes);
  Node flush = n["flush"];
  t.flush = flush.string();
  if (t.flush != "dirty" && t.flush != "clean" && t.flush != "none")
    flush.fail(fmt::format("unknown flush \"{}\" (expected one of: dirty, clean, none)", excerpt(t.flush)));
  // Older reports: every sample was a stream launch.
  if (auto launch = n.find("launch")) t.launch = launch->enumeration(parse_launch_kind, kAllLaunchKinds);
  t.preset = n["preset"].string();
  t.span = read_stats(n["span"]);
  t.busy = read_stats(n["busy"]);
  t.kernel_sum = read_stats(n["kernel_sum"]);
  t.kernels_per_sample = n["kernels_per_sample"].integer<std::int64_t>();
  Node kernels = n["kernels"];
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    Node k = kernels.at(i);
    t.kernels.push_back({k["name"].string(), k["launches_per_sample"].integer<std::int64_t>(),
                         k["median_us"].number()});
  }
  t.stop_reason = n["stop_reason"].enumeration(parse_stop_reason, kAllStopReasons);
  t.warmup_ms = n["warmup_ms"].number();
  t.measure_wall_ms = n["measure_wall_ms"].number();
  t.samples_us = read_numbers(n["samples_us"]);
  if (auto o = n.find("launch_overhead_us")) t.launch_overhead_us = o->number();  // older reports: none
  if (auto c = n.find("clocks")) t.clocks = read_clocks(*c);
  if (auto c = n.find("output_check")) t.output_check = c->string();  // older reports: none
  return t;
}

Derived read_derived(const Node& n) {
  Derived d;
  d.model_bytes = n["model_bytes"].number();
  d.model_flops = n["model_flops"].number();
  // Older reports: no executed work (every variant executed the model's).
  d.executed_bytes = n.find("executed_bytes") ? n["executed_bytes"].number() : d.model_bytes;
  d.executed_flops = n.find("executed_flops") ? n["executed_flops"].number() : d.model_flops;
  d.bandwidth_gbps = n["bandwidth_gbps"].number();
  d.tflops = n["tflops"].number();
  d.intensity = n["intensity"].number();
  d.bound = n["bound"].string();
  d.roofline_tflops = n["roofline_tflops"].number();
  d.pct_of_roofline = n["pct_of_roofline"].number();
  if (auto roof = n.find("compute_roof_tflops")) d.compute_roof_tflops = roof->number();
  if (auto pct = n.find("pct_of_compute_roof")) d.pct_of_compute_roof = pct->number();
  if (auto roof = n.find("bandwidth_roof_gbps")) d.bandwidth_roof_gbps = roof->number();  // older reports: none
  if (auto w = n.find("write_fraction")) d.write_fraction = w->number();
  d.pct_of_bandwidth_ceiling = n["pct_of_bandwidth_ceiling"].number();
  if (auto resident = n.find("l2_resident")) d.l2_resident = resident->boolean();
  if (auto l2 = n.find("pct_of_l2_ceiling")) d.pct_of_l2_ceiling = l2->number();
  if (auto s = n.find("speedup_vs_baseline")) d.speedup_vs_baseline = s->number();
  d.baseline_variant = n["baseline_variant"].string();
  if (auto m = n.find("baseline_math")) d.baseline_math = m->string();  // older reports: none
  if (auto m = n.find("measured")) d.measured = measured_from_json(*m);
  return d;
}

CaseRecord read_case(const Node& n) {
  n.object();
  CaseRecord c;
  c.index = n["index"].integer<int>();
  c.op = n["op"].string();
  c.variant = n["variant"].string();
  c.role = n["role"].enumeration(parse_role, kAllRoles);
  c.dtype = n["dtype"].enumeration(parse_dtype, kAllDTypes);
  c.shape = read_shape(n["shape"]);
  c.tunables = read_tunables(n["tunables"]);
  // Written by the build that measured it where its op labels its axes; otherwise this build's
  // labels, where it knows the op and labels it (shown_shape falls back to the compact form).
  if (auto l = n.find("shape_label"); l && !l->string().empty()) c.shape_label = l->string();
  else c.shape_label = recorded_shape_label(c.op, c.shape);
  // Absent from the reports of builds before they were recorded: unknown, shown as such.
  if (auto u = n.find("uses"))
    for (std::size_t i = 0; i < u->size(); ++i) c.uses.push_back(u->at(i).string());
  if (auto m = n.find("math")) c.math = m->string();
  c.disposition = n["disposition"].enumeration(parse_disposition, kAllDispositions);
  c.reason = n["reason"].string();
  if (auto v = n.find("verify")) c.verify = read_verify(*v);
  if (auto t = n.find("timing")) c.timing = read_timing(*t);
  if (auto d = n.find("derived")) c.derived = read_derived(*d);
  if (auto k = n.find("counters")) c.counters = counters_from_json(*k);
  if (auto k = n.find("ncu_counters")) c.ncu_counters = counters_from_json(*k);
  // Absent from the reports of builds before it was recorded.
  if (auto w = n.find("workspace_bytes")) c.workspace_bytes = w->integer<std::int64_t>();
  if (auto m = n.find("device_memory_bytes")) c.device_memory_bytes = m->integer<std::int64_t>();
  c.nvtx_range = n["nvtx_range"].string();
  if (auto d = n.find("device")) c.device = d->integer<int>();  // only in runs over several GPUs
  if (auto s = n.find("stages")) c.stages = stage_times_from_json(*s);
  c.repro = n["repro"].string();
  if (auto p = n.find("plugin")) c.plugin = PluginSource{(*p)["path"].string(), (*p)["sha256"].string()};
  return c;
}

RunInfo read_run(const Node& n) {
  n.object();
  RunInfo r;
  r.tool_version = n["tool_version"].string();
  r.git_sha = n["git_sha"].string();
  r.command_line = n["command_line"].string();
  r.host = n["host"].string();
  r.started_at = n["started_at"].string();
  r.finished_at = n["finished_at"].string();
  r.complete = n["complete"].boolean();
  Node settings = n["settings"];
  for (const auto& item : settings.object().items())
    r.settings[item.key()] = Node(item.value(), settings.child_path(item.key())).string();
  if (auto d = n.find("device")) r.device = device_info_from_json(*d);
  if (auto d = n.find("devices")) {  // only in runs over several GPUs
    for (std::size_t i = 0; i < d->size(); ++i) r.devices.push_back(device_info_from_json(d->at(i)));
  }
  if (auto c = n.find("ceilings")) r.ceilings = ceilings_from_json(*c);
  if (auto c = n.find("datasheet_ceilings")) r.datasheet_ceilings = ceilings_from_json(*c);
  if (auto s = n.find("suite")) r.suite = read_suite(*s);  // reports before suites have none
  if (auto s = n.find("shard")) r.shard = read_shard(*s);  // reports before shards have none
  if (auto m = n.find("merged")) r.merged = read_merge(*m);
  if (auto s = n.find("session_stages")) r.session_stages_s = session_stages_from_json(*s);
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

Json shape_json(const Shape& shape) {
  Json j = Json::object();  // ordered: keeps the op's axis order
  for (const auto& [axis, value] : shape.axes) {
    if (value.is_choice())
      j[axis] = value.choice();  // a choice is a JSON string, an integer a number
    else
      j[axis] = value.integer();
  }
  return j;
}

Json tunables_json(const TunableValues& tunables) {
  Json j = Json::object();  // ordered: keeps the variant's declaration order
  for (const auto& [name, value] : tunables) j[name] = value;
  return j;
}

Json to_json(const CaseRecord& c) {
  Json j = Json::object();
  j["index"] = c.index;
  j["op"] = c.op;
  j["variant"] = c.variant;
  j["role"] = to_string(c.role);
  j["dtype"] = to_string(c.dtype);
  j["shape"] = shape_json(c.shape);
  j["shape_compact"] = c.shape.to_compact();  // for people reading the file; never read back
  if (!c.shape_label.empty()) j["shape_label"] = c.shape_label;
  j["tunables"] = tunables_json(c.tunables);
  j["uses"] = c.uses;
  j["math"] = c.math;
  j["disposition"] = to_string(c.disposition);
  j["reason"] = c.reason;
  if (c.verify) j["verify"] = verify_json(*c.verify);
  if (c.timing) j["timing"] = timing_json(*c.timing);
  if (c.derived) j["derived"] = derived_json(*c.derived);
  if (c.counters) j["counters"] = to_json(*c.counters);
  if (c.ncu_counters) j["ncu_counters"] = to_json(*c.ncu_counters);
  j["workspace_bytes"] = c.workspace_bytes;
  if (c.device_memory_bytes) j["device_memory_bytes"] = *c.device_memory_bytes;
  j["nvtx_range"] = c.nvtx_range;
  j["repro"] = c.repro;
  if (c.device) j["device"] = *c.device;
  if (c.stages) j["stages"] = to_json(*c.stages);
  if (c.plugin) j["plugin"] = Json{{"path", c.plugin->path}, {"sha256", c.plugin->sha256}};
  return j;
}

CaseRecord case_from_json(const Json& j) { return read_case(Node(j, "")); }
CaseRecord case_from_json(const Node& n) { return read_case(n); }

Json to_json(const RunInfo& r) {
  Json j = Json::object();
  j["tool_version"] = r.tool_version;
  j["git_sha"] = r.git_sha;
  j["command_line"] = r.command_line;
  j["host"] = r.host;
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at;
  j["complete"] = r.complete;
  Json settings = Json::object();
  for (const auto& [key, value] : r.settings) settings[key] = value;
  j["settings"] = std::move(settings);
  if (r.device) j["device"] = to_json(*r.device);
  if (!r.devices.empty()) {
    Json devices = Json::array();
    for (const auto& d : r.devices) devices.push_back(to_json(d));
    j["devices"] = std::move(devices);
  }
  if (r.ceilings) j["ceilings"] = to_json(*r.ceilings);
  if (r.datasheet_ceilings) j["datasheet_ceilings"] = to_json(*r.datasheet_ceilings);
  if (r.suite) j["suite"] = suite_json(*r.suite);
  if (r.shard) j["shard"] = shard_json(*r.shard);
  if (r.merged) j["merged"] = merge_json(*r.merged);
  if (!r.session_stages_s.empty()) j["session_stages"] = session_stages_json(r.session_stages_s);
  return j;
}

RunInfo run_info_from_json(const Json& j) { return read_run(Node(j, "")); }
RunInfo run_info_from_json(const Node& n) { return read_run(n); }

std::string dump_json(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kwb
