// The codec of a case's hardware counters and their measured roofline point (see counters_json.hpp).
#include "harness/record/counters_json.hpp"

namespace kwb {
namespace {

using Json = nlohmann::ordered_json;
using json_read::Node;
using json_write::number;

Json metric_values_json(const std::map<std::string, double>& values) {
  Json j = Json::object();
  for (const auto& [metric, value] : values) j[metric] = number(value);
  return j;
}

std::map<std::string, double> read_metric_values(const Node& n) {
  std::map<std::string, double> out;
  for (const auto& item : n.object().items())
    out[item.key()] = Node(item.value(), n.child_path(item.key())).number();
  return out;
}

std::vector<std::string> read_strings(const Node& n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n.size(); ++i) out.push_back(n.at(i).string());
  return out;
}

}  // namespace

Json to_json(const MeasuredWork& m) {
  Json j = Json::object();
  j["dram_bytes"] = number(m.dram_bytes);
  j["traffic_ratio"] = number(m.traffic_ratio);
  if (m.flops) j["flops"] = number(*m.flops);
  if (m.flop_ratio) j["flop_ratio"] = number(*m.flop_ratio);
  if (m.intensity) j["intensity"] = number(*m.intensity);
  j["flags"] = m.flags;
  return j;
}

Json to_json(const CaseCounters& c) {
  Json j = Json::object();
  j["source"] = c.source;
  j["chip"] = c.chip;
  j["sets"] = c.sets;
  j["metrics"] = c.metrics;
  j["passes"] = c.passes;
  j["note"] = c.note;
  if (!c.unavailable.empty()) j["unavailable"] = c.unavailable;
  Json kernels = Json::array();
  for (const KernelCounters& k : c.kernels) {
    Json e = Json::object();
    e["name"] = k.name;
    e["values"] = metric_values_json(k.values);
    if (k.launch) {
      const KernelLaunch& l = *k.launch;
      Json launch = Json::object();
      launch["grid"] = {l.grid[0], l.grid[1], l.grid[2]};
      launch["block"] = {l.block[0], l.block[1], l.block[2]};
      launch["registers_per_thread"] = l.registers_per_thread;
      launch["static_shared_bytes"] = l.static_shared_bytes;
      launch["dynamic_shared_bytes"] = l.dynamic_shared_bytes;
      launch["blocks_per_sm"] = l.blocks_per_sm;
      launch["theoretical_occupancy"] = number(l.theoretical_occupancy);
      launch["waves"] = number(l.waves);
      e["launch"] = std::move(launch);
    }
    kernels.push_back(std::move(e));
  }
  j["kernels"] = std::move(kernels);
  j["total"] = metric_values_json(c.total);
  return j;
}

MeasuredWork measured_from_json(const Node& n) {
  MeasuredWork m;
  m.dram_bytes = n["dram_bytes"].number();
  m.traffic_ratio = n["traffic_ratio"].number();
  if (auto f = n.find("flops")) m.flops = f->number();
  if (auto f = n.find("flop_ratio")) m.flop_ratio = f->number();
  if (auto f = n.find("intensity")) m.intensity = f->number();
  Node flags = n["flags"];
  for (std::size_t i = 0; i < flags.size(); ++i) m.flags.push_back(flags.at(i).string());
  return m;
}

CaseCounters counters_from_json(const Node& n) {
  CaseCounters c;
  c.source = n["source"].string();
  c.chip = n["chip"].string();
  c.sets = read_strings(n["sets"]);
  c.metrics = read_strings(n["metrics"]);
  c.passes = n["passes"].integer<int>();
  c.note = n["note"].string();
  if (auto u = n.find("unavailable")) c.unavailable = u->string();
  Node kernels = n["kernels"];
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    Node k = kernels.at(i);
    KernelCounters kc;
    kc.name = k["name"].string();
    kc.values = read_metric_values(k["values"]);
    if (auto l = k.find("launch")) {
      KernelLaunch launch;
      Node grid = (*l)["grid"], block = (*l)["block"];
      // Each names its own path: a block of 2 dimensions is the block's fault, not the grid's.
      for (const Node* dims : {&grid, &block})
        if (dims->size() != 3) dims->fail(fmt::format("expected 3 dimensions (x, y, z), got {}", dims->size()));
      for (std::size_t d = 0; d < 3; ++d) {
        launch.grid[d] = grid.at(d).integer<std::int64_t>();
        launch.block[d] = block.at(d).integer<std::int64_t>();
      }
      launch.registers_per_thread = (*l)["registers_per_thread"].integer<std::int64_t>();
      launch.static_shared_bytes = (*l)["static_shared_bytes"].integer<std::int64_t>();
      launch.dynamic_shared_bytes = (*l)["dynamic_shared_bytes"].integer<std::int64_t>();
      launch.blocks_per_sm = (*l)["blocks_per_sm"].integer<std::int64_t>();
      launch.theoretical_occupancy = (*l)["theoretical_occupancy"].number();
      launch.waves = (*l)["waves"].number();
      kc.launch = launch;
    }
    c.kernels.push_back(std::move(kc));
  }
  c.total = read_metric_values(n["total"]);
  return c;
}

}  // namespace kwb
