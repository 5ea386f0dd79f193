// What one case asks of the worker: the case's identity (op, variant, dtype, shape, tunables)
// and the settings it is measured under. The planner makes them, the session sends them over
// the wire, the worker runs them: a plain struct, so every stage can carry it.
#pragma once

#include <cstdint>
#include <string>

#include "harness/catalogue/flush_kind.hpp"
#include "harness/catalogue/launch_kind.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb {

struct CaseRequest {
  int index = 0;
  std::string op;
  std::string variant;
  DType dtype = DType::fp32;
  Shape shape;
  Mode mode = Mode::cold;
  std::string preset = "default";
  std::uint64_t seed = 1;
  bool include_test_variants = false;
  FlushKind flush = FlushKind::dirty;  // cold mode only
  LaunchKind launch = LaunchKind::stream;  // each sample a stream launch, or a graph replay
  TunableValues tunables;  // the variant's tunables, in its declaration order
  // Hardware counters to collect after timing (harness/plan/counter_sets.hpp): the sets asked
  // for, by name, and every metric to collect, full names; empty: none (no cost).
  std::vector<std::string> counter_sets;
  std::vector<std::string> counter_metrics;
};

}  // namespace kwb
