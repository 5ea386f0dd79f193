// The SQLite history store: insert, dedupe, trend order and filters, schema versions. Skipped,
// with the reason, in a build without SQLite.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/reports/history/history_test_support.hpp"
#include "tests/support/temp_dir.hpp"

#ifdef KWB_HAVE_SQLITE3
#include <sqlite3.h>

#include "reports/history/history_store.hpp"

namespace kwb::history {
namespace {

using test::history_report;

class HistoryStoreTest : public ::testing::Test {
 protected:
  std::filesystem::path db() const { return dir_ / "sub" / "history.sqlite"; }
  test::TempDir dir_;
};

TEST_F(HistoryStoreTest, AddStoresEveryCaseOnce) {
  HistoryStore store(db());  // creates the folder too
  const Report r = history_report("2026-11-01T02:00:00Z", "aaa111", 40.0, 15.0);
  const AddResult first = store.add_report(r, "a.json");
  EXPECT_FALSE(first.already_present);
  EXPECT_EQ(first.cases_added, 3);
  const AddResult second = store.add_report(r, "copy-of-a.json");
  EXPECT_TRUE(second.already_present);
  EXPECT_EQ(second.cases_added, 0);
  EXPECT_EQ(store.report_count(), 1);
  EXPECT_EQ(store.trend({}).size(), 3u);
}

TEST_F(HistoryStoreTest, ReopenedDatabaseStillDedupes) {
  const Report r = history_report("2026-11-01T02:00:00Z", "aaa111", 40.0, 15.0);
  { HistoryStore(db()).add_report(r, "a.json"); }
  HistoryStore store(db());
  EXPECT_TRUE(store.add_report(r, "a.json").already_present);
  EXPECT_EQ(store.report_count(), 1);
}

TEST_F(HistoryStoreTest, StoresTheTimingAndIdentity) {
  HistoryStore store(db());
  const Report r = history_report("2026-11-01T02:00:00Z", "aaa111", 40.0, 15.0);
  store.add_report(r, "a.json");
  const auto rows = store.trend({.op = "rmsnorm_fwd"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].identity, r.cases[0].nvtx_range);
  EXPECT_EQ(rows[0].git_sha, "aaa111");
  EXPECT_EQ(rows[0].device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rows[0].driver, "580.95.05");
  EXPECT_EQ(rows[0].disposition, "passed");
  EXPECT_EQ(rows[0].settings, "mode cold, flush dirty, preset default");
  ASSERT_TRUE(rows[0].median_us);
  EXPECT_DOUBLE_EQ(*rows[0].median_us, r.cases[0].timing->span.median);
  EXPECT_DOUBLE_EQ(*rows[0].p10_us, r.cases[0].timing->span.p10);
  EXPECT_DOUBLE_EQ(*rows[0].p90_us, r.cases[0].timing->span.p90);
  EXPECT_DOUBLE_EQ(*rows[0].gbps, 2500);
  EXPECT_DOUBLE_EQ(*rows[0].pct_of_copy, 83.5);
  const auto skipped = store.trend({.identity_contains = "baseline_eager"});
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].disposition, "skipped");
  EXPECT_FALSE(skipped[0].median_us);
}

TEST_F(HistoryStoreTest, TrendIsInTimeOrderWhateverTheInsertOrder) {
  HistoryStore store(db());
  const std::vector<std::string> starts = {"2026-11-03T02:00:00Z", "2026-11-01T02:00:00Z", "2026-11-04T02:00:00Z",
                                           "2026-11-02T02:00:00Z"};
  for (std::size_t i = 0; i < starts.size(); ++i)
    store.add_report(history_report(starts[i], "sha" + std::to_string(i), 40.0 + i, 15.0), "r.json");
  const auto rows = store.trend({.op = "rmsnorm_fwd"});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].started_at, "2026-11-01T02:00:00Z");
  EXPECT_EQ(rows[1].started_at, "2026-11-02T02:00:00Z");
  EXPECT_EQ(rows[2].started_at, "2026-11-03T02:00:00Z");
  EXPECT_EQ(rows[3].started_at, "2026-11-04T02:00:00Z");
  EXPECT_EQ(rows[0].git_sha, "sha1");
}

