#include "harness/record/stage_times.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

namespace kwb {
namespace {

using json_read::Node;
using Json = nlohmann::ordered_json;

// The stages in the order a case runs them: JSON key, member, what it covers.
struct StageField {
  const char* key;
  double CaseStageTimes::*member;
  const char* what;
};
constexpr std::array kStageFields{
    StageField{"setup_ms", &CaseStageTimes::setup_ms, "device state reset, stream, memory check"},
    StageField{"inputs_ms", &CaseStageTimes::inputs_ms, "inputs drawn on the GPU, sampled slabs to the host"},
    StageField{"oracle_ms", &CaseStageTimes::oracle_ms, "fp64 oracle, once per input group"},
    StageField{"prepare_ms", &CaseStageTimes::prepare_ms, "variants' prepare()"},
    StageField{"verify_ms", &CaseStageTimes::verify_ms, "launch on poisoned outputs, scan, compare"},
    StageField{"measure_ms", &CaseStageTimes::measure_ms, "warm-up, timed samples, timed output check"},
    StageField{"counters_ms", &CaseStageTimes::counters_ms, "counter replay passes"},
    StageField{"isolation_ms", &CaseStageTimes::isolation_ms, "device state read before, checked after"},
    StageField{"overhead_ms", &CaseStageTimes::overhead_ms, "protocol, record encoding, derivation"},
    // Last, and not wall time: done while the previous group was timed.
    StageField{"oracle_background_ms", &CaseStageTimes::oracle_background_ms,
               "oracle on a background thread while the group before was timed (not wall time)"},
};

}  // namespace

Json to_json(const CaseStageTimes& stages) {
  Json j = Json::object();
  for (const StageField& f : kStageFields) j[f.key] = json_write::number(stages.*f.member);
  return j;
}

CaseStageTimes stage_times_from_json(const Node& n) {
  n.object();
  CaseStageTimes stages;
  // A stage added after a report was written is absent from it: 0.
  for (const StageField& f : kStageFields)
    if (auto v = n.find(f.key)) stages.*f.member = v->number();
  return stages;
}

Json session_stages_json(const std::vector<std::pair<std::string, double>>& stages) {
  Json j = Json::array();
  for (const auto& [name, seconds] : stages) j.push_back({{"stage", name}, {"seconds", json_write::number(seconds)}});
  return j;
}

std::vector<std::pair<std::string, double>> session_stages_from_json(const Node& n) {
  std::vector<std::pair<std::string, double>> stages;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const Node item = n.at(i);
    stages.emplace_back(item["stage"].string(), item["seconds"].number());
  }
  return stages;
}

TimeReport time_report(const std::vector<std::pair<std::string, double>>& session_stages_s,
                       const std::vector<CaseRecord>& cases) {
  TimeReport report;
  for (const auto& [name, seconds] : session_stages_s) {
    report.session.push_back({name, seconds, ""});
    report.wall_s += seconds;
  }
  for (const StageField& f : kStageFields) {
    std::string name = f.key;
    name.resize(name.size() - 3);  // "_ms"
    report.cases.push_back({name, 0.0, f.what});
  }
  std::map<std::string, TimeReportOp> by_op;
  for (const CaseRecord& c : cases) {
    if (!c.stages) continue;
    ++report.cases_with_stages;
    report.groups_prepared += c.stages->inputs_ms > 0;
    for (std::size_t i = 0; i < kStageFields.size(); ++i)
      report.cases[i].seconds += (*c.stages).*kStageFields[i].member / 1000.0;
    TimeReportOp& op = by_op[c.op];
    op.op = c.op;
    ++op.cases;
    op.total_s += c.stages->total_ms() / 1000.0;
    op.inputs_s += c.stages->inputs_ms / 1000.0;
    op.oracle_s += c.stages->oracle_ms / 1000.0;
    op.verify_s += c.stages->verify_ms / 1000.0;
    op.measure_s += c.stages->measure_ms / 1000.0;
    op.oracle_background_s += c.stages->oracle_background_ms / 1000.0;
    op.oracle_from_cache += c.verify && c.verify->oracle_source == "cache";
  }
  for (auto& [name, op] : by_op) report.ops.push_back(std::move(op));
  std::stable_sort(report.ops.begin(), report.ops.end(),
                   [](const TimeReportOp& a, const TimeReportOp& b) { return a.total_s > b.total_s; });
  return report;
}

std::string format_time_report(const TimeReport& report) {
  const auto share = [&](double seconds) {
    return report.wall_s > 0 ? fmt::format("{:5.1f}%", 100.0 * seconds / report.wall_s) : std::string("     -");
  };
  std::string out = fmt::format("where the time went ({:.1f} s of wall time):\n", report.wall_s);
  for (const auto& line : report.session)
    out += fmt::format("  {:<14} {:9.1f} s  {}\n", line.stage, line.seconds, share(line.seconds));
  out += fmt::format("  of the cases ({} with stage times, {} input groups prepared):\n", report.cases_with_stages,
                     report.groups_prepared);
  for (const auto& line : report.cases)
    out += fmt::format("    {:<12} {:9.1f} s  {}  {}\n", line.stage, line.seconds, share(line.seconds), line.what);
  if (report.ops.empty()) return out;
  out += fmt::format("  by op (seconds; total is every stage of its cases; the background oracle is not wall time):\n");
  out += fmt::format("    {:<28} {:>5} {:>8} {:>7} {:>7} {:>7} {:>8} {:>10} {:>12}\n", "op", "cases", "total", "inputs",
                     "oracle", "verify", "measure", "background", "oracle cache");
  const auto line = [&](const TimeReportOp& op) {
    out += fmt::format("    {:<28} {:>5} {:>8.1f} {:>7.1f} {:>7.1f} {:>7.1f} {:>8.1f} {:>10.1f} {:>12}\n", op.op, op.cases,
                       op.total_s, op.inputs_s, op.oracle_s, op.verify_s, op.measure_s, op.oracle_background_s,
                       fmt::format("{}/{}", op.oracle_from_cache, op.cases));
  };
  TimeReportOp rest;
  for (std::size_t i = 0; i < report.ops.size(); ++i) {
    if (i < kTimeReportOps) {
      line(report.ops[i]);
      continue;
    }
    const TimeReportOp& op = report.ops[i];
    rest.cases += op.cases;
    rest.total_s += op.total_s;
    rest.inputs_s += op.inputs_s;
    rest.oracle_s += op.oracle_s;
    rest.verify_s += op.verify_s;
    rest.measure_s += op.measure_s;
    rest.oracle_background_s += op.oracle_background_s;
    rest.oracle_from_cache += op.oracle_from_cache;
  }
  if (report.ops.size() > kTimeReportOps) {
    rest.op = fmt::format("({} other ops)", report.ops.size() - kTimeReportOps);
    line(rest);
  }
  return out;
}

}  // namespace kwb
