// Look up, else compute and store.
#include "harness/worker/oracle_cache/group_oracle.hpp"

namespace kwb {
namespace {

std::int64_t elements(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

// Whether a stored answer fits the tensors the verifier will compare against. The key already
// names the layout; this guards against an entry written by a build with another idea of it.
bool fits_layout(const std::vector<HostTensor>& stored, const std::vector<HostTensor>& wanted) {
  if (stored.size() != wanted.size()) return false;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const HostTensor& s = stored[i];
    const auto n = static_cast<std::size_t>(elements(wanted[i].dims));
    if (s.name != wanted[i].name || s.dims != wanted[i].dims || s.values.size() != n) return false;
    if (!s.abs_sum.empty() && s.abs_sum.size() != n) return false;
    if (!s.root_sum_sq.empty() && s.root_sum_sq.size() != n) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(OracleSource source) {
  switch (source) {
    case OracleSource::computed: return "computed";
    case OracleSource::cache: return "cache";
  }
  return "?";
}

OracleSource expected_for_group(OracleCache* cache, const OracleKeyParts& parts, const std::vector<HostTensor>& inputs,
                                std::vector<HostTensor>& expected, const OracleFn& compute) {
  if (!cache) {
    compute(expected);
    return OracleSource::computed;
  }
  const OracleKey key = make_oracle_key(parts, inputs, expected);
  if (auto stored = cache->load(key); stored && fits_layout(*stored, expected)) {
    expected = std::move(*stored);
    return OracleSource::cache;
  }
  compute(expected);
  cache->store(key, expected);
  return OracleSource::computed;
}

}  // namespace kwb
