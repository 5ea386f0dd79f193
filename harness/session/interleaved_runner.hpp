// Two builds' workers measuring the same cases in turn, on one GPU: the measurement behind
// `kwb compare --confirm`.
//
// A case timed in two separate runs differs by more than its own noise: the clocks, the power
// state and the GPU's temperature move between runs, and a pair of runs of one build read "+4.8%
// slower, p = 5e-97" that way. Interleaving takes that away: each round measures the case once
// on each side, back to back, so whatever drifts over the minutes of a confirm run lands on both
// sides alike. The order alternates between rounds (BASE then NEW, then NEW then BASE, ...), so
// that neither side always runs right after the other's warm-up and a drift within a round
// cancels over two.
//
// Each side is a CaseExecutor (a Supervisor running that build's `kwb __worker`), so a round is
// a whole case as `kwb run` measures it: prepare, verify, warm-up and the stopping rule. The
// executors run strictly one at a time: the two workers share the GPU but never run together.
// Each record is then completed as a session completes its cases (record_completion.hpp): the
// figures derived with the given ceilings and the roof rule applied, so a round whose result is
// impossible (above its roof) is a failed round, never evidence.
//
// Device memory: both workers stay alive between their turns, and a worker keeps the inputs of
// the case it measured last (it reuses them next round). A case that fits in device memory once
// but not twice is then skipped for memory on the second side. When that happens the other
// side's worker is stopped (CaseExecutor::release_device) and the side measured again; from then
// on that case's rounds stop the other side's worker before each side's turn, so each side has
// the GPU's memory to itself. Chosen over always taking turns because a restart costs a worker
// start and the case's inputs and oracle again, which most cases need not pay; and over a new
// "free your inputs" worker command because an older build must still serve as BASE.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "harness/session/case_executor.hpp"

namespace kwb {

struct InterleavedRound {
  CaseRecord base, next;
  bool base_first = true;  // which side measured first in this round
};

struct InterleavedCase {
  CaseRequest request;
  // In order. A round in which a side was not timed (failed, skipped) is the last one: a failure
  // or a skip would repeat, and each round costs a whole case on both sides.
  std::vector<InterleavedRound> rounds;
  // The case did not fit in device memory beside the other side's worker, so from the round
  // where that showed, each side measured it with the other's worker stopped.
  bool sides_alone = false;
};

// How the rounds' records are judged: the ceilings their figures are derived with (the reports'
// own) and the GPU's L2 size as the workers found it (0: unknown).
struct RoundJudging {
  Ceilings ceilings;
  std::int64_t l2_bytes = 0;
};

// Whether a record carries a usable timing (passed and timed).
bool timed_record(const CaseRecord& record);

// Measures each case `rounds` times on each side, case after case (a worker keeps a case's inputs
// and oracle across its rounds), rounds alternating which side goes first; each record completed
// and judged with `judging`. `on_round` is called after each round with the case so far (for
// progress lines).
std::vector<InterleavedCase> run_interleaved(CaseExecutor& base, CaseExecutor& next,
                                             const std::vector<CaseRequest>& cases, int rounds,
                                             const RoundJudging& judging,
                                             const std::function<void(const InterleavedCase&)>& on_round = {});

}  // namespace kwb
