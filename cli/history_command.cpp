// `kwb history add REPORT.json... [--db PATH]` stores reports in the result history;
// `kwb history show [--op OP] [--case TEXT] [--device TEXT] [--db PATH]` prints the trend of each
// matching case with its change points (reports/history/change_points.hpp says the rule).
//
// The history needs SQLite (libsqlite3-dev), which is optional at configure time: a build without
// it still has the verb, which says what is missing and how to get it (exit 2).
// Exit codes: 0 done, 2 bad input (a report that cannot be read, a database that cannot be opened
// or is of a newer schema, an --op that the database holds no result of).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "reports/history/trend_text.hpp"
#ifdef KWB_HAVE_SQLITE3
#include "reports/history/history_store.hpp"
#include "harness/plan/suggest.hpp"
#include "harness/record/json_node.hpp"
#include "harness/record/json_report.hpp"
#endif

namespace kwb::cli {
namespace {

// A nightly's store holds thousands of cases; a screenful is what `show` prints unless asked.
constexpr std::size_t kDefaultShownCases = 20;

struct HistoryFlags {
  std::string db;
  std::vector<std::string> reports;
  std::string op, identity, device;
  std::size_t limit = kDefaultShownCases;
};

#ifdef KWB_HAVE_SQLITE3

std::string db_path(const HistoryFlags& f) {
  return f.db.empty() ? history::default_history_path().string() : f.db;
}

int add(const HistoryFlags& f) {
  // Every report is read before the database is touched, so a typo in the last one adds nothing.
  std::vector<Report> reports;
  try {
    for (const auto& path : f.reports) reports.push_back(read_report_json(path));
  } catch (const ReportError& e) {
    std::cerr << "kwb history add: " << e.what() << "\n(nothing was added)\n";
    return kExitBadInput;
  }
  try {
    history::HistoryStore store(db_path(f));
    int added = 0, already = 0, cases = 0;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      const history::AddResult r = store.add_report(reports[i], f.reports[i]);
      if (r.already_present) {
        ++already;
        std::cout << fmt::format("{}: already in the database, skipped\n", f.reports[i]);
      } else {
        ++added;
        cases += r.cases_added;
        std::cout << fmt::format("{}: added {} case(s)\n", f.reports[i], r.cases_added);
      }
    }
    std::cout << fmt::format("{} report(s) added ({} case(s)), {} already in the database; {} now holds {} report(s)\n",
                             added, cases, already, store.path().string(), store.report_count());
  } catch (const history::HistoryError& e) {
    std::cerr << "kwb history add: " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

int show(const HistoryFlags& f) {
  const std::string path = db_path(f);
  // Never create a database just to read it: a missing file, or an empty one (SQLite would write
  // its schema into it), holds no history.
  std::error_code ec;
  const bool missing = !std::filesystem::exists(path, ec);
  if (missing || (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0)) {
    std::cerr << fmt::format("kwb history show: {} at {}; add reports first with "
                             "`kwb history add REPORT.json{}`, or pass --db with an existing database\n",
                             missing ? "no history database" : "an empty file, not a history database", path,
                             f.db.empty() ? "" : " --db " + path);
    return kExitBadInput;
  }
  try {
    const history::HistoryStore store(path);
    // An --op the store has never seen is a typo more often than a question: say so, and fail.
    if (!f.op.empty()) {
      const auto known = store.ops();  // none: an empty store, answered below with how to fill it
      if (!known.empty() && std::find(known.begin(), known.end(), f.op) == known.end()) {
        std::cerr << "kwb history show: --op: " << unknown_name_message("op", f.op, known) << " (the ops with results in "
                  << store.path().string() << ")\n";
        return kExitBadInput;
      }
    }
    const auto rows = store.trend({.op = f.op, .identity_contains = f.identity, .device_contains = f.device});
    if (rows.empty()) {
      // A filter that matches nothing is a mistake to say (exit 2); an empty store is just empty.
      // An empty store is answered with how to fill it, whatever the filters.
      const bool filtered =
          store.report_count() > 0 && (!f.op.empty() || !f.identity.empty() || !f.device.empty());
      (filtered ? std::cerr : std::cout) << fmt::format(
          "{}no stored results {}in {} ({} report(s) stored); {}\n", filtered ? "kwb history show: " : "",
          filtered ? "match --op / --case / --device " : "", store.path().string(), store.report_count(),
          filtered ? "loosen the filters (--case and --device match any part of the text)"
                   : "add reports with `kwb history add REPORT.json`");
      return filtered ? kExitBadInput : kExitOk;
    }
    const history::TrendSummary s = history::print_trend(std::cout, rows, {}, f.limit);
    std::cout << fmt::format("\n{} case(s), {} stored result(s), {} change point(s)\n", s.series, s.runs,
                             s.change_points);
    if (s.printed < s.series)
      std::cout << fmt::format("shown: {} of the {} cases (those with a change point first); --limit 0 shows all, "
                               "--op / --case / --device narrow\n",
                               s.printed, s.series);
  } catch (const history::HistoryError& e) {
    std::cerr << "kwb history show: " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

#else  // built without SQLite

int without_sqlite(const char* verb) {
  std::cerr << fmt::format(
      "kwb history {}: this kwb was built without SQLite, which the result history needs.\n"
      "Install it (Debian/Ubuntu: apt-get install libsqlite3-dev), then configure and build again\n"
      "(cmake --preset default && cmake --build --preset default).\n", verb);
  return kExitBadInput;
}
int add(const HistoryFlags&) { return without_sqlite("add"); }
int show(const HistoryFlags&) { return without_sqlite("show"); }

#endif

}  // namespace

void add_history_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "history", "Result history in SQLite: add reports, show a case's or an op's trend with its change points");
  cmd->require_subcommand(1);
  static HistoryFlags f;
  const std::string db_help =
      "The history database (default $XDG_DATA_HOME/kwb/history.sqlite, else ~/.local/share/kwb/history.sqlite)";

  auto* add_cmd = cmd->add_subcommand("add", "Store every case of these reports; a report already stored is skipped");
  add_cmd->add_option("REPORT", f.reports, "report.json files written by `kwb run`")->required();
  add_cmd->add_option("--db", f.db, db_help)->type_name("PATH");
  add_cmd->callback([&exit_code] { exit_code = add(f); });

  auto* show_cmd = cmd->add_subcommand(
      "show", "Print each matching case's runs in time order: median, change vs previous, CHANGE at change points");
  show_cmd->add_option("--db", f.db, db_help)->type_name("PATH");
  show_cmd->add_option("--op", f.op, "Only this op")->type_name("OP");
  show_cmd->add_option("--case", f.identity, "Only cases whose identity contains this text")->type_name("TEXT");
  show_cmd->add_option("--device", f.device, "Only devices whose name contains this text")->type_name("TEXT");
  show_cmd->add_option("--limit", f.limit,
                       fmt::format("Print at most this many cases, those with a change point first (default {}; 0: "
                                   "all)", kDefaultShownCases))
      ->type_name("N");
  show_cmd->footer(
      "A run is a CHANGE when its median differs from the median of the previous 5 runs (since the last\n"
      "change, at least 3) by more than max(3%, 3 x their noise: 1.4826 x MAD / median).");
  show_cmd->callback([&exit_code] { exit_code = show(f); });
}

}  // namespace kwb::cli
