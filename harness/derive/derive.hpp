// Derived figures of a case: bandwidth, FLOP rate, arithmetic intensity, where it sits on the
// roofline, and its speedup over the op's baseline variant.
//
// Every figure comes from the op's work model (bytes and FLOPs it must at least move and do)
// over the median span; nothing is typed by hand. Above 100% of a ceiling is reported as it is
// and flagged by derive_warnings(): it means a wrong model or data sitting in L2, never a
// kernel faster than the hardware.
#pragma once

#include <string>
#include <vector>

#include "harness/record/record.hpp"
#include "harness/catalogue/registry.hpp"

namespace kwb {

// Fills record.derived for a passed, timed case; leaves other records alone.
void derive_metrics(CaseRecord& record, const Registry& registry, const Ceilings& ceilings);

// Speedup of each timed case over the passed baseline of the same op, dtype and shape.
void derive_speedups(std::vector<CaseRecord>& records);

// Human-readable warnings about implausible figures (above 100% of a ceiling).
std::vector<std::string> derive_warnings(const std::vector<CaseRecord>& records);

}  // namespace kwb
