// The app's model: the loaded reports, the messages for the status panel, the results table's
// rows under the current filters and sort, the selected case (shared by every view: a click in
// the roofline selects the row in the table and fills the case detail), and the derived views
// (roofline, sweeps, comparison) computed once per change of the reports.
//
// No ImGui here: the windows read and set this, and the CPU tests drive it directly.
#pragma once

#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gui/model/case_table.hpp"
#include "gui/model/report_loader.hpp"
#include "harness/derive/measured_roofline.hpp"
#include "reports/compare/compare_report.hpp"
#include "reports/review/review_model.hpp"

namespace kwb::gui {

struct Message {
  enum class Level { info, warning, error };
  Level level = Level::info;
  std::string text;
};

// One case on the roofline chart: its model point, and its measured point where it has one
// (harness/derive/measured_roofline's measured_point, the point the review report draws).
struct RooflineDot {
  CaseRef ref;
  int row = -1;  // index into Workbench::rows()
  double intensity = 0, tflops = 0;
  std::optional<MeasuredPoint> measured;
};

class Workbench {
 public:
  // --- Opening -----------------------------------------------------------------------------
  // Loads a report; on failure the reason becomes an error message and false is returned.
  bool open(const std::filesystem::path& path);
  // The same, off the UI thread (a 10,000-case report takes a second to read): the file is read
  // by a worker thread and joins the model in finish_loads(), in the order the loads were
  // started (the first report opened is compare's BASE whichever finishes first).
  void open_in_background(const std::filesystem::path& path);
  // Takes in the loads that are done, in start order; returns the paths that opened.
  std::vector<std::filesystem::path> finish_loads();
  void wait_for_loads();  // blocks until every started load is done (headless runs)
  std::vector<std::filesystem::path> loading() const;  // started, not yet taken in
  void close(int report);
  const std::vector<LoadedReport>& reports() const { return reports_; }
  const CaseRecord* find(CaseRef ref) const;

  const std::vector<Message>& messages() const { return messages_; }
  void add_message(Message::Level level, std::string text);
  void clear_messages() { messages_.clear(); }

  // --- Live runs (gui/model/live_run.hpp) -----------------------------------------------------
  // A report that a live run fills as its cases finish: added (returns its index), grown by
  // append_cases and, when the run ends, replaced by the report it saved. Each change rebuilds
  // the views as opening a report does, so the table and charts grow with the run.
  int add_live_report(LoadedReport report);
  void append_cases(int report, std::vector<CaseRecord> cases);
  void replace_report(int report, LoadedReport loaded);

  // --- The results table -------------------------------------------------------------------
  const std::vector<TableRow>& rows() const { return rows_; }
  // Indices into rows(): those the filters keep, in the current sort order.
  const std::vector<int>& visible_rows();
  const Filters& filters() const { return filters_; }
  void set_filters(const Filters& f);
  void set_sort(Column column, bool ascending);
  // The distinct values a filter can take, in first-seen order.
  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<std::string>& variants() const { return variants_; }
  const std::vector<std::string>& dtypes() const { return dtypes_; }

  // --- Selection ---------------------------------------------------------------------------
  // `focus` is the case every view highlights and the detail shows; `marked` the rows picked
  // for copying (ctrl/shift-click), which always include the focus.
  CaseRef focus() const { return focus_; }
  void select(CaseRef ref, bool add_to_marked = false);
  void mark_range(CaseRef to);
  // Moves the focus `delta` visible rows (arrow keys), clamped; from nothing, to the first row.
  void step_focus(int delta);  // shift-click: every visible row between the focus and `to`
  bool is_marked(CaseRef ref) const { return marked_.count(ref) > 0; }
  const std::set<CaseRef>& marked() const { return marked_; }
  std::string marked_as_csv();    // in visible order
  int row_of(CaseRef ref) const;  // index into rows(), -1 if absent
  // The case of `report` whose identity (compare's case_key) is `key`; invalid when none.
  CaseRef find_key(int report, const std::string& key) const;

  // --- Derived views -----------------------------------------------------------------------
  // The roofs of the first report that has ceilings (measured, then datasheet).
  const std::vector<review::RooflineCeiling>& roofline_ceilings() const { return ceilings_; }
  // The timed cases the filters keep.
  std::vector<RooflineDot> roofline_dots();
  // The sweep charts of one report (review::sweep_charts), computed once.
  const std::vector<review::SweepChart>& sweeps(int report);
  // The cases whose counters can stand beside `of`'s (the compare view's side by side): the same
  // op, dtype, shape and mode in any open report, with counter values, `of` itself left out.
  // First the same case in the other reports (BASE against NEW), then the op's baselines and
  // the other variants of `of`'s report, then those of the other reports, in table order.
  std::vector<CaseRef> counter_partners(CaseRef of) const;
  int cases_with_counters() const { return cases_with_counters_; }  // over the open reports
  // NEW (`next`) against BASE; null with `error` set when they cannot be compared.
  const CompareReport* comparison(int base, int next, std::string& error);

 private:
  // `name` for report `self`, numbered when another open report has it.
  std::string unique_name(const std::string& name, int self) const;
  void rebuild();  // after the set of reports changed
  bool take_in(const std::filesystem::path& path, LoadOutcome outcome);

  struct PendingLoad {
    std::filesystem::path path;
    std::future<LoadOutcome> outcome;
  };
  std::deque<PendingLoad> pending_;

  std::vector<LoadedReport> reports_;
  std::vector<Message> messages_;
  std::vector<TableRow> rows_;
  std::map<CaseRef, int> row_index_;
  std::vector<std::string> ops_, variants_, dtypes_;
  Filters filters_;
  Column sort_column_ = Column::op;
  bool sort_ascending_ = true;
  bool sort_set_ = false;
  std::vector<int> visible_;
  int cases_with_counters_ = 0;
  bool visible_dirty_ = true;
  CaseRef focus_;
  std::set<CaseRef> marked_;
  std::vector<review::RooflineCeiling> ceilings_;
  std::map<int, std::vector<review::SweepChart>> sweeps_;
  std::optional<std::pair<int, int>> compared_pair_;
  std::optional<CompareReport> comparison_;
  std::string comparison_error_;
};

}  // namespace kwb::gui
