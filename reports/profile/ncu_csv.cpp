// Reading ncu's raw-page CSV (see ncu_csv.hpp).
#include "reports/profile/ncu_csv.hpp"

#include "harness/plan/counter_sets.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <regex>

namespace kwb {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A metric column is named as the metric (unit__counter.rollup); the info columns ("Kernel
// Name", "Block Size") have spaces and no "__".
bool is_metric_column(const std::string& name) {
  return name.find("__") != std::string::npos && name.find(' ') == std::string::npos;
}

// Durations are compared in nanoseconds (what CUPTI and --print-units base give); ncu's default
// units scale them, so the named time units are converted back.
double time_factor(const std::string& unit) {
  if (unit == "usecond") return 1e3;
  if (unit == "msecond") return 1e6;
  if (unit == "second") return 1e9;
  return 1;
}

// "Mbyte", "Kcycle", "Ginst/second": a value ncu scaled for reading. Which base a byte prefix
// means is not said in the table, so such a column is refused rather than guessed at.
bool scaled_unit(const std::string& unit) {
  static const std::regex scaled("^[KMGT](byte|cycle|inst|sector|request|warp|thread|block|Hz)(/.*)?$");
  return std::regex_match(unit, scaled);
}

// A number as ncu prints it: "1073741824", "1,073,741,824", "96.5", "1.2e+09". nullopt: not a number.
std::optional<double> parse_number(std::string_view text) {
  static const std::regex grouped(R"(^-?\d{1,3}(,\d{3})+(\.\d+)?$)");
  std::string s(text);
  if (std::regex_match(s, grouped)) s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  double value = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string list_some(const std::vector<std::string>& names, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  if (names.size() > most) out += fmt::format(", ... ({} in all)", names.size());
  return out.empty() ? "none" : out;
}

constexpr const char* kHowToMake =
    "make it with `ncu --csv --page raw --print-units base --metrics ...` (the command `kwb profile CASE` prints)";

}  // namespace

std::vector<std::string> split_csv_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> fields;
  std::string field;
  std::size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) throw NcuCsvError("a quoted field is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') throw NcuCsvError("text after a closing quote");
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    fields.push_back(field);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

NcuRawTable parse_ncu_raw_csv(std::string_view text) {
  NcuRawTable table;
  std::vector<std::string> header;
  std::size_t name_column = 0;
  std::vector<std::size_t> metric_columns;
  bool have_units = false;
  int number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    const bool quoted = t.front() == '"';
    if (header.empty()) {  // before the table: ncu's and the program's own lines
      if (!(t.starts_with("\"ID\"") || t.starts_with("ID,"))) continue;
      std::vector<std::string> fields;
      try {
        fields = split_csv_line(t);
      } catch (const NcuCsvError& e) {
        throw NcuCsvError(fmt::format("line {}: {}", number, e.what()));
      }
      const auto kernel = std::find(fields.begin(), fields.end(), "Kernel Name");
      if (kernel == fields.end()) {
        if (std::find(fields.begin(), fields.end(), "Metric Name") != fields.end())
          throw NcuCsvError(fmt::format("line {}: this is ncu's details page (a \"Metric Name\" column), not the raw "
                                        "page; {}",
                                        number, kHowToMake));
        continue;
      }
      header = fields;
      name_column = static_cast<std::size_t>(kernel - fields.begin());
      for (std::size_t c = 0; c < header.size(); ++c)
        if (is_metric_column(header[c])) {
          metric_columns.push_back(c);
          table.metrics.push_back(header[c]);
        }
      continue;
    }
    if (t.starts_with("==") || !quoted) continue;  // ncu's ==PROF== lines, the program's output
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(t);
    } catch (const NcuCsvError& e) {
      throw NcuCsvError(fmt::format("line {}: {}", number, e.what()));
    }
    if (fields == header) continue;  // the same table's header again (another process)
    if (fields.size() != header.size())
      throw NcuCsvError(fmt::format("line {}: {} fields where the header (line of \"ID\") has {}; the file is cut or "
                                    "mixed with other output: {}",
                                    number, fields.size(), header.size(), kHowToMake));
    if (trim(fields[0]).empty()) {  // the units row
      if (!have_units)
        for (std::size_t c : metric_columns) table.units[header[c]] = std::string(trim(fields[c]));
      have_units = true;
      continue;
    }
    if (!all_digits(trim(fields[0])))
      throw NcuCsvError(fmt::format("line {}: the ID field reads '{}', not a result number", number, fields[0]));
    NcuKernelRow row;
    row.line = number;
    row.id = std::string(trim(fields[0]));
    row.name = fields[name_column];
    for (std::size_t c : metric_columns) {
      const std::string& metric = header[c];
      const std::string_view value = trim(fields[c]);
      if (value.empty() || lower(value) == "n/a") {
        row.not_available.push_back(metric);
        continue;
      }
      const auto n = parse_number(value);
      if (!n) {
        row.text[metric] = std::string(value);
        continue;
      }
      const auto unit = table.units.find(metric);
      row.values[metric] = *n * (unit == table.units.end() ? 1.0 : time_factor(unit->second));
    }
    table.kernels.push_back(std::move(row));
  }
  if (header.empty())
    throw NcuCsvError(std::string("no table of ncu's raw page: no line starts with the \"ID\" column beside a "
                                  "\"Kernel Name\" column; ") + kHowToMake);
  if (table.kernels.empty())
    throw NcuCsvError("ncu's table holds no kernel: nothing was profiled. The NVTX filter matched no launch (is the "
                      "case identity right, and did the case run its timing? ncu's own messages say), or the run "
                      "failed before the case's timing (its report says why)");
  return table;
}

