// The kwb.report/3 envelope (and /2, read) and its files: schema check, run info, cases, atomic write.
#include "harness/record/json_report.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "harness/record/speedup_summary.hpp"
#include "harness/record/json_node.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {

using Json = nlohmann::ordered_json;
using json_read::Node;

Json report_to_json(const Report& report) {
  Json j = Json::object();
  j["schema"] = kReportSchema;
  j["run"] = to_json(report.run);
  Json cases = Json::array();
  for (const CaseRecord& c : report.cases) cases.push_back(to_json(c));
  j["cases"] = std::move(cases);
  // Derived from the cases for people and tools reading the file; never read back.
  Json speedups = Json::array();
  for (const SpeedupRow& r : speedup_summary(report.cases))
    speedups.push_back({{"op", r.op},
                        {"dtype", to_string(r.dtype)},
                        {"shape", r.shape.to_compact()},
                        {"mode", to_string(r.mode)},
                        {"baseline_variant", r.baseline_variant},
                        {"baseline_us", r.baseline_us},
                        {"baseline_kernels", r.baseline_kernels},
                        {"baseline_workspace_bytes", r.baseline_workspace_bytes},
                        {"baseline_memory_bytes", r.baseline_memory_bytes},
                        {"best_variant", r.best_variant},
                        {"best_us", r.best_us},
                        {"best_kernels", r.best_kernels},
                        {"best_workspace_bytes", r.best_workspace_bytes},
                        {"best_memory_bytes", r.best_memory_bytes},
                        {"best_pct_of_copy", r.best_pct_of_copy},
                        {"best_pct_of_roofline", r.best_pct_of_roofline},
                        {"baseline_uses", r.baseline_uses},
                        {"baseline_math", r.baseline_math},
                        {"best_uses", r.best_uses},
                        {"best_math", r.best_math},
                        {"math_note", r.math_note},
                        {"speedup", r.speedup}});
  j["speedups"] = std::move(speedups);
  return j;
}

Report report_from_json(const Json& j) {
  Node root(j, "");
  // The schema is checked first: a report from another version fails with that, not with
  // whichever key happened to change.
  const std::string& schema = root["schema"].string();
  if (schema != kReportSchema && schema != kOlderReportSchema)
    root["schema"].fail(fmt::format("unsupported report schema \"{}\"; this build reads \"{}\" and \"{}\"",
                                    excerpt(schema), kReportSchema, kOlderReportSchema));
  Report report;
  report.run = run_info_from_json(root["run"]);
  Node cases = root["cases"];
  report.cases.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) report.cases.push_back(case_from_json(cases.at(i)));
  return report;
}

Report read_report_json(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  // An empty file is said as such (a run killed before its first write, a truncated copy), not as
  // a parse error at byte 1.
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ReportError(fmt::format("{}: the file is empty ({} bytes); a report.json written by `kwb run` holds the "
                                  "run and its cases",
                                  path.string(), text.size()));
  check_json_text(text, path);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::out_of_range& e) {  // a number beyond double, such as 1e400
    throw ReportError(fmt::format("{}: invalid JSON: {}", path.string(), json_library_message(e.what())));
  } catch (const Json::parse_error& e) {
    // The library's message already says "parse error at line L, column C: ...".
    throw ReportError(fmt::format("{}: invalid JSON (byte {}): {}", path.string(), e.byte, json_library_message(e.what())));
  }
  try {
    return report_from_json(j);
  } catch (const ReportError& e) {
    throw ReportError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

void write_report_json(const std::filesystem::path& path, const Report& report) {
  atomic_write_file(path, dump_json(report_to_json(report), 2) + "\n");
}

}  // namespace kwb
