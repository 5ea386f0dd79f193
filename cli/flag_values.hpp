// Numbers and names given on the command line, checked with messages that say which flag, what
// was wrong and what to write instead. Parsed here rather than by CLI11 so that "-1" for an
// unsigned seed or "inf" for a timeout is refused, not wrapped around or accepted. The settings
// of a plan (seed, max-cases, names) are checked by the request layer
// (harness/plan/run_request.hpp) with the same grammar (harness/plan/setting_values.hpp, which
// also holds without_repeats).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/plan/setting_values.hpp"

namespace kwb::cli {

struct FlagError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A CUDA device index: a whole number >= 0 (checked against the device count later, once the
// worker has seen the devices).
int parse_device_index(const std::string& flag, const std::string& text);

// `--devices`: "all" (every GPU the worker sees) or device indices separated by commas ("0,1"),
// each once.
struct DeviceList {
  bool all = false;
  std::vector<int> indices;
};
DeviceList parse_device_list(const std::string& flag, const std::string& text);

// A seed: a whole number from 0 to 2^64-1.
std::uint64_t parse_seed(const std::string& flag, const std::string& text);

// A time limit in seconds: finite and above 0.
double parse_positive_seconds(const std::string& flag, const std::string& text);

// A count: a whole number >= 1.
std::size_t parse_positive_count(const std::string& flag, const std::string& text);

// A relative threshold written as a percentage ("3%") or a fraction ("0.03"); strictly between 0
// and 1 (100%), so that "3", which would mean 300%, is refused with the two ways to write it.
double parse_threshold(const std::string& flag, const std::string& text);

// A duration in microseconds: finite and >= 0.
double parse_non_negative_us(const std::string& flag, const std::string& text);

// One of `choices`; the message lists them.
void check_choice(const std::string& flag, const std::string& text, const std::vector<std::string>& choices);

}  // namespace kwb::cli
