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

#include "harness/plan/axes.hpp"
#include "harness/catalogue/case_request.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/setting_error.hpp"

namespace kwb {

// Which listed shapes an op runs when the sweep names none of its axes.
enum class ShapeSet {
  standard,  // Op::default_shapes: realistic sizes, the smoke and benchmark set
  edge,      // Op::edge_shapes: small, odd sizes at every axis's edges, for correctness
};

// The shapes an op runs when a sweep names none of its axes.
std::vector<Shape> named_shape_set(const Op& op, ShapeSet set);

struct PlanRequest {
  std::vector<std::string> ops;       // empty: all
  std::vector<std::string> variants;  // empty: all ordinary variants
  std::vector<DType> dtypes;          // empty: each op's dtypes
  std::vector<AxisAssignment> axes;   // empty: each op's default (or edge) shapes
  ShapeSet shape_set = ShapeSet::standard;
  Mode mode = Mode::cold;
  FlushKind flush = FlushKind::dirty;
  LaunchKind launch = LaunchKind::stream;
  std::string preset = "default";
  std::uint64_t seed = 1;
  bool include_test_variants = false;  // also brings in test-only ops
  // A plan with more cases is refused before any is built (two long ranges multiply).
  std::size_t max_cases = kDefaultMaxCases;
  static constexpr std::size_t kDefaultMaxCases = 10000;
};

// The flush setting: "dirty" or "clean", and only in cold mode (a hot sample is not flushed).
// The one place a flush given as text becomes a FlushKind. Throws SettingError with what to pass
// instead.
FlushKind parse_flush_flag(std::string_view text, Mode mode);

// The one rule between the two: hot mode takes only the default, dirty (a hot sample is not
// flushed, and a report must not name a flush that never happened). A suite file's own mode and
// flush are held to it too (harness/plan/suite_file.cpp, at the flush's line).
bool flush_fits_mode(FlushKind flush, Mode mode);

// Throws SettingError when !flush_fits_mode.
void check_flush_for_mode(FlushKind flush, Mode mode);

// Repeated op, variant and dtype names count once (a repeated --op must not run every case
// twice); an axis named twice is an error. Throws SettingError for every refusal: unknown names,
// more cases than max_cases (counted before expanding, so a huge sweep costs no memory), and
// tensors too large to count in 64 bits.
std::vector<CaseRequest> plan_cases(const PlanRequest& request, const Registry& registry);

// Reads `--axis` text with the registry's choice axes in mind: layout=bshd,bhsd for an op that
// declares layout's choices, the integer grammar for every other name (axes and tunables).
// Throws AxisParseError.
AxisAssignment parse_axis_for(std::string_view text, const Registry& registry);

// Device bytes one case allocates (its tensors plus the variant's workspace), computed in long
// double so that huge axes give a huge number instead of a wrapped-around small one.
double case_device_bytes(const CaseRequest& c, const Registry& registry);

// nullopt if every case fits in `device_bytes` (with headroom for the L2 flush buffer and the
// context); otherwise a message naming the largest case that does not fit and what to do. Cases
// their variant refuses (Variant::refuse) are left out: they allocate nothing and are skipped.
std::optional<std::string> check_cases_fit(const std::vector<CaseRequest>& cases,
                                           const Registry& registry, double device_bytes,
                                           const std::string& device_name);

// The case's identity, "op:variant:dtype:shape[:tunables]" (harness/catalogue/case_identity.hpp).
std::string case_identity(const CaseRequest& c);

// `kwb run ...` arguments that measure exactly this case (choices and tunables as --axis).
std::string repro_command(const CaseRequest& c);

}  // namespace kwb
