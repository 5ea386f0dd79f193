#include "harness/record/device_json.hpp"

namespace kwb {

using json_read::Node;
using json_write::number;
using Json = nlohmann::ordered_json;

Json to_json(const DeviceInfo& d) {
  Json j = Json::object();
  j["index"] = d.index;
  j["name"] = d.name;
  j["uuid"] = d.uuid;
  j["sm_count"] = d.sm_count;
  j["cc_major"] = d.cc_major;
  j["cc_minor"] = d.cc_minor;
  j["sm_clock_mhz"] = number(d.sm_clock_mhz);
  j["mem_clock_mhz"] = number(d.mem_clock_mhz);
  j["mem_bus_width_bits"] = d.mem_bus_width_bits;
  j["global_mem_bytes"] = d.global_mem_bytes;
  j["l2_bytes"] = d.l2_bytes;
  j["driver_version"] = d.driver_version;
  j["runtime_version"] = d.runtime_version;
  j["cupti_version"] = d.cupti_version;
  if (!d.chip.empty()) j["chip"] = d.chip;
  j["driver_release"] = d.driver_release;
  return j;
}

Json to_json(const Ceilings& c) {
  Json j = Json::object();
  j["source"] = c.source;
  j["measured_at"] = c.measured_at;
  j["dram_copy_gbps"] = number(c.dram_copy_gbps);
  j["dram_copy_method"] = c.dram_copy_method;
  Json methods = Json::object();
  for (const auto& [name, gbps] : c.dram_copy_by_method) methods[name] = number(gbps);
  j["dram_copy_by_method"] = std::move(methods);
  j["dram_read_gbps"] = number(c.dram_read_gbps);
  if (!c.dram_read_method.empty()) j["dram_read_method"] = c.dram_read_method;
  if (!c.dram_read_by_method.empty()) {
    Json reads = Json::object();
    for (const auto& [name, gbps] : c.dram_read_by_method) reads[name] = number(gbps);
    j["dram_read_by_method"] = std::move(reads);
  }
  if (c.dram_write_gbps > 0) {  // absent: not measured (datasheet, older caches and reports)
    j["dram_write_gbps"] = number(c.dram_write_gbps);
    j["dram_write_method"] = c.dram_write_method;
    Json writes = Json::object();
    for (const auto& [name, gbps] : c.dram_write_by_method) writes[name] = number(gbps);
    j["dram_write_by_method"] = std::move(writes);
  }
  j["l2_copy_gbps"] = number(c.l2_copy_gbps);
  j["l2_working_set_bytes"] = c.l2_working_set_bytes;
  j["fp32_tflops"] = number(c.fp32_tflops);
  Json tensor = Json::object();
  for (const auto& [dtype, tflops] : c.tensor_tflops) tensor[dtype] = number(tflops);
  j["tensor_tflops"] = std::move(tensor);
  if (!c.tensor_sm_mhz.empty()) {
    Json clocks = Json::object();
    for (const auto& [dtype, mhz] : c.tensor_sm_mhz) clocks[dtype] = number(mhz);
    j["tensor_sm_mhz"] = std::move(clocks);
  }
  return j;
}

DeviceInfo device_info_from_json(const Node& n) {
  DeviceInfo d;
  d.index = n["index"].integer<int>();
  d.name = n["name"].string();
  d.uuid = n["uuid"].string();
  d.sm_count = n["sm_count"].integer<int>();
  d.cc_major = n["cc_major"].integer<int>();
  d.cc_minor = n["cc_minor"].integer<int>();
  d.sm_clock_mhz = n["sm_clock_mhz"].number();
  d.mem_clock_mhz = n["mem_clock_mhz"].number();
  d.mem_bus_width_bits = n["mem_bus_width_bits"].integer<int>();
  d.global_mem_bytes = n["global_mem_bytes"].integer<std::int64_t>();
  d.l2_bytes = n["l2_bytes"].integer<std::int64_t>();
  d.driver_version = n["driver_version"].integer<int>();
  d.runtime_version = n["runtime_version"].integer<int>();
  d.cupti_version = n["cupti_version"].integer<std::uint32_t>();
  if (auto c = n.find("chip")) d.chip = c->string();
  d.driver_release = n["driver_release"].string();
  return d;
}

Ceilings ceilings_from_json(const Node& n) {
  Ceilings c;
  c.source = n["source"].string();
  c.measured_at = n["measured_at"].string();
  c.dram_copy_gbps = n["dram_copy_gbps"].number();
  c.dram_copy_method = n["dram_copy_method"].string();
  Node methods = n["dram_copy_by_method"];
  for (const auto& item : methods.object().items())
    c.dram_copy_by_method[item.key()] = Node(item.value(), methods.child_path(item.key())).number();
  c.dram_read_gbps = n["dram_read_gbps"].number();
  if (auto method = n.find("dram_read_method")) c.dram_read_method = method->string();  // older: one kernel
  if (auto reads = n.find("dram_read_by_method"))
    for (const auto& item : reads->object().items())
      c.dram_read_by_method[item.key()] = Node(item.value(), reads->child_path(item.key())).number();
  if (auto write = n.find("dram_write_gbps")) {
    c.dram_write_gbps = write->number();
    if (auto method = n.find("dram_write_method")) c.dram_write_method = method->string();
    if (auto writes = n.find("dram_write_by_method"))
      for (const auto& item : writes->object().items())
        c.dram_write_by_method[item.key()] = Node(item.value(), writes->child_path(item.key())).number();
  }
  c.l2_copy_gbps = n["l2_copy_gbps"].number();
  c.l2_working_set_bytes = n["l2_working_set_bytes"].integer<std::int64_t>();
  c.fp32_tflops = n["fp32_tflops"].number();
  Node tensor = n["tensor_tflops"];
  for (const auto& item : tensor.object().items())
    c.tensor_tflops[item.key()] = Node(item.value(), tensor.child_path(item.key())).number();
  if (auto clocks = n.find("tensor_sm_mhz"))
    for (const auto& item : clocks->object().items())
      c.tensor_sm_mhz[item.key()] = Node(item.value(), clocks->child_path(item.key())).number();
  return c;
}

DeviceInfo device_info_from_json(const Json& j) { return device_info_from_json(Node(j, "")); }
Ceilings ceilings_from_json(const Json& j) { return ceilings_from_json(Node(j, "")); }

}  // namespace kwb
