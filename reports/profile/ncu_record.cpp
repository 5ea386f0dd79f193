// Writing ncu's figures into records (see ncu_record.hpp).
#include "reports/profile/ncu_record.hpp"

#include <fmt/format.h>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/profile_case.hpp"

namespace kwb {

using Json = nlohmann::ordered_json;

void write_ncu_counters_into_report(const std::filesystem::path& report_path, const std::string& identity,
                                    const CaseCounters& counters) {
  // Read and checked as a report first (a clear error for a file that is not one).
  const Report report = read_report_json(report_path);
  find_case(report, identity, report_path.string());
  Json j = Json::parse(read_text_file(report_path));  // parsed above: it is valid JSON
  CaseRecord carrier;
  carrier.ncu_counters = counters;
  Json counters_json = to_json(carrier).at("ncu_counters");
  bool written = false;
  for (Json& c : j.at("cases"))
    if (c.is_object() && c.value("nvtx_range", std::string()) == identity) {
      c["ncu_counters"] = counters_json;
      written = true;
      break;
    }
  if (!written)  // the reader found it; its JSON must hold it too
    throw ReportError(fmt::format("{}: the case '{}' read back but its JSON entry was not found", report_path.string(),
                                  identity));
  j["schema"] = kReportSchema;
  atomic_write_file(report_path, dump_json(j, 2) + "\n");
}

void write_ncu_record(const std::filesystem::path& path, Report report, const std::string& identity,
                      const CaseCounters& counters, const std::string& report_path_for_messages) {
  CaseRecord record = find_case(report, identity, report_path_for_messages);
  record.ncu_counters = counters;
  report.cases = {record};
  write_report_json(path, report);
}

}  // namespace kwb
