// Parsing of NAME=VALUES axis assignments (grammar in axes.hpp) and the sweep they expand to.
//
// Every error names the offending text and shows a correct form, because the text comes
// straight from a user's command line or suite file and they must be able to fix it unaided.
#include "harness/plan/axes.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "harness/catalogue/excerpt.hpp"
#include "harness/plan/suggest.hpp"

namespace kwb {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::string_view kRangeForm = "START:STOP[:xFACTOR|:+STEP]";

// What a parse is working on, so that messages can quote the whole text and use the user's
// own axis name in examples.
struct Context {
  std::string_view whole;  // the full text given by the caller
  std::string name;        // the axis name, or empty when only VALUES were given
  // Values below 1 the axis takes anyway: its own default (window=0, "none"), as the op declares.
  std::vector<std::int64_t> own_defaults;

  // "cols=1024:16384:x2" when the name is known, else "1024:16384:x2".
  std::string example(std::string_view values) const {
    return name.empty() ? std::string(values) : name + "=" + std::string(values);
  }

  // The offending item as the user would recognise it: the full assignment when the item is
  // all of it, otherwise the item followed by where it sits.
  std::string quote(std::string_view item) const {
    std::string full = example(item);
    if (full == whole) return "'" + excerpt(full) + "'";
    return "'" + excerpt(item) + "' in '" + excerpt(whole) + "'";
  }

  // A part of the text (a value, a bound), followed by the whole text unless it is all of it.
  std::string at(std::string_view part) const {
    std::string out = "'" + excerpt(part) + "'";
    if (part != whole) out += " in '" + excerpt(whole) + "'";
    return out;
  }

  [[noreturn]] void fail(const std::string& message) const { throw AxisParseError(message); }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

enum class NumberStatus { ok, not_a_number, overflow };

// Digits with an optional k/m suffix and an optional leading '-' (accepted here so that the
// caller can say "must be positive" rather than "not a number" for -5).
NumberStatus parse_number(std::string_view text, std::int64_t& out) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  std::int64_t multiplier = 1;
  if (!text.empty()) {
    char last = text.back();
    if (last == 'k' || last == 'K') multiplier = 1024;
    if (last == 'm' || last == 'M') multiplier = 1024 * 1024;
    if (multiplier != 1) text.remove_suffix(1);
  }
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit))
    return NumberStatus::not_a_number;
  std::int64_t value = 0;
  for (char c : text) {
    int digit = c - '0';
    if (value > (kInt64Max - digit) / 10) return NumberStatus::overflow;
    value = value * 10 + digit;
  }
  if (value > kInt64Max / multiplier) return NumberStatus::overflow;
  out = (negative ? -value : value) * multiplier;
  return NumberStatus::ok;
}

// A number that must be a positive value: a single item, a range start or a range stop.
std::int64_t parse_positive(const Context& ctx, std::string_view text) {
  std::int64_t value = 0;
  switch (parse_number(text, value)) {
    case NumberStatus::not_a_number:
      ctx.fail("value " + ctx.at(text) +
               " is not a number: values are positive integers, optionally with a k or m "
               "suffix, e.g. " +
               ctx.example("4096") + " or " + ctx.example("16k"));
    case NumberStatus::overflow:
      ctx.fail("value " + ctx.at(text) +
               " does not fit in a 64-bit integer: use a smaller value, e.g. " + ctx.example("1m"));
    case NumberStatus::ok: break;
  }
  if (value <= 0 && std::find(ctx.own_defaults.begin(), ctx.own_defaults.end(), value) == ctx.own_defaults.end())
    ctx.fail("value " + ctx.at(text) + " is not positive: values must be positive integers" +
             (ctx.own_defaults.empty() ? std::string()
                                       : " or the axis's own default " + std::to_string(ctx.own_defaults.front())) +
             ", e.g. " + ctx.example("4096"));
  return value;
}

