// What the parent adds to a worker's record before anyone sees it, in one place for every caller
// that runs cases: a session's lanes (session_lanes.cpp) and the interleaved rounds of `kwb
// compare --confirm` (interleaved_runner.hpp). A worker measures; what the case means (its
// labels, its figures against the ceilings, and whether those figures are possible at all) is
// decided here, so that a confirm round is judged exactly as the run that produced the report.
#pragma once

#include <cstdint>

#include "harness/catalogue/case_request.hpp"
#include "harness/record/record.hpp"

namespace kwb {

// Fills in `rec` (the record the executor returned for `request`): its repro command, the
// variant's labels from the registry (role, workspace, uses; math for a case that ran), the
// figures derived with `ceilings` (harness/derive/derive.hpp), then the roof rule: a passed case
// above its roof by more than the margin becomes failed, its timing and figures kept. `l2_bytes`
// is the GPU's L2 size as its worker reported it (0: unknown).
void complete_record(CaseRecord& rec, const CaseRequest& request, const Ceilings& ceilings, std::int64_t l2_bytes);

}  // namespace kwb
