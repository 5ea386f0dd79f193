#include "reports/history/history_store.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace kwb::history {
namespace {

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE reports (
  id INTEGER PRIMARY KEY,
  report_key TEXT NOT NULL UNIQUE,
  started_at TEXT NOT NULL, host TEXT NOT NULL, git_sha TEXT NOT NULL, tool_version TEXT NOT NULL,
  device_name TEXT NOT NULL, device_uuid TEXT NOT NULL, driver TEXT NOT NULL,
  mode TEXT NOT NULL, flush TEXT NOT NULL, preset TEXT NOT NULL,
  source_path TEXT NOT NULL, added_at TEXT NOT NULL, launch TEXT NOT NULL DEFAULT 'stream');
CREATE TABLE results (
  report_id INTEGER NOT NULL REFERENCES reports(id),
  identity TEXT NOT NULL, op TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL,
  disposition TEXT NOT NULL,
  median_us REAL, p10_us REAL, p90_us REAL, noise REAL, gbps REAL, pct_of_copy REAL,
  PRIMARY KEY (report_id, identity));
CREATE INDEX results_by_identity ON results(identity);
CREATE INDEX results_by_op ON results(op);
PRAGMA user_version = 2;
)sql";

// Version 1 -> 2: runs record how their samples were launched; every earlier run was a stream launch.
constexpr const char* kAddLaunch = R"sql(
ALTER TABLE reports ADD COLUMN launch TEXT NOT NULL DEFAULT 'stream';
PRAGMA user_version = 2;
)sql";

// The words of a run's settings that make one series: runs measured differently never share one.
// Stream launches, the default, add nothing (the words of the runs before the setting existed).
constexpr const char* kSettingsText =
    "'mode ' || p.mode || ', flush ' || p.flush || ', preset ' || p.preset || "
    "CASE p.launch WHEN 'stream' THEN '' ELSE ', launch ' || p.launch END";

// A prepared statement, finalized on every path out.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::filesystem::path& path) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw HistoryError(fmt::format("{}: {}", path.string(), sqlite3_errmsg(db)));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& text) { sqlite3_bind_text(stmt_, i, text.c_str(), -1, SQLITE_TRANSIENT); }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, std::optional<double> v) {
    if (v) sqlite3_bind_double(stmt_, i, *v);
    else sqlite3_bind_null(stmt_, i);
  }
  // SQLITE_ROW or SQLITE_DONE; anything else throws.
  int step(const std::filesystem::path& path) {
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      throw HistoryError(fmt::format("{}: {}", path.string(), sqlite3_errmsg(db_)));
    return rc;
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::optional<double> real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql, const std::filesystem::path& path) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db);
    sqlite3_free(error);
    throw HistoryError(fmt::format("{}: {}", path.string(), message));
  }
}

std::string setting(const RunInfo& run, const std::string& key) {
  auto it = run.settings.find(key);
  return it != run.settings.end() ? it->second : "";
}

std::string now_utc() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// What is at `path` must be an SQLite file or nothing (an empty file counts as nothing): anything
// else is refused before SQLite opens it, because SQLite takes a file shorter than its header for
// an empty database and writes a new one over it, and kwb never overwrites a file it did not write.
void check_history_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw HistoryError(fmt::format("{}: cannot read: {}; pass --db with another file", path.string(), ec.message()));
  if (!std::filesystem::exists(status)) return;
  if (std::filesystem::is_directory(status))
    throw HistoryError(fmt::format("{}: is a directory; pass --db with a file", path.string()));
  if (!std::filesystem::is_regular_file(status))
    throw HistoryError(fmt::format("{}: is not a regular file; pass --db with a file", path.string()));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return;  // an empty file: the store's to make; a vanished one: SQLite says
  static constexpr char kHeader[] = "SQLite format 3";  // and its NUL: the first 16 bytes
  char head[sizeof kHeader] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  if (in.gcount() != static_cast<std::streamsize>(sizeof head) || std::memcmp(head, kHeader, sizeof head) != 0)
    throw HistoryError(fmt::format("{}: not an SQLite database ({} bytes without SQLite's header), so not a kwb "
                                   "history; it is left as it is: pass --db with another file",
                                   path.string(), size));
}

}  // namespace

std::filesystem::path default_history_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "kwb" / "history.sqlite";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local" / "share" / "kwb" / "history.sqlite";
  return "kwb-history.sqlite";
}

std::string report_key(const RunInfo& run) {
  const std::string uuid = run.device ? run.device->uuid : "";
  return run.started_at + "|" + run.host + "|" + uuid + "|" + run.git_sha;
}