[[noreturn]] void fail_malformed_range(const Context& ctx, std::string_view item,
                                       const std::string& why) {
  ctx.fail("malformed range " + ctx.quote(item) + ": " + why + "; expected " +
           std::string(kRangeForm) + ", e.g. " + ctx.example("1024:16384:x2") + " or " +
           ctx.example("512:4096:+512"));
}

[[noreturn]] void fail_too_many(const Context& ctx, std::string_view item, std::uint64_t count,
                                std::size_t max_values, const std::string& suggestion) {
  ctx.fail("range " + ctx.quote(item) + " expands to " + std::to_string(count) +
           " values, more than the limit of " + std::to_string(max_values) + ": " + suggestion);
}

void expand_geometric(const Context& ctx, std::string_view item, std::int64_t start,
                      std::int64_t stop, std::int64_t factor, std::size_t max_values,
                      std::vector<std::int64_t>& out) {
  // Count first so that a too-large range fails before anything is stored. Comparing against
  // stop / factor keeps value * factor from overflowing near INT64_MAX.
  std::size_t count = 1;
  for (std::int64_t v = start; v <= stop / factor; v *= factor) ++count;
  if (count > max_values) {
    std::string suggestion = "use a larger factor";
    if (factor <= 3037000499)  // squaring stays within int64 and roughly halves the count
      suggestion += ", e.g. " + ctx.example(std::to_string(start) + ":" + std::to_string(stop) +
                                            ":x" + std::to_string(factor * factor));
    fail_too_many(ctx, item, count, max_values, suggestion);
  }
  for (std::int64_t v = start;; v *= factor) {
    out.push_back(v);
    if (v > stop / factor) break;
  }
}

void expand_arithmetic(const Context& ctx, std::string_view item, std::int64_t start,
                       std::int64_t stop, std::int64_t step, std::size_t max_values,
                       std::vector<std::int64_t>& out) {
  std::int64_t span = stop - start;  // no overflow: both are positive and start <= stop
  std::uint64_t count = static_cast<std::uint64_t>(span / step) + 1;
  if (count > max_values) {
    std::string suggestion = "use a larger step";
    if (max_values >= 2) {
      // The smallest step that fits: span / (max_values - 1), rounded up.
      std::int64_t divisor = static_cast<std::int64_t>(max_values - 1);
      std::int64_t fitting_step = span / divisor + (span % divisor != 0 ? 1 : 0);
      suggestion += ", e.g. " + ctx.example(std::to_string(start) + ":" + std::to_string(stop) +
                                            ":+" + std::to_string(fitting_step));
    }
    fail_too_many(ctx, item, count, max_values, suggestion);
  }
  for (std::int64_t v = start;; v += step) {
    out.push_back(v);
    if (v > stop - step) break;  // the next value would pass stop (or overflow)
  }
}

