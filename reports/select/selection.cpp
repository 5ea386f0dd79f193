// Fastest variant per (op, dtype, shape, mode): grouping, ranking and the noise verdict.
#include "reports/select/selection.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace kwb::select {

namespace {

// Groups are keyed by text: a Shape has no ordering, and its CLI form is unique per shape.
std::string group_key(const std::string& op, DType dtype, Mode mode, const Shape& shape) {
  return fmt::format("{}|{}|{}|{}", op, to_string(dtype), to_string(mode), shape.to_assignments());
}

Mode run_mode(const RunInfo& run) {
  auto it = run.settings.find("mode");
  if (it == run.settings.end()) return Mode::cold;
  return parse_mode(it->second).value_or(Mode::cold);
}

// Why a case cannot be a candidate; nullopt when it can.
std::optional<std::string> exclusion_kind(const CaseRecord& c) {
  switch (c.disposition) {
    case Disposition::failed: return "failed";
    case Disposition::skipped: return "skipped";
    case Disposition::not_verified: return "not verified";
    case Disposition::passed: break;
  }
  if (!c.timing || c.timing->span.count <= 0 || !(c.timing->span.median > 0)) return "not timed";
  return std::nullopt;
}

// Excluded under SelectSettings::deterministic_only: the kind and the reason, or nullopt.
std::optional<std::pair<std::string, std::string>> nondeterminism(const Candidate& k) {
  if (!k.varies_run_to_run)
    return std::pair{std::string("run to run unknown"),
                     fmt::format("{} is not in this build's catalogue: whether it writes the same bits every run is "
                                 "unknown (--deterministic)",
                                 k.variant)};
  if (*k.varies_run_to_run)
    return std::pair{std::string("varies run to run"),
                     std::string("its output's last bits vary from run to run (--deterministic)")};
  return std::nullopt;
}

Candidate candidate_of(const CaseRecord& c, const SelectSettings& settings) {
  Candidate k;
  k.variant = c.variant;
  k.role = c.role;
  k.tunables = c.tunables;
  k.case_name = c.nvtx_range;
  k.math = c.math;
  k.median_us = c.timing->span.median;
  k.p10_us = c.timing->span.p10;
  k.p90_us = c.timing->span.p90;
  k.samples_us = c.timing->samples_us;
  if (settings.varies_run_to_run) k.varies_run_to_run = settings.varies_run_to_run(c.op, c.variant);
  return k;
}

struct Group {
  std::string op;
  DType dtype;
  Mode mode;
  Shape shape;
  std::vector<Candidate> candidates;  // plan order
  std::map<std::string, int> excluded, excluded_reasons;
};

// Decides clear / within noise for a group with a winner and a runner-up.
void judge_margin(SelectionEntry& e, const SelectSettings& settings, Selection& out) {
  const Candidate& w = e.ranked[0];
  const Candidate& r = e.ranked[1];
  e.margin_ratio = r.median_us / w.median_us;
  e.margin_pct = (e.margin_ratio - 1) * 100;
  if (e.margin_ratio - 1 < settings.min_margin) {
    e.rule = NoiseRule::min_margin;
    e.clear = false;
    e.verdict_reason = fmt::format("margin {:.2f}% is under the minimum {:.2f}%", e.margin_pct,
                                   settings.min_margin * 100);
    return;
  }
  const std::size_t need = settings.decision.min_samples;
  if (w.samples_us.size() >= need && r.samples_us.size() >= need) {
    // The runner-up judged as NEW against the winner as BASE: "slower" means the samples say the
    // winner is faster by more than the band, which is what a clear win is.
    DecisionSettings d = settings.decision;
    d.threshold = settings.min_margin;
    const Decision decision = decide(w.samples_us, r.samples_us, d);
    e.rule = NoiseRule::samples;
    e.clear = decision.verdict == Verdict::slower;
    e.verdict_reason = "samples: " + decision.reason;
    out.used_samples = true;
    return;
  }
  e.rule = NoiseRule::p10_p90;
  e.clear = w.p90_us < r.p10_us;
  e.verdict_reason = e.clear ? fmt::format("the winner's p90 {:.2f} us lies below the runner-up's p10 {:.2f} us "
                                           "(no per-sample arrays: p10-p90 ranges compared)",
                                           w.p90_us, r.p10_us)
                             : fmt::format("the p10-p90 ranges overlap ({:.2f}-{:.2f} us against {:.2f}-{:.2f} us; "
                                           "no per-sample arrays)",
                                           w.p10_us, w.p90_us, r.p10_us, r.p90_us);
  out.used_p10_p90 = true;
}

SelectionEntry entry_of(Group& g, const SelectSettings& settings, Selection& out) {
  SelectionEntry e;
  e.op = g.op;
  e.dtype = g.dtype;
  e.mode = g.mode;
  e.shape = g.shape;
  e.excluded = g.excluded;
  e.excluded_reasons = g.excluded_reasons;
  e.ranked = std::move(g.candidates);
  std::stable_sort(e.ranked.begin(), e.ranked.end(),
                   [](const Candidate& a, const Candidate& b) { return a.median_us < b.median_us; });
  for (const Candidate& c : e.ranked)
    if (c.role == Role::baseline && !e.baseline) e.baseline = c;  // ranked: the first is the fastest
  if (e.baseline) e.speedup_vs_baseline = e.baseline->median_us / e.winner().median_us;
  if (e.ranked.size() == 1) {
    e.clear = true;
    e.rule = NoiseRule::single_candidate;
    e.verdict_reason = "the only verified, timed candidate";
  } else {
    judge_margin(e, settings, out);
  }
  return e;
}

}  // namespace

