// CSV rendering of a report, and an RFC 4180 reader so tests (and tools) can read it back.
#include "harness/record/csv_report.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "harness/catalogue/math_label.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {
namespace {

// fmt's "{}" is the shortest text that parses back to the same double.
std::string num(double v) { return fmt::format("{}", v); }
std::string num(std::int64_t v) { return std::to_string(v); }
std::string boolean(bool v) { return v ? "true" : "false"; }

// A stats block with no samples was not measured (events give no busy/kernel_sum): empty cells.
std::string stat(const std::optional<TimingResult>& t, SummaryStats TimingResult::*which,
                 double SummaryStats::*field) {
  if (!t || ((*t).*which).count == 0) return "";
  return num(((*t).*which).*field);
}

template <class T, class F>
std::string if_present(const std::optional<T>& part, F&& cell) {
  return part ? cell(*part) : std::string();
}

// Whether the case's counters read its DRAM bytes (both directions): without them its measured
// work holds 0 bytes, which must not read as a measured 0.
bool dram_measured(const CaseRecord& c) {
  return c.counters && c.counters->total.count(kDramBytesReadMetric) > 0 &&
         c.counters->total.count(kDramBytesWriteMetric) > 0;
}

template <class F>
std::string if_measured(const CaseRecord& c, F&& cell) {
  return c.derived && c.derived->measured ? cell(*c.derived, *c.derived->measured) : std::string();
}

struct Column {
  const char* name;
  std::function<std::string(const CaseRecord&)> cell;
};

// Header and cells come from the same table, so the two can never drift apart.
const std::vector<Column>& leading_columns() {
  static const std::vector<Column> columns = {
      {"index", [](const CaseRecord& c) { return std::to_string(c.index); }},
      {"op", [](const CaseRecord& c) { return c.op; }},
      {"variant", [](const CaseRecord& c) { return c.variant; }},
      {"role", [](const CaseRecord& c) { return std::string(to_string(c.role)); }},
      // What ran it: libraries joined with '+' (empty: the project's own kernels only), the math label.
      {"uses", [](const CaseRecord& c) { return uses_text(c.uses); }},
      {"math", [](const CaseRecord& c) { return c.math; }},
      {"dtype", [](const CaseRecord& c) { return std::string(to_string(c.dtype)); }},
      {"shape", [](const CaseRecord& c) { return c.shape.to_compact(); }},
  };
  return columns;
}

const std::vector<Column>& trailing_columns() {
  using T = TimingResult;
  using S = SummaryStats;
  auto timing = [](auto cell) {
    return [cell](const CaseRecord& c) { return if_present(c.timing, cell); };
  };
  auto derived = [](auto cell) {
    return [cell](const CaseRecord& c) { return if_present(c.derived, cell); };
  };
  auto verify = [](auto cell) {
    return [cell](const CaseRecord& c) { return if_present(c.verify, cell); };
  };
  auto span = [](double S::*field) {
    return [field](const CaseRecord& c) { return stat(c.timing, &T::span, field); };
  };
  static const std::vector<Column> columns = {
      {"mode", timing([](const T& t) { return std::string(to_string(t.mode)); })},
      {"disposition", [](const CaseRecord& c) { return std::string(to_string(c.disposition)); }},
      {"reason", [](const CaseRecord& c) { return c.reason; }},
      {"flush", timing([](const T& t) { return t.flush; })},
      {"timer", timing([](const T& t) { return t.timer; })},
      {"preset", timing([](const T& t) { return t.preset; })},
      {"samples", timing([](const T& t) { return num(t.span.count); })},
      {"time_median_us", span(&S::median)},
      {"time_p10_us", span(&S::p10)},
      {"time_p90_us", span(&S::p90)},
      {"time_min_us", span(&S::min)},
      {"time_max_us", span(&S::max)},
      {"time_mean_us", span(&S::mean)},
      {"time_stdev_us", span(&S::stdev)},
      {"noise_rel_iqr", span(&S::noise)},
      {"busy_median_us",
       [](const CaseRecord& c) { return stat(c.timing, &T::busy, &S::median); }},
      {"kernel_sum_median_us",
       [](const CaseRecord& c) { return stat(c.timing, &T::kernel_sum, &S::median); }},
      // -1 means the timer cannot count kernels: not measured, so empty.
      {"kernels_per_sample", timing([](const T& t) {
         return t.kernels_per_sample < 0 ? std::string() : num(t.kernels_per_sample);
       })},
      {"workspace_bytes", [](const CaseRecord& c) { return num(c.workspace_bytes); }},
      {"device_memory_bytes", [](const CaseRecord& c) { return c.device_memory_bytes ? num(*c.device_memory_bytes) : std::string(); }},
      {"stop_reason", timing([](const T& t) { return std::string(to_string(t.stop_reason)); })},
      // Empty when NVML was unavailable: not measured, never zero.
      {"sm_clock_min_mhz", timing([](const T& t) { return t.clocks ? num(t.clocks->sm_min_mhz) : std::string(); })},
      {"sm_clock_max_mhz", timing([](const T& t) { return t.clocks ? num(t.clocks->sm_max_mhz) : std::string(); })},
      {"sm_clock_mean_mhz", timing([](const T& t) {
         return t.clocks && t.clocks->sm_mean_mhz > 0 ? num(t.clocks->sm_mean_mhz) : std::string();
       })},
      {"throttled_samples", timing([](const T& t) { return t.clocks ? num(t.clocks->throttled_samples) : std::string(); })},
      {"model_bytes", derived([](const Derived& d) { return num(d.model_bytes); })},
      {"model_flops", derived([](const Derived& d) { return num(d.model_flops); })},
      {"executed_bytes", derived([](const Derived& d) { return num(d.executed_bytes); })},
      {"executed_flops", derived([](const Derived& d) { return num(d.executed_flops); })},
      {"bandwidth_gbps", derived([](const Derived& d) { return num(d.bandwidth_gbps); })},
      {"tflops", derived([](const Derived& d) { return num(d.tflops); })},
      {"intensity_flop_per_byte", derived([](const Derived& d) { return num(d.intensity); })},
      {"bound", derived([](const Derived& d) { return d.bound; })},
      {"roofline_tflops", derived([](const Derived& d) { return num(d.roofline_tflops); })},
      {"pct_of_roofline", derived([](const Derived& d) { return num(d.pct_of_roofline); })},
      {"pct_of_bandwidth_ceiling",
       derived([](const Derived& d) { return num(d.pct_of_bandwidth_ceiling); })},
      {"pct_of_l2_ceiling", derived([](const Derived& d) {
         return d.pct_of_l2_ceiling ? num(*d.pct_of_l2_ceiling) : std::string();
       })},
      {"speedup_vs_baseline", derived([](const Derived& d) {
         return d.speedup_vs_baseline ? num(*d.speedup_vs_baseline) : std::string();
       })},
      {"baseline_variant", derived([](const Derived& d) { return d.baseline_variant; })},
      {"baseline_math", derived([](const Derived& d) { return d.baseline_math; })},
      {"verify_passed", verify([](const VerifyResult& v) { return boolean(v.passed); })},
      {"max_abs_err", verify([](const VerifyResult& v) { return num(v.max_abs_err); })},
      {"max_rel_err", verify([](const VerifyResult& v) { return num(v.max_rel_err); })},
      {"rel_l2_err", verify([](const VerifyResult& v) { return num(v.rel_l2_err); })},
      {"mismatches", verify([](const VerifyResult& v) { return num(v.mismatches); })},
      {"unwritten", verify([](const VerifyResult& v) { return num(v.unwritten); })},
      {"rows_checked", verify([](const VerifyResult& v) { return num(v.rows_checked); })},
      {"rows_total", verify([](const VerifyResult& v) { return num(v.rows_total); })},
      {"nvtx_range", [](const CaseRecord& c) { return c.nvtx_range; }},
      {"repro", [](const CaseRecord& c) { return c.repro; }},
      // The measured roofline (hardware counters, harness/derive/measured_roofline.hpp): empty where
      // the case collected none, or not the counters a figure needs. Last, so that the columns
      // before them keep their places in files read by position.
      {"measured_dram_bytes", [](const CaseRecord& c) {
         return if_measured(c, [&](const Derived&, const MeasuredWork& m) {
           return dram_measured(c) ? num(m.dram_bytes) : std::string();
         });
       }},
      {"traffic_ratio", [](const CaseRecord& c) {
         return if_measured(c, [&](const Derived& d, const MeasuredWork& m) {
           return dram_measured(c) && d.model_bytes > 0 ? num(m.traffic_ratio) : std::string();
         });
       }},
      {"measured_flops", [](const CaseRecord& c) {
         return if_measured(c, [](const Derived&, const MeasuredWork& m) { return m.flops ? num(*m.flops) : std::string(); });
       }},
      {"flop_ratio", [](const CaseRecord& c) {
         return if_measured(c, [](const Derived&, const MeasuredWork& m) {
           return m.flop_ratio ? num(*m.flop_ratio) : std::string();
         });
       }},
      {"launch", timing([](const T& t) { return std::string(to_string(t.launch)); })},
      // Host time of a sample's launch call per kernel; empty where not measured (events).
      {"launch_overhead_us", timing([](const T& t) {
         return t.launch_overhead_us ? num(*t.launch_overhead_us) : std::string();
       })},
  };
  return columns;
}

void append_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

void append_row(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    append_field(out, fields[i]);
  }
  out += '\n';
}

}  // namespace

