// The result history: every case of every report added, in one SQLite file, for trends across
// runs. Built only when CMake finds SQLite3 (KWB_HAVE_SQLITE3); `kwb history` says how to get it
// otherwise.
//
// Schema (PRAGMA user_version = 2):
//   reports(id, report_key UNIQUE, started_at, host, git_sha, tool_version, device_name,
//           device_uuid, driver, mode, flush, preset, source_path, added_at, launch)
//   results(report_id -> reports.id, identity, op, variant, dtype, disposition, median_us, p10_us,
//           p90_us, noise, gbps, pct_of_copy; PRIMARY KEY (report_id, identity))
// The report key is "started_at|host|device uuid|git sha" from the report's run block: adding the
// same report again (or a copy of it) adds nothing. Timing columns are NULL for a case without
// timing (skipped, failed before measuring). Version 1 had no `launch` column: it is added on
// opening, its rows `stream` (every run then launched that way).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/history/trend_row.hpp"
#include "harness/record/report.hpp"

struct sqlite3;

namespace kwb::history {

inline constexpr int kSchemaVersion = 2;

// Opening, migrating or writing failed; the message names the database file.
struct HistoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct AddResult {
  bool already_present = false;  // the report key was in the database: nothing added
  int cases_added = 0;
};

// What `kwb history show` filters on; empty fields match everything.
struct TrendQuery {
  std::string op{};                 // exact op name
  std::string identity_contains{};  // substring of the case identity (literal, no wildcards)
  std::string device_contains{};    // substring of the device name
};

// $XDG_DATA_HOME/kwb/history.sqlite, else $HOME/.local/share/kwb/history.sqlite, else
// ./kwb-history.sqlite.
std::filesystem::path default_history_path();

// The report's dedupe key (see above).
std::string report_key(const RunInfo& run);

class HistoryStore {
 public:
  // Creates the file (and its folder) and the schema when absent; refuses a database written by a
  // newer schema, or a file that is not a kwb history.
  explicit HistoryStore(const std::filesystem::path& path);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // One transaction per report: all its cases or none.
  AddResult add_report(const Report& report, const std::string& source_path);

  // Rows ordered by identity, device, settings (mode, flush, preset, launch), then run start time
  // (then insertion order).
  std::vector<TrendRow> trend(const TrendQuery& query) const;

  int report_count() const;
  // Every op with a stored result, sorted.
  std::vector<std::string> ops() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace kwb::history
