// Reads run.suite.thresholds (see suite_thresholds.hpp).
#include "compare/suite_thresholds.hpp"

#include <cmath>

#include <fmt/format.h>

#include "record/json_node.hpp"
#include "sinks/atomic_file.hpp"

namespace kwb {

std::map<std::string, double> suite_thresholds_from_json(const nlohmann::ordered_json& report) {
  std::map<std::string, double> out;
  json_read::Node root(report, "");
  auto run = root.find("run");
  if (!run || !run->json().is_object()) return out;
  auto suite = run->find("suite");
  if (!suite || !suite->json().is_object()) return out;
  auto thresholds = suite->find("thresholds");
  if (!thresholds) return out;
  for (const auto& item : thresholds->object().items()) {
    json_read::Node value(item.value(), thresholds->child_path(item.key()));
    const double t = value.number();
    if (!(t > 0 && t < 1))
      value.fail(fmt::format("threshold {} is not a fraction between 0 and 1 (write 0.03 for 3%)", item.value().dump()));
    out[item.key()] = t;
  }
  return out;
}

std::map<std::string, double> read_suite_thresholds(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);  // its errors name the path already
  try {
    return suite_thresholds_from_json(nlohmann::ordered_json::parse(text));
  } catch (const nlohmann::ordered_json::parse_error& e) {
    throw ReportError(fmt::format("{}: invalid JSON: {}", path.string(), e.what()));
  } catch (const ReportError& e) {
    throw ReportError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace kwb