std::string to_csv(const Report& report) {
  std::vector<std::string> axes, tunables;  // unions over cases, first-seen order
  for (const CaseRecord& c : report.cases) {
    for (const auto& [axis, value] : c.shape.axes)
      if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    for (const auto& [name, value] : c.tunables)
      if (std::find(tunables.begin(), tunables.end(), name) == tunables.end()) tunables.push_back(name);
  }

  std::vector<std::string> header;
  for (const Column& col : leading_columns()) header.push_back(col.name);
  for (const std::string& axis : axes) header.push_back("axis_" + axis);
  for (const std::string& name : tunables) header.push_back("tunable_" + name);
  for (const Column& col : trailing_columns()) header.push_back(col.name);

  std::string out;
  append_row(out, header);
  std::vector<std::string> row;
  for (const CaseRecord& c : report.cases) {
    row.clear();
    for (const Column& col : leading_columns()) row.push_back(col.cell(c));
    for (const std::string& axis : axes) {
      const AxisValue* value = c.shape.value(axis);  // a choice axis's cell is its name
      row.push_back(value ? value->text() : std::string());
    }
    for (const std::string& name : tunables) {
      auto it = std::find_if(c.tunables.begin(), c.tunables.end(),
                             [&](const auto& t) { return t.first == name; });
      row.push_back(it != c.tunables.end() ? std::to_string(it->second) : std::string());
    }
    for (const Column& col : trailing_columns()) row.push_back(col.cell(c));
    append_row(out, row);
  }
  return out;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool in_quotes = false;
  bool after_quote = false;  // just closed a quoted field: only a separator may follow
  std::size_t line = 1, quote_line = 0;

  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    after_quote = false;
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    row.clear();
  };

  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_quotes) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == ',') {
      end_field();
    } else if (ch == '\n' || (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (ch == '\r') ++i;
      end_row();
      ++line;
    } else if (after_quote) {
      throw ReportError(fmt::format("line {}: unexpected character after a closing quote", line));
    } else if (ch == '"') {
      if (!field.empty())
        throw ReportError(fmt::format("line {}: quote inside an unquoted field", line));
      in_quotes = true;
      quote_line = line;
    } else {
      field += ch;
    }
  }
  if (in_quotes)
    throw ReportError(fmt::format("line {}: unterminated quoted field", quote_line));
  if (!row.empty() || !field.empty() || after_quote) end_row();  // last line without "\n"
  return rows;
}

void write_report_csv(const std::filesystem::path& path, const Report& report) {
  atomic_write_file(path, to_csv(report));
}

}  // namespace kwb