CaseCounters counters_from_ncu_table(const NcuRawTable& table, const std::vector<std::string>& wanted,
                                     std::vector<std::string>* warnings) {
  const std::vector<std::string>& asked = wanted.empty() ? table.metrics : wanted;
  std::vector<std::string> present, missing;
  for (const std::string& m : asked)
    (std::find(table.metrics.begin(), table.metrics.end(), m) != table.metrics.end() ? present : missing)
        .push_back(m);
  // The duration rides along with every request (counter_sets.hpp): a table with it alone has
  // none of what was asked for.
  std::vector<std::string> asked_counts, present_counts;
  for (const std::string& m : asked)
    if (m != kDurationMetric) asked_counts.push_back(m);
  for (const std::string& m : present)
    if (m != kDurationMetric) present_counts.push_back(m);
  if (present.empty() || (present_counts.empty() && !asked_counts.empty()))
    throw NcuCsvError(fmt::format("ncu's table has none of the metrics asked for ({}); its metric columns: {}. Ask "
                                  "for those with --metrics, or profile the case again with the command `kwb profile "
                                  "CASE` prints",
                                  list_some(asked_counts.empty() ? asked : asked_counts, 4),
                                  list_some(table.metrics, 12)));
  for (const std::string& m : present) {
    const auto unit = table.units.find(m);
    if (unit != table.units.end() && scaled_unit(unit->second))
      throw NcuCsvError(fmt::format("column '{}' is in '{}', a unit ncu scaled for reading; profile with "
                                    "--print-units base so every value is in its base unit",
                                    m, unit->second));
  }
  if (!missing.empty() && warnings)
    warnings->push_back(fmt::format("ncu's table lacks {} of the metrics asked for (left out): {}", missing.size(),
                                    list_some(missing, 8)));

  CaseCounters out;
  out.source = "ncu";
  out.metrics = present;
  std::map<std::string, int> unreadable;  // metric -> kernels whose value was n/a or text
  for (const NcuKernelRow& row : table.kernels) {
    KernelCounters k;
    k.name = row.name;
    for (const std::string& m : present) {
      if (const auto v = row.values.find(m); v != row.values.end())
        k.values[m] = v->second;
      else
        ++unreadable[m];
    }
    out.kernels.push_back(std::move(k));
  }
  for (const auto& [metric, kernels] : unreadable)
    if (warnings)
      warnings->push_back(fmt::format("{}: no value (\"n/a\" or text) for {} of {} kernels; left out of them and of "
                                      "the total",
                                      metric, kernels, table.kernels.size()));
  out.total = total_over_kernels(out.kernels);
  return out;
}

}  // namespace kwb
