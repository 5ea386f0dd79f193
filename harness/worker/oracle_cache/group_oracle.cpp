// Look up, else compute and store what is worth storing.
#include "harness/worker/oracle_cache/group_oracle.hpp"

#include <chrono>

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

// Bytes of the expected values alone: known before the oracle runs, from the layout it fills.
std::uint64_t value_bytes(const std::vector<HostTensor>& tensors) {
  std::uint64_t bytes = 0;
  for (const HostTensor& t : tensors) bytes += t.values.size() * sizeof(double);
  return bytes;
}

// Bytes of an entry: the values and the magnitudes the oracle filled.
std::uint64_t entry_bytes(const std::vector<HostTensor>& tensors) {
  std::uint64_t bytes = 0;
  for (const HostTensor& t : tensors) bytes += (t.values.size() + t.abs_sum.size() + t.root_sum_sq.size()) * sizeof(double);
  return bytes;
}

}  // namespace

bool worth_storing(std::uint64_t bytes, double compute_ms) {
  return bytes <= kAlwaysStoredOracleBytes || compute_ms >= kOracleMsWorthAMiB * static_cast<double>(bytes) / (1 << 20);
}

std::string_view to_string(OracleSource source) {
  switch (source) {
    case OracleSource::computed: return "computed";
    case OracleSource::cache: return "cache";
  }
  return "?";
}

OracleSource expected_for_group(OracleCache* cache, const OracleKeyParts& parts, const std::vector<KeyInput>& inputs,
                                std::vector<HostTensor>& expected, const OracleFn& compute) {
  // An answer the cache would refuse anyway (over a quarter of its bound) is not looked up:
  // making its key would hash every input byte for nothing.
  if (!cache || value_bytes(expected) > cache->max_bytes() / 4) {
    compute(expected);
    return OracleSource::computed;
  }
  const OracleKey key = make_oracle_key(parts, inputs, expected);
  if (auto stored = cache->load(key); stored && fits_layout(*stored, expected)) {
    expected = std::move(*stored);
    return OracleSource::cache;
  }
  const auto start = std::chrono::steady_clock::now();
  compute(expected);
  const double compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (worth_storing(entry_bytes(expected), compute_ms)) cache->store(key, expected, compute_ms);
  return OracleSource::computed;
}

}  // namespace kwb
