// Axis values from the command line and the sweep they expand to.
//
// An axis assignment is NAME=VALUES where VALUES is a comma list of items, and each item is
//   1024              one value
//   1024:16384:x2     start:stop:xFACTOR, geometric, stop included when reached
//   512:4096:+512     start:stop:+STEP, arithmetic, stop included when reached
//   512:4096          start:stop, step +1
// Values are positive integers (or the axis's own default, e.g. window=0 for "none", where the
// caller passes the op's defaults); a suffix k (x1024) or m (x1048576) is accepted: 16k = 16384.
//
// A choice axis (one the op declares with named values, e.g. layout or causal) takes a comma
// list of its names instead: layout=bshd,bhsd. Ranges and suffixes mean nothing there.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/types.hpp"

namespace kwb {

// Thrown for malformed text; what() says what was wrong and how to write it instead.
struct AxisParseError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct AxisAssignment {
  std::string name;
  std::vector<std::int64_t> values;  // integer axes: in the order written, duplicates removed
  std::vector<std::string> choices;  // choice axes: names in the order written, duplicates removed

  bool is_choice() const { return !choices.empty(); }
  // Integers or choice names as axis values, in order.
  std::vector<AxisValue> axis_values() const;
};

// The valid names of a choice axis, or null when `axis` is an integer axis (or unknown).
using ChoicesOf = std::function<const std::vector<std::string>*(std::string_view axis)>;

// "cols=1024:16384:x2" -> {"cols", {1024, 2048, 4096, 8192, 16384}}.
// Throws AxisParseError. A range may not expand to more than `max_values` values.
AxisAssignment parse_axis_assignment(std::string_view text, std::size_t max_values = 4096);

// As above, but an axis for which `choices_of` gives names is parsed as a choice list: each item
// must be one of them (an unknown one is refused with a "did you mean" and the valid names, and a
// range with a message saying that the axis takes names).
AxisAssignment parse_axis_assignment(std::string_view text, const ChoicesOf& choices_of,
                                     std::size_t max_values = 4096);

// The default value of an integer axis in every op that declares it (empty when none does).
using DefaultsOf = std::function<std::vector<std::int64_t>(std::string_view axis)>;

// As above, and an integer axis also takes its own default below 1 (window=0: no window).
AxisAssignment parse_axis_assignment(std::string_view text, const ChoicesOf& choices_of,
                                     const DefaultsOf& defaults_of, std::size_t max_values = 4096);

// "layout=bshd,bhsd" against the axis's valid names. Throws AxisParseError.
AxisAssignment parse_choice_assignment(std::string_view text, const std::vector<std::string>& valid);

// Values of one VALUES string (the part after '=').
std::vector<std::int64_t> parse_axis_values(std::string_view text, std::size_t max_values = 4096);

// Cartesian product in axis order, the first axis varying slowest.
// `axes` lists each axis name with its values, in the op's axis order.
std::vector<Shape> expand_sweep(
    const std::vector<std::pair<std::string, std::vector<AxisValue>>>& axes);

}  // namespace kwb
