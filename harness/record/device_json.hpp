// The device a run measured on (DeviceInfo) and its ceilings (Ceilings), to and from JSON with the
// record codec's strictness (record_json.hpp), which calls these for a run's "device", "devices"
// and "ceilings"; the ceilings cache reads and writes them too.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/record/json_node.hpp"
#include "harness/record/record.hpp"

namespace kwb {

nlohmann::ordered_json to_json(const DeviceInfo& device);
DeviceInfo device_info_from_json(const json_read::Node& n);  // throws ReportError naming the path
DeviceInfo device_info_from_json(const nlohmann::ordered_json& j);

nlohmann::ordered_json to_json(const Ceilings& ceilings);
Ceilings ceilings_from_json(const json_read::Node& n);
Ceilings ceilings_from_json(const nlohmann::ordered_json& j);

}  // namespace kwb