void parse_range(const Context& ctx, std::string_view item,
                 const std::vector<std::string_view>& parts, std::size_t max_values,
                 std::vector<std::int64_t>& out) {
  if (parts.size() > 3)
    fail_malformed_range(ctx, item, "too many ':' parts (" + std::to_string(parts.size()) + ")");
  const char* labels[] = {"start", "stop"};
  for (int i = 0; i < 2; ++i) {
    std::int64_t ignored = 0;
    if (parts[i].empty()) fail_malformed_range(ctx, item, std::string("empty ") + labels[i]);
    // A bound that is not even number-shaped (e.g. 'x2' in 1024:x2) means the range is laid out
    // wrongly, which the range form explains better than "not a number" would.
    if (parse_number(parts[i], ignored) == NumberStatus::not_a_number)
      fail_malformed_range(
          ctx, item, std::string(labels[i]) + " '" + std::string(parts[i]) + "' is not a number");
  }
  std::int64_t start = parse_positive(ctx, parts[0]);
  std::int64_t stop = parse_positive(ctx, parts[1]);
  if (start > stop)
    ctx.fail("range " + ctx.quote(item) + " has start " + std::to_string(start) +
             " greater than stop " + std::to_string(stop) +
             ": write the smaller value first, e.g. " +
             ctx.example(std::string(parts[1]) + ":" + std::string(parts[0]) +
                         (parts.size() == 3 ? ":" + std::string(parts[2]) : "")));

  if (parts.size() == 2) {
    expand_arithmetic(ctx, item, start, stop, 1, max_values, out);
    return;
  }

  std::string_view how = parts[2];
  if (how.empty() || (how.front() != 'x' && how.front() != '+'))
    fail_malformed_range(ctx, item,
                         "third part '" + std::string(how) + "' must be xFACTOR or +STEP");
  bool geometric = how.front() == 'x';
  std::string_view amount = how.substr(1);
  std::int64_t n = 0;
  switch (parse_number(amount, n)) {
    case NumberStatus::not_a_number:
      fail_malformed_range(ctx, item,
                           std::string(geometric ? "factor" : "step") + " '" + std::string(amount) +
                               "' is not a number");
    case NumberStatus::overflow:
      fail_malformed_range(ctx, item,
                           std::string(geometric ? "factor" : "step") + " '" + std::string(amount) +
                               "' does not fit in a 64-bit integer");
    case NumberStatus::ok: break;
  }
  std::string bounds = std::string(parts[0]) + ":" + std::string(parts[1]);
  if (geometric) {
    if (n < 2)
      ctx.fail("factor '" + std::string(how) + "' in " + ctx.quote(item) + " must be at least 2 (" +
               (n == 1 ? "x1 would never end" : "it would never grow") + "), e.g. " +
               ctx.example(bounds + ":x2"));
    expand_geometric(ctx, item, start, stop, n, max_values, out);
    return;
  }
  if (n <= 0)
    ctx.fail("step '" + std::string(how) + "' in " + ctx.quote(item) + " must be positive, e.g. " +
             ctx.example(bounds + ":+" + std::string(parts[0])));
  expand_arithmetic(ctx, item, start, stop, n, max_values, out);
}

std::vector<std::int64_t> parse_values(const Context& ctx, std::string_view text,
                                       std::size_t max_values) {
  if (trim(text).empty())
    ctx.fail("no values in '" + excerpt(ctx.whole) +
             "': expected a comma list of values, e.g. " + ctx.example("4096") + " or " +
             ctx.example("512,1024:4096:x2"));
  std::vector<std::int64_t> expanded;
  for (std::string_view raw_item : split(text, ',')) {
    std::string_view item = trim(raw_item);
    if (item.empty())
      ctx.fail("empty item in '" + excerpt(ctx.whole) + "': remove the stray comma, e.g. " +
               ctx.example("512,1024"));
    std::vector<std::string_view> parts = split(item, ':');
    if (parts.size() == 1)
      expanded.push_back(parse_positive(ctx, item));
    else
      parse_range(ctx, item, parts, max_values, expanded);
  }
  // Keep the first occurrence of each value: the order written is the order run.
  std::vector<std::int64_t> values;
  std::set<std::int64_t> seen;
  for (std::int64_t v : expanded)
    if (seen.insert(v).second) values.push_back(v);
  return values;
}

bool is_valid_name(std::string_view name) {
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !is_alpha(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return is_alpha(c) || is_digit(c); });
}

}  // namespace

