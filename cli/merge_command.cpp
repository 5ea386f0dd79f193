// `kwb merge --out DIR SHARD.json...`: joins the reports of `kwb run --shard I/N` into one
// report.json and report.csv of the whole plan, in plan order.
//
// Exit codes: 0 merged, every shard present; 1 merged, but shards are missing (or one was
// interrupted): the report is written and marked incomplete; 2 bad input: flags, a report that
// cannot be read, or shards that cannot be joined (other plans, shard counts, settings or GPUs,
// a shard twice, overlapping cases); the message names the files.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "reports/merge/merge_reports.hpp"
#include "harness/record/csv_report.hpp"
#include "harness/record/output_paths.hpp"

namespace kwb::cli {
namespace {

struct MergeFlags {
  std::vector<std::string> reports;
  std::string out;
  bool allow_mixed_devices = false;
};

int merge(const MergeFlags& f) {
  if (f.out.empty()) {
    std::cerr << "kwb merge: --out: the folder name is empty; pass a folder for the merged reports, e.g. --out merged\n";
    return kExitBadInput;
  }
  std::vector<ShardReport> shards;
  MergeResult result;
  try {
    for (const auto& path : f.reports) shards.push_back({path, read_report_json(path)});
    result = merge_shard_reports(shards, {.allow_mixed_devices = f.allow_mixed_devices,
                                          .command_line = invoked_command_line()});
  } catch (const ReportError& e) {
    std::cerr << "kwb merge: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const MergeError& e) {
    std::cerr << "kwb merge: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (auto problem = check_output_folder(f.out, {"report.json", "report.csv"})) {
    std::cerr << fmt::format("kwb merge: --out: {}; pass another folder\n", *problem);
    return kExitBadInput;
  }
  const std::filesystem::path out(f.out);
  try {
    write_report_json(out / "report.json", result.report);
    write_report_csv(out / "report.csv", result.report);
  } catch (const std::exception& e) {
    std::cerr << "kwb merge: cannot write the merged reports: " << e.what() << "\n";
    return kExitBadInput;
  }
  for (const auto& w : result.warnings) std::cerr << "kwb merge: warning: " << w << "\n";
  const MergeInfo& m = *result.report.run.merged;
  std::cerr << fmt::format("kwb merge: {} shard(s) of {}, {} of {} cases; wrote {} and {}\n", m.shards.size(),
                           m.shard_count, result.report.cases.size(), m.plan_cases, (out / "report.json").string(),
                           (out / "report.csv").string());
  return result.report.run.complete ? kExitOk : kExitCaseFailed;
}

}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "merge", "Join the reports of `kwb run --shard I/N` into one report.json and report.csv in plan order");
  static MergeFlags f;
  cmd->add_option("REPORTS", f.reports, "The shards' report.json files, in any order")->required();
  cmd->add_option("--out", f.out, "Folder for the merged report.json and report.csv")->required()->type_name("DIR");
  cmd->add_flag("--allow-mixed-devices", f.allow_mixed_devices,
                "Join shards measured on GPUs of different kinds (each shard's device is listed in run.merged)");
  cmd->footer("Exit codes: 0 merged, 1 merged but shards missing or interrupted (report marked incomplete), "
              "2 bad input (unreadable report, other plans, shard counts, settings or GPUs, overlapping shards).");
  cmd->callback([&exit_code] { exit_code = merge(f); });
}

}  // namespace kwb::cli
