// How a session's cases run over its lanes (one GPU's worker each): the cases still to measure,
// cut into groups that share their inputs, taken one group at a time by whichever lane is free;
// each record derived, journaled and delivered the moment it arrives.
#include <algorithm>
#include <optional>
#include <fmt/format.h>

#include "harness/plan/planner.hpp"
#include "harness/session/record_completion.hpp"
#include "harness/session/session.hpp"

namespace kwb {

// 4. The journal opened, the cases still to measure shared among the lanes (the first on this
// thread, each other on one of its own) until none is left or a cancel.
void Session::run_cases(Report& report, SessionResult& result) {
  std::unique_ptr<Journal> journal = open_journal(report, result);
  // The report's cases by plan position: those measured before an interruption are kept as they
  // are and not run again; the others are filled in by the lanes as they finish.
  std::vector<std::optional<CaseRecord>> slots(cases_.size());
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < cases_.size(); ++i) {
    if (options_.resume) {
      if (auto it = options_.resume->recorded.find(case_identity(cases_[i])); it != options_.resume->recorded.end()) {
        slots[i] = it->second;
        continue;
      }
    }
    pending.push_back(i);
  }
  const std::vector<std::vector<std::size_t>> groups = input_groups(pending, lanes_.size() > 1);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> others;
  for (std::size_t lane = 1; lane < lanes_.size(); ++lane)
    others.emplace_back([&, lane] { run_lane(lane, groups, next, slots, journal, result, *report.run.ceilings); });
  run_lane(0, groups, next, slots, journal, result, *report.run.ceilings);  // the first GPU on this thread
  for (auto& t : others) t.join();
  for (auto& slot : slots)
    if (slot) report.cases.push_back(std::move(*slot));
}

std::vector<std::vector<std::size_t>> Session::input_groups(const std::vector<std::size_t>& pending,
                                                            bool largest_first) const {
  std::vector<std::vector<std::size_t>> groups;
  std::string last;
  for (std::size_t i : pending) {
    std::string key = input_group_key(cases_[i]);
    if (groups.empty() || key != last) groups.emplace_back();
    groups.back().push_back(i);
    last = std::move(key);
  }
  if (largest_first) {
    // Longest first, so that no GPU is left with a big group while the others idle at the end. A
    // group's cost is taken as the bytes its cases move (the work model): the GPU time and the
    // host's input and oracle work both grow with them.
    const auto cost = [&](const std::vector<std::size_t>& group) {
      double bytes = 0;
      for (std::size_t i : group)
        if (const Op* op = Registry::instance().find_op(cases_[i].op))
          if (op->work && op_takes_shape(*op, cases_[i].shape))  // a refused shape costs nothing
            bytes += op->work(cases_[i].shape, cases_[i].dtype).bytes;
      return bytes;
    };
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t g = 0; g < groups.size(); ++g) order.push_back({-cost(groups[g]), g});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<std::size_t>> sorted;
    for (const auto& [_, g] : order) sorted.push_back(std::move(groups[g]));
    groups = std::move(sorted);
  }
  return groups;
}

void Session::run_lane(std::size_t lane, const std::vector<std::vector<std::size_t>>& groups,
                       std::atomic<std::size_t>& next, std::vector<std::optional<CaseRecord>>& slots,
                       std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings) {
  // A lane claims its next group before its current one ends and tells its executor, whose worker
  // then prepares that group's oracle while this one is timed (CaseExecutor::expect_next_group).
  // One lane claims it as the current group starts: the whole group's timing hides the next one's
  // oracle. Beside other lanes, it claims only as the current group's last case starts, so that a
  // group still goes to the lane that frees up first (and a large group never queues behind another
  // on one GPU while the others idle).
  const bool claim_at_start = lanes_.size() == 1;
  std::size_t g = next.fetch_add(1);
  while (cancel_.load() == 0 && g < groups.size()) {
    std::optional<std::size_t> after;
    const auto claim_next = [&] {
      after = next.fetch_add(1);
      if (*after < groups.size()) lanes_[lane].executor->expect_next_group(cases_[groups[*after].front()]);
    };
    if (claim_at_start) claim_next();
    for (std::size_t k = 0; k < groups[g].size(); ++k) {
      if (cancel_.load() != 0) break;
      if (!after && k + 1 == groups[g].size()) claim_next();
      run_one(lane, groups[g][k], slots, journal, result, ceilings);
    }
    if (!after) break;  // cancelled before the last case
    g = *after;
  }
}

void Session::run_one(std::size_t lane, std::size_t i, std::vector<std::optional<CaseRecord>>& slots,
                      std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings) {
  CaseExecutor& executor = *lanes_[lane].executor;
  const CaseRequest& c = cases_[i];
  {
    std::lock_guard lock(mutex_);
    in_flight_[lane] = fmt::format("{}:{}:{}:{}", c.op, c.variant, to_string(c.dtype), c.shape.to_compact());
  }
  if (callbacks_.on_started) {
    std::lock_guard deliver(deliver_mutex_);  // never beside another lane's record or start
    callbacks_.on_started(c, progress());
  }
  const auto case_start = std::chrono::steady_clock::now();
  CaseRecord rec;
  try {
    rec = executor.run_case(c);
  } catch (const std::exception& e) {  // a bug of ours must not cost the cases already measured
    rec = record_for(c);
    rec.disposition = Disposition::failed;
    rec.reason = std::string("internal error while running the case: ") + e.what();
  }
  if (cancel_.load() == 1 + static_cast<int>(CancelMode::abandon_current)) {
    rec.disposition = Disposition::failed;
    if (rec.reason.rfind("cancelled", 0) != 0)
      rec.reason = "cancelled: abandoned while it ran" + (rec.reason.empty() ? "" : " (" + rec.reason + ")");
  }
  if (lanes_.size() > 1) rec.device = lanes_[lane].device;
  complete_record(rec, c, ceilings, lanes_[lane].hello.device.l2_bytes);  // labels, figures, roof rule
  if (rec.stages) {  // the round trip beyond the worker's own stages
    const double round_trip_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - case_start).count();
    rec.stages->overhead_ms = std::max(0.0, round_trip_ms - rec.stages->total_ms());
  }
  if (rec.counters && !rec.counters->unavailable.empty()) {
    std::lock_guard lock(counters_mutex_);
    if (counters_refused_.insert(rec.counters->unavailable).second)
      note(fmt::format("note: counters not collected for {} ({}): {}. Cases go on with their timing.",
                       rec.nvtx_range, counters_refused_.size() == 1 ? "the first such case" : "another reason",
                       rec.counters->unavailable));
  }

  std::lock_guard deliver(deliver_mutex_);  // one record at a time into the journal and callbacks
  if (journal) {
    try {
      journal->append(rec);
    } catch (const std::exception& e) {
      result.write_errors.push_back(std::string("cannot write the journal: ") + e.what());
      journal.reset();  // the cases go on; the reports at the end still hold them
    }
  }
  slots[i] = rec;
  {
    std::lock_guard lock(mutex_);
    case_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
    ++progress_.done;
    progress_.failed += rec.disposition == Disposition::failed;
    in_flight_[lane].clear();
    if (options_.queue_records) queue_.push_back(rec);
  }
  record_ready_.notify_all();
  if (callbacks_.on_record) callbacks_.on_record(rec, progress());
}

}  // namespace kwb
