// The app's model (see workbench.hpp).
#include "gui/model/workbench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "gui/model/counter_panel.hpp"
#include "reports/compare/gate_settings.hpp"

namespace kwb::gui {

namespace {

void add_unique(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

bool Workbench::open(const std::filesystem::path& path) { return take_in(path, load_report(path)); }

void Workbench::open_in_background(const std::filesystem::path& path) {
  pending_.push_back({path, std::async(std::launch::async, [path] { return load_report(path); })});
}

std::vector<std::filesystem::path> Workbench::finish_loads() {
  std::vector<std::filesystem::path> opened;
  while (!pending_.empty() &&
         pending_.front().outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    PendingLoad load = std::move(pending_.front());
    pending_.pop_front();
    if (take_in(load.path, load.outcome.get())) opened.push_back(load.path);
  }
  return opened;
}

void Workbench::wait_for_loads() {
  for (auto& load : pending_) load.outcome.wait();
}

std::vector<std::filesystem::path> Workbench::loading() const {
  std::vector<std::filesystem::path> paths;
  for (const auto& load : pending_) paths.push_back(load.path);
  return paths;
}

bool Workbench::take_in(const std::filesystem::path& path, LoadOutcome outcome) {
  if (!outcome.loaded) {
    add_message(Message::Level::error, outcome.error);
    return false;
  }
  if (!outcome.note.empty()) add_message(Message::Level::warning, outcome.note);
  const auto& cases = outcome.loaded->report.cases;
  const auto counted = std::count_if(cases.begin(), cases.end(), has_counter_values);
  add_message(Message::Level::info,
              fmt::format("opened {} ({} cases{})", path.string(), cases.size(),
                          counted ? fmt::format(", {} with hardware counters", counted) : ""));
  reports_.push_back(std::move(*outcome.loaded));
  reports_.back().name = unique_name(reports_.back().name, static_cast<int>(reports_.size()) - 1);
  rebuild();
  return true;
}

// The report column and filter tell reports apart by name: a report whose name another open one
// has (the same file opened twice, two runs' "results/report.json") is numbered,
// "results/report.json (2)". `self` is the report being named, which never clashes with itself.
std::string Workbench::unique_name(const std::string& name, int self) const {
  auto taken = [&](const std::string& candidate) {
    for (int i = 0; i < static_cast<int>(reports_.size()); ++i)
      if (i != self && reports_[i].name == candidate) return true;
    return false;
  };
  if (!taken(name)) return name;
  for (int n = 2;; ++n)
    if (const std::string candidate = fmt::format("{} ({})", name, n); !taken(candidate)) return candidate;
}

void Workbench::close(int report) {
  if (report < 0 || report >= static_cast<int>(reports_.size())) return;
  reports_.erase(reports_.begin() + report);
  focus_ = {};
  marked_.clear();
  rebuild();
}

int Workbench::add_live_report(LoadedReport report) {
  add_message(Message::Level::info, fmt::format("live run: results stream into {}", report.name));
  reports_.push_back(std::move(report));
  reports_.back().name = unique_name(reports_.back().name, static_cast<int>(reports_.size()) - 1);
  rebuild();
  return static_cast<int>(reports_.size()) - 1;
}

void Workbench::append_cases(int report, std::vector<CaseRecord> cases) {
  if (report < 0 || report >= static_cast<int>(reports_.size()) || cases.empty()) return;
  auto& held = reports_[report].report.cases;
  held.insert(held.end(), std::make_move_iterator(cases.begin()),
              std::make_move_iterator(cases.end()));
  rebuild();  // a few cases a second at most: rebuilding every row is cheap next to a frame
}

void Workbench::replace_report(int report, LoadedReport loaded) {
  if (report < 0 || report >= static_cast<int>(reports_.size())) return;
  reports_[report] = std::move(loaded);
  reports_[report].name = unique_name(reports_[report].name, report);
  rebuild();  // one GPU keeps plan order, so the focus (report, index) still names its case
}

const CaseRecord* Workbench::find(CaseRef ref) const {
  if (ref.report < 0 || ref.report >= static_cast<int>(reports_.size())) return nullptr;
  const auto& cases = reports_[ref.report].report.cases;
  return ref.index >= 0 && ref.index < static_cast<int>(cases.size()) ? &cases[ref.index] : nullptr;
}

void Workbench::add_message(Message::Level level, std::string text) {
  messages_.push_back({level, std::move(text)});
}

void Workbench::rebuild() {
  rows_.clear();
  row_index_.clear();
  ops_.clear(), variants_.clear(), dtypes_.clear();
  ceilings_.clear();
  sweeps_.clear();
  compared_pair_.reset();
  comparison_.reset();
  cases_with_counters_ = 0;
  for (int r = 0; r < static_cast<int>(reports_.size()); ++r) {
    const auto& cases = reports_[r].report.cases;
    for (int i = 0; i < static_cast<int>(cases.size()); ++i) {
      cases_with_counters_ += has_counter_values(cases[i]);
      row_index_[{r, i}] = static_cast<int>(rows_.size());
      rows_.push_back(make_row({r, i}, reports_[r].name, cases[i]));
      add_unique(ops_, rows_.back().op);
      add_unique(variants_, rows_.back().variant);
      add_unique(dtypes_, rows_.back().dtype);
    }
  }
  // The roofs: the first report that has any, as the review report draws them (measured first,
  // datasheet beside them unless the report derived from the datasheet itself).
  for (const LoadedReport& lr : reports_) {
    const RunInfo& run = lr.report.run;
    if (run.ceilings) {
      auto roofs = review::roofline_ceilings(*run.ceilings, run.ceilings->source == "measured");
      ceilings_.insert(ceilings_.end(), roofs.begin(), roofs.end());
    }
    if (run.datasheet_ceilings && !(run.ceilings && run.ceilings->source == "datasheet")) {
      auto roofs = review::roofline_ceilings(*run.datasheet_ceilings, false);
      ceilings_.insert(ceilings_.end(), roofs.begin(), roofs.end());
    }
    if (!ceilings_.empty()) break;
  }
  visible_dirty_ = true;
}

const std::vector<int>& Workbench::visible_rows() {
  if (!visible_dirty_) return visible_;
  visible_.clear();
  for (int i = 0; i < static_cast<int>(rows_.size()); ++i)
    if (filters_.matches(rows_[i])) visible_.push_back(i);
  if (sort_set_) sort_rows(visible_, rows_, sort_column_, sort_ascending_);
  visible_dirty_ = false;
  return visible_;
}

void Workbench::set_filters(const Filters& f) {
  if (f == filters_) return;
  filters_ = f;
  visible_dirty_ = true;
}

void Workbench::set_sort(Column column, bool ascending) {
  if (sort_set_ && column == sort_column_ && ascending == sort_ascending_) return;
  sort_column_ = column, sort_ascending_ = ascending, sort_set_ = true;
  visible_dirty_ = true;
}

void Workbench::select(CaseRef ref, bool add_to_marked) {
  if (!add_to_marked) marked_.clear();
  if (add_to_marked && marked_.count(ref) && ref != focus_) {
    marked_.erase(ref);  // ctrl-click on a marked row unmarks it
    return;
  }
  focus_ = ref;
  if (ref.valid()) marked_.insert(ref);
}

void Workbench::mark_range(CaseRef to) {
  const auto& order = visible_rows();
  auto pos = [&](CaseRef ref) {
    const int row = row_of(ref);
    auto it = std::find(order.begin(), order.end(), row);
    return it == order.end() ? -1 : static_cast<int>(it - order.begin());
  };
  int a = pos(focus_), b = pos(to);
  if (b < 0) return;
  if (a < 0) a = b;
  if (a > b) std::swap(a, b);
  marked_.clear();
  for (int i = a; i <= b; ++i) marked_.insert(rows_[order[i]].ref);
  focus_ = to;
}

void Workbench::step_focus(int delta) {
  const auto& order = visible_rows();
  if (order.empty()) return;
  const int row = row_of(focus_);
  const auto it = std::find(order.begin(), order.end(), row);
  int pos = it == order.end() ? 0 : static_cast<int>(it - order.begin()) + delta;
  pos = std::clamp(pos, 0, static_cast<int>(order.size()) - 1);
  select(rows_[order[pos]].ref);
}

int Workbench::row_of(CaseRef ref) const {
  auto it = row_index_.find(ref);
  return it == row_index_.end() ? -1 : it->second;
}

CaseRef Workbench::find_key(int report, const std::string& key) const {
  for (const TableRow& row : rows_)
    if (row.ref.report == report && row.key == key) return row.ref;
  return {};
}

std::string Workbench::marked_as_csv() {
  std::vector<const TableRow*> picked;
  for (int i : visible_rows())
    if (marked_.count(rows_[i].ref)) picked.push_back(&rows_[i]);
  return rows_to_csv(picked);
}

namespace {
bool on_log_axes(double x, double y) {
  return x > 0 && y > 0 && std::isfinite(x) && std::isfinite(y);
}
}  // namespace

std::vector<RooflineDot> Workbench::roofline_dots() {
  std::vector<RooflineDot> dots;
  for (int i : visible_rows()) {
    const CaseRecord* c = find(rows_[i].ref);
    if (!c || !c->derived || !c->timing) continue;
    const double x = c->derived->intensity, y = c->derived->tflops;
    if (!on_log_axes(x, y)) continue;  // no place on log axes
    dots.push_back({rows_[i].ref, i, x, y, measured_point(*c)});
  }
  return dots;
}

std::vector<CaseRef> Workbench::counter_partners(CaseRef of) const {
  const int at = row_of(of);
  if (at < 0) return {};
  const TableRow& me = rows_[at];
  // Ranks: 0 the same case in another report, then (baseline, other variant) in the focus's
  // report, then the same in the other reports.
  std::vector<std::pair<int, CaseRef>> ranked;
  for (const TableRow& row : rows_) {
    if (row.ref == of || row.op != me.op || row.dtype != me.dtype || row.shape_compact != me.shape_compact ||
        row.mode != me.mode)
      continue;
    const CaseRecord* c = find(row.ref);
    if (!c || !has_counter_values(*c)) continue;
    const int elsewhere = row.ref.report == of.report ? 0 : 2;
    const int rank = row.key == me.key ? 0 : 1 + elsewhere + (c->role == Role::baseline ? 0 : 1);
    ranked.emplace_back(rank, row.ref);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CaseRef> partners;
  for (const auto& [rank, ref] : ranked) partners.push_back(ref);
  return partners;
}

const std::vector<review::SweepChart>& Workbench::sweeps(int report) {
  static const std::vector<review::SweepChart> kNone;
  if (report < 0 || report >= static_cast<int>(reports_.size())) return kNone;
  auto it = sweeps_.find(report);
  if (it == sweeps_.end())
    it = sweeps_.emplace(report, review::sweep_charts(reports_[report].report.cases)).first;
  return it->second;
}

const CompareReport* Workbench::comparison(int base, int next, std::string& error) {
  const int n = static_cast<int>(reports_.size());
  if (base < 0 || next < 0 || base >= n || next >= n) {
    error = "open two reports to compare them (File > Open, or both on the command line)";
    return nullptr;
  }
  if (!compared_pair_ || *compared_pair_ != std::pair{base, next}) {
    compared_pair_ = std::pair{base, next};
    comparison_.reset();
    comparison_error_.clear();
    try {
      CompareInputs in;
      in.base = &reports_[base].report;
      in.next = &reports_[next].report;
      in.base_name = reports_[base].name;
      in.new_name = reports_[next].name;
      // The same rules as `kwb compare` without flags: BASE's suite, never NEW's.
      const ThresholdChoice thresholds = choose_thresholds(std::nullopt, *in.base);
      in.suite_thresholds = thresholds.per_op;
      in.settings.threshold = thresholds.fallback;
      in.threshold_source = thresholds.source;
      const FailOnChoice gate = choose_fail_on(std::nullopt, *in.base);
      in.fail_on = gate.classes;
      in.fail_on_source = gate.source;
      comparison_ = compare_reports(in);
    } catch (const std::exception& e) {
      comparison_error_ = e.what();
    }
  }
  error = comparison_error_;
  return comparison_ ? &*comparison_ : nullptr;
}

}  // namespace kwb::gui
