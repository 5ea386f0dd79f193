// What `kwb run --resume DIR` still has to measure: a pure function of the journal and the plan
// made again from the journal's flags, so that it is tested without a GPU.
//
// Refused (ResumeError, a message for the user): a journal without a header (older versions of
// kwb, or a run killed before its first case: start it again), plan flags given now that differ
// from the journal's, a plan that differs from the recorded one (the catalogue or the suite file
// changed), a record of a case outside the plan or recorded twice, and (checked once the worker
// reports its GPU) another device.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/journal_reader.hpp"

namespace kwb {

struct ResumeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct ResumePlan {
  std::map<std::string, CaseRecord> recorded;  // by case identity: measured before, kept as is
  std::vector<std::size_t> remaining;          // indices into the plan, in plan order
};

// The journal's header, or ResumeError saying why there is none. `journal` names the file.
const JournalHeader& require_header(const JournalContents& contents, const std::string& journal);

// `given_flags`: the plan flags written on the resume command line (same form as the header's);
// each must equal the journal's. `plan`: the case identities planned now from the journal's flags.
ResumePlan plan_resume(const JournalContents& contents, const std::string& journal,
                       const nlohmann::ordered_json& given_flags, const std::vector<std::string>& plan);

// The device the resumed run found against the journal's: nullopt when it is the same one.
std::optional<std::string> resume_device_mismatch(const DeviceInfo& recorded, const DeviceInfo& now);

// The recorded cases in plan order (for a report from the journal alone) and how many are missing.
std::vector<CaseRecord> recorded_in_plan_order(const JournalHeader& header, const ResumePlan& plan);

// The case identity of a record (harness/catalogue/case_identity.hpp).
std::string record_identity(const CaseRecord& record);

}  // namespace kwb
