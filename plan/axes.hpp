// Axis values from the command line and the sweep they expand to.
//
// An axis assignment is NAME=VALUES where VALUES is a comma list of items, and each item is
//   1024              one value
//   1024:16384:x2     start:stop:xFACTOR, geometric, stop included when reached
//   512:4096:+512     start:stop:+STEP, arithmetic, stop included when reached
//   512:4096          start:stop, step +1
// Values are positive integers; a suffix k (x1024) or m (x1048576) is accepted: 16k = 16384.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "catalogue/types.hpp"

namespace kwb {

// Thrown for malformed text; what() says what was wrong and how to write it instead.
struct AxisParseError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct AxisAssignment {
  std::string name;
  std::vector<std::int64_t> values;  // in the order written, duplicates removed
};

// "cols=1024:16384:x2" -> {"cols", {1024, 2048, 4096, 8192, 16384}}.
// Throws AxisParseError. A range may not expand to more than `max_values` values.
AxisAssignment parse_axis_assignment(std::string_view text, std::size_t max_values = 4096);

// Values of one VALUES string (the part after '=').
std::vector<std::int64_t> parse_axis_values(std::string_view text, std::size_t max_values = 4096);

// Cartesian product in axis order, the first axis varying slowest.
// `axes` lists each axis name with its values, in the op's axis order.
std::vector<Shape> expand_sweep(
    const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& axes);

}  // namespace kwb