HistoryStore::HistoryStore(const std::filesystem::path& path) : path_(path) {
  check_history_file(path);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw HistoryError(fmt::format("{}: cannot open: {}; pass --db with a writable path", path.string(), message));
  }
  try {
    sqlite3_busy_timeout(db_, 5000);  // a nightly job and a person may add at the same time
    exec(db_, "PRAGMA foreign_keys = ON", path_);
    Statement version(db_, "PRAGMA user_version", path_);
    version.step(path_);  // a file that is not SQLite fails here
    const std::int64_t found = version.integer(0);
    if (found > kSchemaVersion)
      throw HistoryError(fmt::format(
          "{}: written by a newer kwb (history schema {}; this kwb reads up to {}); use that kwb, or pass --db "
          "with another file", path_.string(), found, kSchemaVersion));
    if (found == 0) {
      Statement tables(db_, "SELECT count(*) FROM sqlite_master", path_);
      tables.step(path_);
      if (tables.integer(0) != 0)
        throw HistoryError(fmt::format("{}: an SQLite database, but not a kwb history (it has tables and no "
                                       "schema version); pass --db with another file", path_.string()));
      exec(db_, "BEGIN", path_);
      exec(db_, kCreateSchema, path_);
      exec(db_, "COMMIT", path_);
    } else if (found == 1) {
      exec(db_, "BEGIN IMMEDIATE", path_);
      exec(db_, kAddLaunch, path_);
      exec(db_, "COMMIT", path_);
    }
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

HistoryStore::~HistoryStore() { sqlite3_close(db_); }

AddResult HistoryStore::add_report(const Report& report, const std::string& source_path) {
  const RunInfo& run = report.run;
  AddResult result;
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    Statement insert_report(db_,
                            "INSERT OR IGNORE INTO reports (report_key, started_at, host, git_sha, tool_version, "
                            "device_name, device_uuid, driver, mode, flush, preset, source_path, added_at, launch) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                            path_);
    const DeviceInfo device = run.device.value_or(DeviceInfo{});
    const std::string driver = driver_label(device);
    const std::string fields[] = {report_key(run), run.started_at, run.host, run.git_sha, run.tool_version,
                                  device.name, device.uuid, driver, setting(run, "mode"), setting(run, "flush"),
                                  setting(run, "preset"), source_path, now_utc(), launch_of(report)};
    for (int i = 0; i < 14; ++i) insert_report.bind(i + 1, fields[i]);
    insert_report.step(path_);
    if (sqlite3_changes(db_) == 0) {
      exec(db_, "ROLLBACK", path_);
      result.already_present = true;
      return result;
    }
    const std::int64_t report_id = sqlite3_last_insert_rowid(db_);
    Statement insert_case(db_,
                          "INSERT OR IGNORE INTO results (report_id, identity, op, variant, dtype, disposition, "
                          "median_us, p10_us, p90_us, noise, gbps, pct_of_copy) "
                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                          path_);
    for (const CaseRecord& c : report.cases) {
      insert_case.reset();
      insert_case.bind(1, report_id);
      insert_case.bind(2, c.nvtx_range);
      insert_case.bind(3, c.op);
      insert_case.bind(4, c.variant);
      insert_case.bind(5, std::string(to_string(c.dtype)));
      insert_case.bind(6, std::string(to_string(c.disposition)));
      const auto& t = c.timing;
      insert_case.bind(7, t ? std::optional(t->span.median) : std::nullopt);
      insert_case.bind(8, t ? std::optional(t->span.p10) : std::nullopt);
      insert_case.bind(9, t ? std::optional(t->span.p90) : std::nullopt);
      insert_case.bind(10, t ? std::optional(t->span.noise) : std::nullopt);
      const auto& d = c.derived;
      insert_case.bind(11, d && t ? std::optional(d->bandwidth_gbps) : std::nullopt);
      insert_case.bind(12, d && t ? std::optional(d->pct_of_bandwidth_ceiling) : std::nullopt);
      insert_case.step(path_);
      result.cases_added += sqlite3_changes(db_);
    }
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return result;
}

std::vector<TrendRow> HistoryStore::trend(const TrendQuery& query) const {
  // instr() rather than LIKE: identities hold '_' and ':' and must match literally.
  const std::string sql =
      std::string("SELECT r.identity, r.op, r.variant, r.disposition, p.started_at, p.git_sha, p.device_name, "
                  "p.driver, r.median_us, r.p10_us, r.p90_us, r.gbps, r.pct_of_copy, ") +
      kSettingsText +
      " FROM results r JOIN reports p ON p.id = r.report_id "
      "WHERE (?1 = '' OR r.op = ?1) AND instr(r.identity, ?2) > 0 AND instr(p.device_name, ?3) > 0 "
      "ORDER BY r.identity, p.device_name, 14, p.started_at, p.id";
  Statement select(db_, sql.c_str(), path_);
  select.bind(1, query.op);
  select.bind(2, query.identity_contains);
  select.bind(3, query.device_contains);
  std::vector<TrendRow> rows;
  while (select.step(path_) == SQLITE_ROW) {
    TrendRow row;
    row.identity = select.text(0);
    row.op = select.text(1);
    row.variant = select.text(2);
    row.disposition = select.text(3);
    row.started_at = select.text(4);
    row.git_sha = select.text(5);
    row.device_name = select.text(6);
    row.driver = select.text(7);
    row.median_us = select.real(8);
    row.p10_us = select.real(9);
    row.p90_us = select.real(10);
    row.gbps = select.real(11);
    row.pct_of_copy = select.real(12);
    row.settings = select.text(13);
    rows.push_back(std::move(row));
  }
  return rows;
}

int HistoryStore::report_count() const {
  Statement count(db_, "SELECT count(*) FROM reports", path_);
  count.step(path_);
  return static_cast<int>(count.integer(0));
}

std::vector<std::string> HistoryStore::ops() const {
  Statement select(db_, "SELECT DISTINCT op FROM results ORDER BY op", path_);
  std::vector<std::string> ops;
  while (select.step(path_) == SQLITE_ROW) ops.push_back(select.text(0));
  return ops;
}

}  // namespace kwb::history
