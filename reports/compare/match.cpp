// Case matching by identity (see match.hpp).
#include "reports/compare/match.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include "harness/catalogue/case_identity.hpp"
#include "harness/record/json_node.hpp"

namespace kwb {
namespace {

// key -> index of the case in `cases`; refuses a key seen twice.
std::unordered_map<std::string, std::size_t> index_by_key(const std::vector<CaseRecord>& cases,
                                                          const std::string& name) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto [it, inserted] = index.emplace(case_key(cases[i]), i);
    if (!inserted)
      throw ReportError(fmt::format("{}: cases[{}]: case {} is also at cases[{}]; a report holds each case once "
                                    "(merge shard reports with `kwb merge`, not by hand)",
                                    name, i, it->first, it->second));
  }
  return index;
}

}  // namespace

std::string case_key(const CaseRecord& r) { return case_identity(r.op, r.variant, r.dtype, r.shape, r.tunables); }

CaseMatch match_cases(const std::vector<CaseRecord>& base, const std::vector<CaseRecord>& next,
                      const std::string& base_name, const std::string& new_name) {
  const auto base_index = index_by_key(base, base_name);
  const auto new_index = index_by_key(next, new_name);
  CaseMatch m;
  for (const CaseRecord& n : next) {
    std::string key = case_key(n);
    if (auto it = base_index.find(key); it != base_index.end())
      m.pairs.push_back({std::move(key), &base[it->second], &n});
    else
      m.only_in_new.push_back(&n);
  }
  for (const CaseRecord& b : base)
    if (!new_index.contains(case_key(b))) m.only_in_base.push_back(&b);
  return m;
}

}  // namespace kwb
