// Tuning files at run time: `kwb run --tuning tune.json` makes the tuned variant run with the best
// configuration `kwb tune` found, as the mHC-lite stack copies its grid search's winners into its
// launchers, without hard-coding them. Per (dtype, shape) of the plan, the entry of the same dtype
// whose shape is nearest (choice axes equal; integer axes by the sum of |log(a / b)|) gives the
// tunables; the file's GPU must be the one the run finds (checked by the session). The case's
// identity and record then name the configuration used, as for any tunable value.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/types.hpp"
#include "harness/plan/planner.hpp"

namespace kwb {

struct TuningError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct TuningTable {
  std::string path;  // as given, for messages and the report's settings
  std::string op, variant, device;
  struct Entry {
    DType dtype = DType::fp32;
    Shape shape;
    TunableValues best;
  };
  std::vector<Entry> entries;  // shapes that had a best configuration
};

// Reads a `kwb.tune/1` file; TuningError naming the file and what is wrong (not JSON, another
// schema, an op or variant the catalogue lacks, a tunable the variant does not declare).
TuningTable read_tuning_file(const std::filesystem::path& path);

// The best configuration of the nearest tuned shape of the same dtype; nullopt when none.
std::optional<TunableValues> tuned_for(const TuningTable& table, DType dtype, const Shape& shape);

// Gives every case of a tuned variant the tuned configuration, except the tunables named in
// `given_axes` (an --axis naming a tunable wins). Returns how many cases changed.
std::size_t apply_tuning(std::vector<CaseRequest>& cases, const std::vector<TuningTable>& tables,
                         const std::vector<AxisAssignment>& given_axes);

}  // namespace kwb
