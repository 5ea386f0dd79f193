// Derived figures of a case: bandwidth, FLOP rate, arithmetic intensity, where it sits on the
// roofline, its speedup over the op's baseline variant, and the roof rule.
//
// Every figure comes from the op's work model (bytes and FLOPs it must at least move and do)
// over the median span; nothing is typed by hand. GB/s, TFLOP/s and speedups count the op's
// useful work; "% of roof" counts the work the variant executes (Variant::executed_work, for a
// variant that skips part of the useful work's arithmetic: a symmetric product computed once),
// since that is what the hardware did. A cold case above its roof by more than kRoofMargin is a
// failed case (judge_roofs): no kernel is faster than the hardware, so it means the timed launches
// did less than the work model says, a model that over-counts, or a stale ceiling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/record.hpp"
#include "harness/catalogue/registry.hpp"

namespace kwb {

// How far above its roof a case may read before it fails: 3%. Why that much: kernels that hug
// the DRAM roof read 99.0-99.5% of it (samples/h100-*), a ceiling is the best median of several
// methods and moves about 1% between runs on one GPU, and the session re-measures a cached
// ceiling when a short copy reads more than this same 3% above it, so the roof a case is judged
// against is never stale by more than the margin. Why no more: a timer cheat reads thousands of
// %, and a work model that over-counts by more than 3% is a defect to fix, not noise.
inline constexpr double kRoofMargin = 0.03;
// The L2 roof is a copy's figure (reads and writes in equal parts, a quarter of the L2 hot); a
// kernel that mostly reads, or whose lines hit in the near L2 partition, can run faster than that
// copy, and no L2 read-only ceiling is measured. So a hot or L2-resident case fails only well
// above it: a timer cheat or a precomputed result reads many times the ceiling, not 1.5x.
inline constexpr double kL2RoofMargin = 0.5;

// Fills record.derived for a timed case (GB/s, TFLOP/s, the roofs and % of each); leaves
// untimed records alone. `l2_bytes` is the GPU's L2 size: a cold case whose tensors fit in it is
// L2-resident (its writes can end the kernel still in L2), judged against the L2 copy ceiling as
// hot cases are; 0: unknown, no case is taken as L2-resident.
void derive_metrics(CaseRecord& record, const Registry& registry, const Ceilings& ceilings,
                    std::int64_t l2_bytes = 0);

// The roof rule: why a passed, derived case is above its roof by more than kRoofMargin (which
// roof, by how much, what it likely means), or nullopt when it is not. Cold cases larger than the
// L2: the DRAM roof at their read/write mix (under the clean flush, less the written bytes an L2
// can still hold when the kernel ends); hot and L2-resident cases: the L2 copy ceiling (when it
// was measured); every case: the compute roof of its unit (FP32 or the tensor cores).
std::optional<std::string> roof_violation(const CaseRecord& record, std::int64_t l2_bytes);

// Applies the roof rule: a passed case above its roof becomes failed with roof_violation's
// reason, keeping its timing and derived figures (nothing measured is lost). Returns whether it
// failed it.
bool judge_roofs(CaseRecord& record, std::int64_t l2_bytes);

// "executed 83% of the model's FLOPs" (or bytes, or both) for a variant that declares less work
// than the op's model, shown wherever a % of roof is; empty when it executes the model's work.
std::string executed_work_note(const Derived& derived);

// Speedup of each timed case over the passed baseline of the same op, dtype and shape.
void derive_speedups(std::vector<CaseRecord>& records);

// Human-readable warnings about figures above 100% of a roof that the roof rule let pass (within
// kRoofMargin, or a hot case above the DRAM roof with no L2 ceiling to judge it by). The DRAM
// figure is the one the rule judges: `l2_bytes` (the GPU's L2, as given to judge_roofs) sets what
// the clean flush discounts; a case above 100% only before that discount is explained, not
// warned "within the margin".
std::vector<std::string> derive_warnings(const std::vector<CaseRecord>& records, std::int64_t l2_bytes);

}  // namespace kwb
