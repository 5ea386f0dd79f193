// Round by round, side by side (see interleaved_runner.hpp).
#include "harness/session/interleaved_runner.hpp"

namespace kwb {

bool timed_record(const CaseRecord& record) {
  return record.disposition == Disposition::passed && record.timing.has_value();
}

std::vector<InterleavedCase> run_interleaved(CaseExecutor& base, CaseExecutor& next,
                                             const std::vector<CaseRequest>& cases, int rounds,
                                             const std::function<void(const InterleavedCase&)>& on_round) {
  std::vector<InterleavedCase> out;
  out.reserve(cases.size());
  for (const CaseRequest& request : cases) {
    InterleavedCase c{request, {}};
    for (int r = 0; r < rounds; ++r) {
      InterleavedRound round;
      round.base_first = r % 2 == 0;  // B N, N B, B N, ...: a drift within a round cancels over two
      if (round.base_first) {
        round.base = base.run_case(request);
        round.next = next.run_case(request);
      } else {
        round.next = next.run_case(request);
        round.base = base.run_case(request);
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