namespace {

// NAME and VALUES of NAME=VALUES, with the name checked; ctx.name is set.
std::string_view split_assignment(Context& ctx, std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos)
    ctx.fail("missing '=' in '" + excerpt(text) + "': expected NAME=VALUES, e.g. cols=4096");
  std::string_view name = trim(text.substr(0, eq));
  if (name.empty())
    ctx.fail("missing axis name in '" + excerpt(text) + "': expected NAME=VALUES, e.g. cols" +
             std::string(text.substr(eq)));
  if (!is_valid_name(name))
    ctx.fail("invalid axis name '" + excerpt(name) + "' in '" + excerpt(text) +
             "': names start with a letter or '_' and contain only letters, digits and '_', "
             "e.g. cols=4096");
  ctx.name = std::string(name);
  return text.substr(eq + 1);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace

std::vector<AxisValue> AxisAssignment::axis_values() const {
  std::vector<AxisValue> out;
  if (is_choice())
    for (const auto& c : choices) out.emplace_back(c);
  else
    for (auto v : values) out.emplace_back(v);
  return out;
}

AxisAssignment parse_axis_assignment(std::string_view text, std::size_t max_values) {
  Context ctx{text, ""};
  std::string_view values = split_assignment(ctx, text);
  return AxisAssignment{ctx.name, parse_values(ctx, values, max_values), {}};
}

AxisAssignment parse_axis_assignment(std::string_view text, const ChoicesOf& choices_of,
                                     std::size_t max_values) {
  return parse_axis_assignment(text, choices_of, nullptr, max_values);
}

AxisAssignment parse_axis_assignment(std::string_view text, const ChoicesOf& choices_of,
                                     const DefaultsOf& defaults_of, std::size_t max_values) {
  Context ctx{text, ""};
  std::string_view values = split_assignment(ctx, text);
  if (const std::vector<std::string>* valid = choices_of ? choices_of(ctx.name) : nullptr)
    return parse_choice_assignment(text, *valid);
  if (defaults_of)
    for (std::int64_t d : defaults_of(ctx.name))
      if (d <= 0) ctx.own_defaults.push_back(d);
  return AxisAssignment{ctx.name, parse_values(ctx, values, max_values), {}};
}

AxisAssignment parse_choice_assignment(std::string_view text, const std::vector<std::string>& valid) {
  Context ctx{text, ""};
  std::string_view values = split_assignment(ctx, text);
  const std::string all = joined(valid);
  if (trim(values).empty())
    ctx.fail("no values in '" + excerpt(text) + "': axis '" + ctx.name +
             "' takes one or more of its choices, e.g. " + ctx.example(all));
  AxisAssignment out{ctx.name, {}, {}};
  for (std::string_view raw_item : split(values, ',')) {
    std::string_view item = trim(raw_item);
    if (item.empty())
      ctx.fail("empty item in '" + excerpt(text) + "': remove the stray comma, e.g. " +
               ctx.example(all));
    const std::string name(item);
    if (std::find(valid.begin(), valid.end(), name) != valid.end()) {
      if (std::find(out.choices.begin(), out.choices.end(), name) == out.choices.end())
        out.choices.push_back(name);
      continue;
    }
    if (item.find(':') != std::string_view::npos)
      ctx.fail("axis '" + ctx.name + "' is a choice axis: " + ctx.quote(item) +
               " is a range, but this axis takes names, not numbers; list the choices you want "
               "from " + all + ", e.g. " + ctx.example(all));
    ctx.fail("axis '" + ctx.name + "' in '" + excerpt(text) + "': " +
             unknown_name_message("choice", name, valid) + "; e.g. " + ctx.example(all));
  }
  return out;
}

std::vector<std::int64_t> parse_axis_values(std::string_view text, std::size_t max_values) {
  return parse_values(Context{text, ""}, text, max_values);
}

std::vector<Shape> expand_sweep(
    const std::vector<std::pair<std::string, std::vector<AxisValue>>>& axes) {
  std::size_t total = 1;
  for (const auto& [name, values] : axes) total *= values.size();
  std::vector<Shape> shapes;
  if (total == 0) return shapes;
  shapes.reserve(total);
  // An odometer over value indices: the last axis turns fastest, so the first varies slowest.
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    Shape shape;
    shape.axes.reserve(axes.size());
    for (std::size_t a = 0; a < axes.size(); ++a)
      shape.axes.emplace_back(axes[a].first, axes[a].second[index[a]]);
    shapes.push_back(std::move(shape));
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++index[a] < axes[a].second.size()) break;
      index[a] = 0;
    }
  }
  return shapes;
}

}  // namespace kwb