TEST_F(HistoryStoreTest, FiltersByOpCaseAndDevice) {
  HistoryStore store(db());
  store.add_report(history_report("2026-11-01T02:00:00Z", "a", 40, 15, "NVIDIA H100 80GB HBM3"), "a.json");
  store.add_report(history_report("2026-11-01T03:00:00Z", "a", 30, 11, "NVIDIA H200"), "b.json");
  EXPECT_EQ(store.trend({.op = "softmax_fwd"}).size(), 4u);  // online + skipped eager, two devices
  EXPECT_EQ(store.trend({.op = "softmax"}).size(), 0u);      // the op is matched exactly
  EXPECT_EQ(store.trend({.identity_contains = "fused_v2_vec16:bf16"}).size(), 2u);
  EXPECT_EQ(store.trend({.identity_contains = "%"}).size(), 0u);  // literal, not a LIKE pattern
  const auto h200 = store.trend({.device_contains = "H200"});
  ASSERT_EQ(h200.size(), 3u);
  for (const auto& row : h200) EXPECT_EQ(row.device_name, "NVIDIA H200");
  EXPECT_EQ(store.trend({.op = "rmsnorm_fwd", .device_contains = "H100"}).size(), 1u);
  // Rows of one case are grouped by device, then in time order.
  const auto rms = store.trend({.op = "rmsnorm_fwd"});
  ASSERT_EQ(rms.size(), 2u);
  EXPECT_EQ(rms[0].device_name, "NVIDIA H100 80GB HBM3");
}

// Graph replays and stream launches of one case are two series: a graph run never reads as a
// speedup of the stream runs before it.
TEST_F(HistoryStoreTest, RunsLaunchedAsGraphsFormTheirOwnSeries) {
  HistoryStore store(db());
  store.add_report(history_report("2026-11-01T02:00:00Z", "a", 40, 15), "stream.json");
  Report graph = history_report("2026-11-02T02:00:00Z", "a", 38, 9);
  graph.run.settings["launch"] = "graph";
  store.add_report(graph, "graph.json");
  const auto rows = store.trend({.op = "rmsnorm_fwd"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].settings, "mode cold, flush dirty, preset default");
  EXPECT_EQ(rows[1].settings, "mode cold, flush dirty, preset default, launch graph");
}

// A database written before launches were recorded (schema 1) gains the column on opening; its
// runs were stream launches and keep their series.
TEST_F(HistoryStoreTest, SchemaOneDatabaseGainsTheLaunchColumnAsStream) {
  std::filesystem::create_directories(db().parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE reports (
  id INTEGER PRIMARY KEY, report_key TEXT NOT NULL UNIQUE,
  started_at TEXT NOT NULL, host TEXT NOT NULL, git_sha TEXT NOT NULL, tool_version TEXT NOT NULL,
  device_name TEXT NOT NULL, device_uuid TEXT NOT NULL, driver TEXT NOT NULL,
  mode TEXT NOT NULL, flush TEXT NOT NULL, preset TEXT NOT NULL,
  source_path TEXT NOT NULL, added_at TEXT NOT NULL);
CREATE TABLE results (
  report_id INTEGER NOT NULL REFERENCES reports(id),
  identity TEXT NOT NULL, op TEXT NOT NULL, variant TEXT NOT NULL, dtype TEXT NOT NULL,
  disposition TEXT NOT NULL,
  median_us REAL, p10_us REAL, p90_us REAL, noise REAL, gbps REAL, pct_of_copy REAL,
  PRIMARY KEY (report_id, identity));
INSERT INTO reports VALUES (1, 'k', '2026-10-01T00:00:00Z', 'h', 'old', '0.1', 'NVIDIA H100 80GB HBM3', 'GPU-HBM3',
  '580.95.05', 'cold', 'dirty', 'default', 'old.json', '2026-10-01T00:00:00Z');
INSERT INTO results VALUES (1, 'rmsnorm_fwd:fused_v2_vec16:bf16:16384', 'rmsnorm_fwd', 'fused_v2_vec16', 'bf16',
  'passed', 41, 40, 42, 0.01, 2500, 83.5);
PRAGMA user_version = 1;
)sql";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  HistoryStore store(db());
  Report graph = history_report("2026-11-02T02:00:00Z", "a", 38, 9);
  graph.run.settings["launch"] = "graph";
  store.add_report(graph, "graph.json");
  const auto rows = store.trend({.op = "rmsnorm_fwd"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].git_sha, "old");
  EXPECT_EQ(rows[0].settings, "mode cold, flush dirty, preset default");
  EXPECT_EQ(rows[1].settings, "mode cold, flush dirty, preset default, launch graph");

  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* version = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &version, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(version), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(version, 0), kSchemaVersion);
  sqlite3_finalize(version);
  sqlite3_close(raw);
}

