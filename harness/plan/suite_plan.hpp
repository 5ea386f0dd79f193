// A parsed suite -> the planner's requests -> one plan: the union of the entries, each entry
// planned by plan/planner exactly as the equivalent `kwb run` flags would be.
//
// Names are checked against the registry here, so that an unknown op, variant or axis in a suite
// points at its line and column, with a "did you mean"; what the planner itself refuses (a
// choice the axis lacks, a tunable value no variant declares, too many cases) points at the
// entry's shapes. The whole suite is planned before anything runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/plan/planner.hpp"
#include "harness/record/record.hpp"
#include "harness/plan/suite_file.hpp"

namespace kwb {

// One planner request of a suite: an entry, or one of its shape grids.
struct SuiteRequest {
  PlanRequest request;
  const SuiteEntry* entry = nullptr;
  SuiteLocation at;  // the grid (or the entry's shapes) this request came from
};

// The run flags beside --suite. Filters narrow the suite's plan; settings given on the command
// line win over the suite's (nullopt: the suite's value).
struct SuiteRunFlags {
  std::vector<std::string> ops, variants;
  std::vector<DType> dtypes;
  std::optional<Mode> mode;
  std::optional<FlushKind> flush;
  std::optional<LaunchKind> launch;
  std::optional<std::string> preset;
  std::optional<std::uint64_t> seed;
  bool include_test_variants = false;
  std::size_t max_cases = PlanRequest::kDefaultMaxCases;  // per entry and for the whole suite
};

// The requests of every entry, with the suite's (or the flags') mode, flush, launch, preset and
// seed.
// Throws SuiteError for unknown ops, variants and axes, and malformed axis values; PlanError
// when the flags and the suite conflict (--mode hot with a suite that asks for flush: clean).
std::vector<SuiteRequest> suite_requests(const SuiteFile& suite, const Registry& registry,
                                         const SuiteRunFlags& flags = {});

// The union of the requests' plans in entry order, a case planned twice kept once, narrowed by
// the flags' ops, variants and dtypes, indices renumbered. Throws SuiteError (located) or
// PlanError (the flags, or the whole suite above max_cases).
std::vector<CaseRequest> plan_suite(const SuiteFile& suite, const Registry& registry,
                                    const SuiteRunFlags& flags = {});

// What the report records of the suite (run.suite): name, path and thresholds. Threshold op
// names are checked against the registry (SuiteError with a "did you mean").
SuiteInfo suite_info(const SuiteFile& suite, const Registry& registry);

}  // namespace kwb
