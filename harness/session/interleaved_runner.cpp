// Round by round, side by side (see interleaved_runner.hpp).
#include "harness/session/interleaved_runner.hpp"

#include "harness/session/record_completion.hpp"
#include "harness/worker/memory_skip.hpp"

namespace kwb {
namespace {

// One side's turn in a round. Once the case has not fit beside the other side's worker
// (c.sides_alone), that worker is stopped first; the first time, the side's skip is dropped and
// its turn taken again alone. A case that does not fit even alone stays skipped.
CaseRecord take_turn(CaseExecutor& side, CaseExecutor& other, InterleavedCase& c, const RoundJudging& judging) {
  if (c.sides_alone) other.release_device();
  CaseRecord rec = side.run_case(c.request);
  if (!c.sides_alone && skipped_for_memory(rec) && other.release_device()) {
    c.sides_alone = true;
    rec = side.run_case(c.request);
  }
  complete_record(rec, c.request, judging.ceilings, judging.l2_bytes);
  return rec;
}

}  // namespace

bool timed_record(const CaseRecord& record) {
  return record.disposition == Disposition::passed && record.timing.has_value();
}

std::vector<InterleavedCase> run_interleaved(CaseExecutor& base, CaseExecutor& next,
                                             const std::vector<CaseRequest>& cases, int rounds,
                                             const RoundJudging& judging,
                                             const std::function<void(const InterleavedCase&)>& on_round) {
  std::vector<InterleavedCase> out;
  out.reserve(cases.size());
  for (const CaseRequest& request : cases) {
    InterleavedCase c{request, {}};
    for (int r = 0; r < rounds; ++r) {
      InterleavedRound round;
      round.base_first = r % 2 == 0;  // B N, N B, B N, ...: a drift within a round cancels over two
      if (round.base_first) {
        round.base = take_turn(base, next, c, judging);
        round.next = take_turn(next, base, c, judging);
      } else {
        round.next = take_turn(next, base, c, judging);
        round.base = take_turn(base, next, c, judging);
      }
      const bool both_timed = timed_record(round.base) && timed_record(round.next);
      c.rounds.push_back(std::move(round));
      if (on_round) on_round(c);
      if (!both_timed) break;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kwb
