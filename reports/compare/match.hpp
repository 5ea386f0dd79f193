// Pairs the cases of two reports by identity: op, variant, dtype, shape (choice axes included)
// and tunables, the same `case_identity` the records, NVTX ranges and journal use. A case on one
// side only is listed, never an error; a case twice in one report is (which of the two would be
// compared?).
#pragma once

#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

// "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096[:block=256]", rebuilt from the record's fields
// (not read from its nvtx_range, which a hand-edited report could leave stale).
std::string case_key(const CaseRecord& record);

struct CasePair {
  std::string key;
  const CaseRecord* base = nullptr;
  const CaseRecord* next = nullptr;
};

struct CaseMatch {
  std::vector<CasePair> pairs;                  // in NEW's order
  std::vector<const CaseRecord*> only_in_base;  // in BASE's order
  std::vector<const CaseRecord*> only_in_new;   // in NEW's order
};

// Throws ReportError "<side_name>: cases[7]: case X is also at cases[3]; ..." for a duplicate.
// The records must outlive the result (it points into them).
CaseMatch match_cases(const std::vector<CaseRecord>& base, const std::vector<CaseRecord>& next,
                      const std::string& base_name = "BASE", const std::string& new_name = "NEW");

}  // namespace kwb
