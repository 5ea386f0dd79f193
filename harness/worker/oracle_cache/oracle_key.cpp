// The key text of an oracle cache entry and the digest that names its file.
#include "harness/worker/oracle_cache/oracle_key.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/worker/oracle_cache/oracle_code_version.hpp"  // generated: kOracleCodeVersion

namespace kwb {

std::string_view oracle_code_version() { return kOracleCodeVersion; }

std::string oracle_version_of(std::string_view op, const Registry& registry) {
  std::string version(oracle_code_version());
  if (const PluginSource* from = registry.source_of_op(op)) version += " plugin " + from->sha256;
  return version;
}

std::string OracleKey::file_name() const { return digest.hex() + std::string(kOracleEntrySuffix); }

Digest128 digest_tensors(const std::vector<HostTensor>& tensors) {
  Hash128 h;
  h.add_u64(tensors.size());
  for (const HostTensor& t : tensors) {
    h.add_string(t.name);
    h.add_i64s(t.dims);
    h.add_doubles(t.values);
    h.add_doubles(t.abs_sum);
    h.add_doubles(t.root_sum_sq);
  }
  return h.finish();
}

OracleKey make_oracle_key(const OracleKeyParts& parts, const std::vector<HostTensor>& inputs,
                          const std::vector<HostTensor>& outputs) {
  const SamplePlan& plan = parts.plan;
  std::string text = fmt::format("kwb oracle cache entry\nformat {}\noracle code {}\nop {}\ndtype {}\nshape {}\nseed {}\n",
                                 kOracleEntryFormat, parts.oracle_version, parts.op, to_string(parts.dtype),
                                 parts.shape.to_assignments(), parts.seed);
  // The indices are what the oracle is called on (a positional oracle reads them): all of them go
  // into the digest; a sampled plan lists them too, for whoever reads an entry.
  text += fmt::format("sample {} axis '{}' of {}: {} indices, digest {}\n", plan.sampled ? "sampled" : "full",
                      plan.axis, plan.axis_size, plan.indices.size(), Hash128().add_i64s(plan.indices).finish().hex());
  if (plan.sampled) text += fmt::format("indices {}\n", fmt::join(plan.indices, ","));
  for (const HostTensor& t : inputs) text += fmt::format("input {} [{}]\n", t.name, fmt::join(t.dims, ","));
  text += fmt::format("inputs digest {}\n", digest_tensors(inputs).hex());
  for (const HostTensor& t : outputs) text += fmt::format("output {} [{}]\n", t.name, fmt::join(t.dims, ","));
  return OracleKey{text, hash128(text)};
}

}  // namespace kwb