std::string candidate_label(const Candidate& c) {
  return c.tunables.empty() ? c.variant : c.variant + "[" + to_assignments(c.tunables) + "]";
}

std::string_view to_string(NoiseRule rule) {
  switch (rule) {
    case NoiseRule::single_candidate: return "single candidate";
    case NoiseRule::min_margin: return "under minimum margin";
    case NoiseRule::samples: return "samples";
    case NoiseRule::p10_p90: return "p10-p90 ranges";
  }
  return "?";
}

int SelectionEntry::excluded_total() const {
  int n = 0;
  for (const auto& [kind, count] : excluded) n += count;
  return n;
}

Selection select_fastest(const RunInfo& run, const std::vector<CaseRecord>& cases, const SelectSettings& settings) {
  const Mode default_mode = run_mode(run);
  std::vector<Group> groups;            // in order of first appearance
  std::map<std::string, std::size_t> index_of;
  for (const CaseRecord& c : cases) {
    const Mode mode = c.timing ? c.timing->mode : default_mode;
    const std::string key = group_key(c.op, c.dtype, mode, c.shape);
    auto [it, fresh] = index_of.try_emplace(key, groups.size());
    if (fresh) groups.push_back(Group{c.op, c.dtype, mode, c.shape, {}, {}, {}});
    Group& g = groups[it->second];
    if (auto kind = exclusion_kind(c)) {
      ++g.excluded[*kind];
      ++g.excluded_reasons[c.reason.empty() ? *kind : c.reason];
      continue;
    }
    Candidate k = candidate_of(c, settings);
    if (settings.deterministic_only) {
      if (auto why = nondeterminism(k)) {
        ++g.excluded[why->first];
        ++g.excluded_reasons[why->second];
        continue;
      }
    }
    g.candidates.push_back(std::move(k));
  }

  Selection out;
  std::vector<std::string> ops;
  std::map<std::string, std::map<std::string, int>> wins;
  std::map<std::string, int> groups_per_op;
  for (Group& g : groups) {
    if (std::find(ops.begin(), ops.end(), g.op) == ops.end()) ops.push_back(g.op);
    if (g.candidates.empty()) {
      out.unselected.push_back({g.op, g.dtype, g.mode, g.shape, g.excluded, g.excluded_reasons});
      continue;
    }
    out.entries.push_back(entry_of(g, settings, out));
    ++wins[g.op][out.entries.back().winner().variant];
    ++groups_per_op[g.op];
  }
  for (const std::string& op : ops) {
    if (!wins.count(op)) continue;
    OpWins w{op, {wins[op].begin(), wins[op].end()}, groups_per_op[op]};
    std::stable_sort(w.wins.begin(), w.wins.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    out.per_op.push_back(std::move(w));
  }
  return out;
}

}  // namespace kwb::select
