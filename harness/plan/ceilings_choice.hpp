// Which ceilings a run derives its figures against: a setting of the run (--datasheet-ceilings, a
// suite's `ceilings:`), chosen with the plan and carried out by the session.
#pragma once

namespace kwb {

enum class CeilingsChoice {
  cached_or_measured,  // the per-device cache, else measure once and cache (datasheet if that fails)
  datasheet,           // measure nothing
  measure_fresh,       // measure now, ignoring the cache, and cache the result (`kwb ceilings
                       // --refresh` before the cases: a suite's `ceilings: measure`)
};

}  // namespace kwb
