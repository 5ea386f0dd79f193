// A suite file (suites/*.yaml) read into a plain struct; nothing here knows the registry.
//
//   name: smoke                      # required
//   description: every op once       # optional
//   plugins: [build/libmine.so]      # optional: plugins to load first (a path or a list;
//                                    #   relative to this file), as `kwb run --plugin` does
//   mode: cold                       # cold | hot; flush: dirty | clean; preset: quick | default |
//   flush: dirty                     #   precise | verify; seed: 0..2^64-1; launch: stream |
//   preset: quick                    #   graph (suite-level only: a report holds one mode,
//                                    #   flush, launch and preset per run)
//   ceilings: cached                 # cached (default) | measure (fresh, as `kwb ceilings
//                                    #   --refresh`, before the cases) | datasheet
//   thresholds: {default: 3%, rmsnorm_fwd: 2%}   # smallest slowdown that is a regression
//   compare: {fail_on: [missing, skipped]}       # what else fails `kwb compare` against a run
//                                    #   of this suite (ambiguous, missing, skipped; optional)
//   entries:
//     - ops: rmsnorm_fwd             # one op or a list (required)
//       variants: [fused_v2_vec16]   # optional: every ordinary variant
//       dtypes: bf16                 # optional: every dtype the op has
//       shapes: {rows: 16384, cols: "1024:16384:x2"}   # a grid in --axis syntax, a list of
//                                    #   grids, or default | edge (the op's own sets; default)
//
// Every value keeps where it stood (line, column, key path), so that a problem the registry finds
// later (harness/plan/suite_plan.hpp) can still point at the right place in the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/types.hpp"
#include "harness/catalogue/flush_kind.hpp"
#include "harness/catalogue/launch_kind.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/fail_on.hpp"

namespace kwb {

// Where a value stands in its file: 1-based line and column, and its key path
// ("entries[2].dtypes[0]").
struct SuiteLocation {
  int line = 0, column = 0;
  std::string key;
};

template <class T>
struct Located {
  T value;
  SuiteLocation at;
};

// A malformed suite. what() is "FILE:LINE:COLUMN: KEY: what was wrong and how to fix it".
struct SuiteError : std::invalid_argument {
  SuiteError(const std::string& file, const SuiteLocation& at, const std::string& message);
  std::string file;
  SuiteLocation at;
  std::string message;  // without the location
};

// One axis (or tunable) of a grid, its values as `kwb run --axis NAME=VALUES` takes them.
struct SuiteAxis {
  Located<std::string> name;
  Located<std::string> values;  // "16384", "512,4100", "1024:16384:x2", "bshd,bhsd"
  std::string assignment() const { return name.value + "=" + values.value; }
};

struct SuiteEntry {
  SuiteLocation at;                            // the entry itself ("entries[3]")
  std::vector<Located<std::string>> ops;       // at least one
  std::vector<Located<std::string>> variants;  // empty: every ordinary variant of the ops
  std::vector<DType> dtypes;                   // empty: every dtype of each op
  ShapeSet shape_set = ShapeSet::standard;     // the op's own shapes, when `grids` is empty
  std::vector<std::vector<SuiteAxis>> grids;   // each a sweep, as one `kwb run --axis ...` line
  SuiteLocation shapes_at;                     // the `shapes` value (the entry when absent)
};

enum class SuiteCeilings { cached, measure, datasheet };

struct SuiteFile {
  std::string path;  // as given; every message starts with it
  std::string name;
  std::string description;
  // Paths as given, joined to the suite file's folder when relative; the CLI loads them before
  // the suite is planned (cli/plugin_flags.hpp), so nothing here knows what they hold.
  std::vector<Located<std::string>> plugins;
  Mode mode = Mode::cold;
  FlushKind flush = FlushKind::dirty;
  LaunchKind launch = LaunchKind::stream;
  std::string preset = "default";
  std::uint64_t seed = 1;
  SuiteCeilings ceilings = SuiteCeilings::cached;
  double default_threshold = kDefaultThreshold;
  std::vector<std::pair<Located<std::string>, double>> op_thresholds;  // op -> fraction
  std::vector<FailOnClass> compare_fail_on;  // `compare: {fail_on: [...]}`, each class once
  std::vector<SuiteEntry> entries;  // at least one

  static constexpr double kDefaultThreshold = 0.05;  // when `thresholds` has no default
};

// Parses suite text; `path` names it in messages. Throws SuiteError for YAML syntax errors,
// unknown or repeated keys (with a "did you mean"), wrong types, unknown dtypes, modes,
// flushes, launches, presets and ceilings, bad thresholds and missing required keys.
SuiteFile parse_suite(std::string_view text, const std::string& path);

// Reads and parses the file; an unreadable file is a SuiteError at line 0.
SuiteFile load_suite(const std::filesystem::path& path);

}  // namespace kwb
