// From filters to a list of cases: which ops, variants, dtypes and shapes a run will measure.
//
// Unknown names get a "did you mean" and the list of known ones; a test-only variant must be
// asked for with --include-test-variants. Cases are ordered op, dtype, shape, then variants with
// the baseline first, so the cases that share inputs run together and speedups are known as
// soon as a fused case finishes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/axes.hpp"
#include "worker/case_runner.hpp"
#include "catalogue/registry.hpp"

namespace kwb {

struct PlanError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct PlanRequest {
  std::vector<std::string> ops;       // empty: all
  std::vector<std::string> variants;  // empty: all ordinary variants
  std::vector<DType> dtypes;          // empty: each op's dtypes
  std::vector<AxisAssignment> axes;   // empty: each op's default shapes
  Mode mode = Mode::cold;
  FlushKind flush = FlushKind::dirty;
  std::string preset = "default";
  std::uint64_t seed = 1;
  bool include_test_variants = false;
};

// The --flush flag: "dirty" or "clean", and only in cold mode (a hot sample is not flushed).
// Throws PlanError with what to pass instead.
FlushKind parse_flush_flag(std::string_view text, Mode mode);

std::vector<CaseRequest> plan_cases(const PlanRequest& request, const Registry& registry);

// Device bytes one case allocates (its tensors plus the variant's workspace).
double case_device_bytes(const CaseRequest& c, const Registry& registry);

// nullopt if every case fits in `device_bytes` (with headroom for the L2 flush buffer and the
// context); otherwise a message naming the largest case that does not fit and what to do.
std::optional<std::string> check_cases_fit(const std::vector<CaseRequest>& cases,
                                           const Registry& registry, double device_bytes,
                                           const std::string& device_name);

// `kwb run ...` arguments that measure exactly this case.
std::string repro_command(const CaseRequest& c);

}  // namespace kwb
