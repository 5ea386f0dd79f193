// Journal + plan -> the cases a resumed run still measures.
#include "harness/session/resume_plan.hpp"

#include <fmt/format.h>

#include "harness/catalogue/case_identity.hpp"

namespace kwb {

std::string record_identity(const CaseRecord& r) {
  return case_identity(r.op, r.variant, r.dtype, r.shape, r.tunables);
}

const JournalHeader& require_header(const JournalContents& contents, const std::string& journal) {
  if (contents.header) return *contents.header;
  if (contents.records.empty())
    throw ResumeError(fmt::format("{}: the journal holds no header and no case (the run was stopped before "
                                  "its first case finished); nothing to resume: run it again",
                                  journal));
  throw ResumeError(fmt::format("{}: the journal has no header line (written by an older kwb), so its plan and "
                                "settings cannot be checked; it cannot be resumed: run the sweep again",
                                journal));
}

ResumePlan plan_resume(const JournalContents& contents, const std::string& journal,
                       const nlohmann::ordered_json& given_flags, const std::vector<std::string>& plan) {
  const JournalHeader& header = require_header(contents, journal);
  for (const auto& [flag, value] : given_flags.items()) {
    const auto recorded = header.plan_flags.find(flag);
    if (recorded == header.plan_flags.end() || *recorded != value)
      throw ResumeError(fmt::format(
          "--{} {}: the interrupted run had {}; a resumed run keeps its plan and settings (leave the flag out)",
          flag, value.dump(), recorded == header.plan_flags.end() ? "it unset" : recorded->dump()));
  }
  if (plan != header.plan) {
    std::size_t i = 0;
    while (i < plan.size() && i < header.plan.size() && plan[i] == header.plan[i]) ++i;
    throw ResumeError(fmt::format(
        "{}: the plan made now from the journal's flags differs from the recorded one ({} cases now, {} "
        "recorded; first difference at case {}: now '{}', recorded '{}'). The catalogue or the suite file "
        "changed since the run began; run the sweep again",
        journal, plan.size(), header.plan.size(), i, i < plan.size() ? plan[i] : "(none)",
        i < header.plan.size() ? header.plan[i] : "(none)"));
  }
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < plan.size(); ++i) position.emplace(plan[i], i);
  ResumePlan result;
  for (const auto& record : contents.records) {
    const std::string id = record_identity(record);
    if (!position.contains(id))
      throw ResumeError(fmt::format("{}: the journal records case '{}', which is not in its plan", journal, id));
    if (!result.recorded.emplace(id, record).second)
      throw ResumeError(fmt::format("{}: the journal records case '{}' twice", journal, id));
  }
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (!result.recorded.contains(plan[i])) result.remaining.push_back(i);
  return result;
}

std::optional<std::string> resume_device_mismatch(const DeviceInfo& recorded, const DeviceInfo& now) {
  if (recorded.uuid == now.uuid && recorded.name == now.name) return std::nullopt;
  return fmt::format("the journal was measured on {} ({}), this run found {} ({}); resume on the same GPU "
                     "(--device) or run the sweep again",
                     recorded.name, recorded.uuid, now.name, now.uuid);
}

std::vector<CaseRecord> recorded_in_plan_order(const JournalHeader& header, const ResumePlan& plan) {
  std::vector<CaseRecord> out;
  for (const auto& id : header.plan)
    if (auto it = plan.recorded.find(id); it != plan.recorded.end()) out.push_back(it->second);
  return out;
}

}  // namespace kwb
