// Rows, filters, sort and CSV of the results table (see case_table.hpp).
#include "gui/model/case_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>

#include "gui/model/units.hpp"
#include "harness/catalogue/math_label.hpp"
#include "reports/compare/match.hpp"

namespace kwb::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string csv_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

double number_of(const TableRow& r, Column c) {
  switch (c) {
    case Column::time_us: return r.time_us;
    case Column::gbps: return r.gbps;
    case Column::tflops: return r.tflops;
    case Column::pct_roof: return r.pct_roof;
    case Column::speedup: return r.speedup;
    default: return kNaN;
  }
}

const std::string& text_of(const TableRow& r, Column c) {
  static const std::string kEmpty;
  switch (c) {
    case Column::report: return r.report;
    case Column::op: return r.op;
    case Column::variant: return r.variant;
    case Column::math: return r.math;
    case Column::uses: return r.uses;
    case Column::dtype: return r.dtype;
    case Column::shape: return r.shape;
    case Column::mode: return r.mode;
    case Column::disposition: return r.disposition;
    default: return kEmpty;
  }
}

}  // namespace

std::string Badges::text() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (on) s += (s.empty() ? "" : ",") + std::string(name);
  };
  add(hot, "hot");
  add(throttled, "throttled");
  add(noisy, "noisy");
  add(unverified, "unverified");
  return s;
}

Badges badges_of(const CaseRecord& c) {
  Badges b;
  if (c.timing) {
    b.hot = c.timing->mode == Mode::hot;
    b.throttled = c.timing->clocks && c.timing->clocks->throttled_samples > 0;
    b.noisy = c.timing->stop_reason != StopReason::converged;
  }
  b.unverified = c.disposition == Disposition::not_verified ||
                 (c.disposition == Disposition::passed && !c.verify.has_value());
  return b;
}

const char* column_name(Column c) {
  static const char* kNames[] = {"op",     "variant",     "math", "uses",  "dtype",
                                 "shape",  "mode",        "status", "median", "GB/s",
                                 "TFLOP/s", "% roof",     "speedup", "badges", "report"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Column::count));
  return kNames[static_cast<int>(c)];
}

TableRow make_row(CaseRef ref, const std::string& report_name, const CaseRecord& c) {
  TableRow r;
  r.ref = ref;
  r.report = report_name;
  r.op = c.op;
  r.variant = c.variant;
  if (!c.tunables.empty()) r.variant += " [" + to_assignments(c.tunables) + "]";
  r.math = c.math;
  r.uses = uses_text(c.uses);
  r.dtype = std::string(to_string(c.dtype));
  r.shape = shown_shape(c);
  r.shape_compact = c.shape.to_compact();
  // Graph replays say so beside the mode: their times lack the host's launch gaps.
  r.mode = c.timing ? std::string(to_string(c.timing->mode)) + launch_note(c.timing->launch) : "";
  r.disposition = std::string(to_string(c.disposition));
  r.key = case_key(c);
  const bool timed = c.timing && c.derived;
  r.time_us = timed ? c.timing->span.median : kNaN;
  r.gbps = timed ? c.derived->bandwidth_gbps : kNaN;
  r.tflops = timed ? c.derived->tflops : kNaN;
  r.pct_roof = timed ? c.derived->pct_of_roofline : kNaN;
  r.speedup = timed && c.derived->speedup_vs_baseline ? *c.derived->speedup_vs_baseline : kNaN;
  if (!std::isnan(r.speedup)) r.speedup_math = math_comparison(c.math, c.derived->baseline_math);
  r.badges = badges_of(c);
  r.search_text = lower(r.key + " " + r.shape + " " + r.disposition + " " + c.reason + " " + r.badges.text() + " " + r.math +
                        " " + r.uses);
  return r;
}

std::string speedup_text(const TableRow& row) {
  const std::string ratio = format_ratio(row.speedup);
  return row.speedup_math.empty() || std::isnan(row.speedup) ? ratio : ratio + " (" + row.speedup_math + ")";
}

bool Filters::matches(const TableRow& row) const {
  if (!op.empty() && row.op != op) return false;
  if (!dtype.empty() && row.dtype != dtype) return false;
  if (!variant.empty() && row.variant != variant) return false;
  if (!report.empty() && row.report != report) return false;
  return text.empty() || row.search_text.find(lower(text)) != std::string::npos;
}

void sort_rows(std::vector<int>& order, const std::vector<TableRow>& rows, Column column,
               bool ascending) {
  const bool numeric = column >= Column::time_us && column <= Column::speedup;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const TableRow& ra = rows[a];
    const TableRow& rb = rows[b];
    if (numeric) {
      const double va = number_of(ra, column), vb = number_of(rb, column);
      if (std::isnan(va) || std::isnan(vb)) return !std::isnan(va) && std::isnan(vb);
      return ascending ? va < vb : va > vb;
    }
    if (column == Column::badges) {
      const std::string ta = ra.badges.text(), tb = rb.badges.text();
      return ascending ? ta < tb : ta > tb;
    }
    const std::string& ta = text_of(ra, column);
    const std::string& tb = text_of(rb, column);
    return ascending ? ta < tb : ta > tb;
  });
}

std::string rows_to_csv(const std::vector<const TableRow*>& rows) {
  std::string out =
      "report,op,variant,math,uses,dtype,shape,mode,disposition,time_us,gbps,tflops,pct_of_roofline,"
      "speedup,speedup_math,badges\n";
  for (const TableRow* r : rows)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r->report),
                       csv_field(r->op), csv_field(r->variant), csv_field(r->math), csv_field(r->uses),
                       csv_field(r->dtype), csv_field(r->shape_compact), csv_field(r->mode),
                       csv_field(r->disposition), csv_number(r->time_us), csv_number(r->gbps),
                       csv_number(r->tflops), csv_number(r->pct_roof), csv_number(r->speedup),
                       csv_field(r->speedup_math), csv_field(r->badges.text()));
  return out;
}

}  // namespace kwb::gui
