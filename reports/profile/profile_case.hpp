// The one case `kwb profile` hands to Nsight Compute, from what a person gives it: a case
// identity ("op:variant:dtype:shape[:tunables]", a record's nvtx_range) or a repro line pasted
// whole ("kwb run --op ... --variant ..."). Either is planned by the request layer
// (harness/plan/run_request.hpp) like `kwb run` plans it, so an unknown name gets the same
// did-you-mean, and it must plan exactly one case.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/case_request.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/run_request.hpp"
#include "harness/record/report.hpp"

namespace kwb {

// What is wrong with the case given, and how to name it instead.
struct ProfileCaseError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A repro line rather than an identity: it has blanks or starts with a flag.
bool is_repro_line(std::string_view text);

// The settings of a repro line's words ("kwb" or a path ending in it, "run", then kwb run's flags).
// The flags that shape the case are read; those that do not (--out, --timer, --device...) are
// passed over. Throws ProfileCaseError for a flag kwb run does not have, a flag without its
// value, a suite or a resume (many cases, not one).
RunSettings settings_from_repro(const std::vector<std::string>& words);

// The settings an identity names: op, variant and dtype, its shape's axes and its tunables as
// --axis assignments (the op's integer axes in its order, then name=choice), test-only variants
// allowed. Mode and seed are not part of an identity: cold and the default seed. Throws
// ProfileCaseError for a malformed identity or one that names what this build does not have.
RunSettings settings_from_identity(std::string_view identity, const Registry& registry);

// The one case the settings plan. Throws ProfileCaseError when they plan none or several, and,
// for an identity (`identity` not empty), when the planned case's identity is not it.
CaseRequest plan_one_case(const RunSettings& settings, const Registry& registry, std::string_view identity = {});

// An identity or a repro line (is_repro_line) -> its case.
CaseRequest resolve_profile_case(std::string_view text, const Registry& registry);

// The record of `identity` in a report; throws ProfileCaseError naming the report and the
// closest identity it holds.
const CaseRecord& find_case(const Report& report, const std::string& identity, const std::string& report_path);

// The case as the report ran it: its repro line planned (mode, flush and seed included), which
// must give the same identity. A record without a repro line keeps `planned`, in the record's
// timing mode.
CaseRequest case_as_recorded(const CaseRecord& record, const CaseRequest& planned, const Registry& registry);

// The sample's kernel count a record tells: its counters' kernels, else its timing's kernels per
// sample (CUPTI); 0 when it tells none (CUDA events, not timed).
int kernels_per_launch(const CaseRecord& record);

}  // namespace kwb