TEST_F(HistoryStoreTest, NewerSchemaIsRefusedWithItsVersion) {
  { HistoryStore store(db()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 7", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  try {
    HistoryStore store(db());
    FAIL() << "a schema-7 database was opened";
  } catch (const HistoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("newer kwb"), std::string::npos) << what;
    EXPECT_NE(what.find("schema 7"), std::string::npos) << what;
    EXPECT_NE(what.find(db().string()), std::string::npos) << what;
  }
}

TEST_F(HistoryStoreTest, ForeignFilesAreRefused) {
  std::filesystem::create_directories(db().parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_THROW(HistoryStore{db()}, HistoryError);
  const auto text = dir_ / "notes.sqlite";
  { std::ofstream(text) << "this is not a database, just some text that is long enough to have a header\n"; }
  EXPECT_THROW(HistoryStore{text}, HistoryError);
}

// A --db that is not an SQLite file is left as it is: a 1-byte file (SQLite would take it for an
// empty database and write a store over it), a folder, a symlink loop. An empty file is the
// store's to make.
TEST_F(HistoryStoreTest, AFileThatIsNotADatabaseIsRefusedAndLeftAsItIs) {
  const auto one_byte = dir_ / "one-byte";
  { std::ofstream(one_byte) << "x"; }
  try {
    HistoryStore store(one_byte);
    ADD_FAILURE() << "a 1-byte file was opened as a history";
  } catch (const HistoryError& e) {
    EXPECT_NE(std::string(e.what()).find("not an SQLite database"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one-byte"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(one_byte), 1u) << "left as it was";

  EXPECT_THROW(HistoryStore{dir_.path()}, HistoryError);
  const auto loop = dir_ / "loop";
  std::filesystem::create_symlink(loop, loop);
  try {
    HistoryStore store(loop);
    ADD_FAILURE() << "a symlink loop was opened";
  } catch (const HistoryError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }

  const auto empty = dir_ / "empty.sqlite";
  { std::ofstream touch(empty); }
  HistoryStore store(empty);
  EXPECT_EQ(store.report_count(), 0);
}

TEST(HistoryPaths, DefaultFollowsXdgDataHome) {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(default_history_path(), std::filesystem::path("/tmp/xdg-test/kwb/history.sqlite"));
  if (old) ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_DATA_HOME");
}

TEST(HistoryPaths, ReportKeyIsTheRunBlock) {
  const Report a = test::history_report("2026-11-01T02:00:00Z", "aaa", 40, 15);
  Report b = a;
  b.cases.clear();  // the cases do not make a report another one
  EXPECT_EQ(report_key(a.run), report_key(b.run));
  b.run.git_sha = "bbb";
  EXPECT_NE(report_key(a.run), report_key(b.run));
}

}  // namespace
}  // namespace kwb::history

#else

TEST(HistoryStoreTest, SkippedWithoutSqlite) {
  GTEST_SKIP() << "built without SQLite (apt-get install libsqlite3-dev and reconfigure): the history store is "
                  "not compiled";
}

#endif
