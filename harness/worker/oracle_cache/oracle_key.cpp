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

std::vector<KeyInput> key_inputs(const std::vector<HostTensor>& tensors) {
  std::vector<KeyInput> out;
  for (const HostTensor& t : tensors)
    out.push_back({t.name, t.dims, "fp64",
                   std::span(reinterpret_cast<const unsigned char*>(t.values.data()), t.values.size() * sizeof(double))});
  return out;
}

Digest128 digest_inputs(const std::vector<KeyInput>& inputs) {
  Hash128 h;
  h.add_u64(inputs.size());
  for (const KeyInput& t : inputs) {
    h.add_string(t.name);
    h.add_i64s(t.dims);
    h.add_string(t.type);
    h.add_u64(t.bytes.size());
    h.add_bytes(t.bytes.data(), t.bytes.size());
  }
  return h.finish();
}

OracleKey make_oracle_key(const OracleKeyParts& parts, const std::vector<KeyInput>& inputs,
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
  for (const KeyInput& t : inputs) text += fmt::format("input {} {} [{}]\n", t.name, t.type, fmt::join(t.dims, ","));
  text += fmt::format("inputs digest {}\n", digest_inputs(inputs).hex());
  for (const HostTensor& t : outputs) text += fmt::format("output {} [{}]\n", t.name, fmt::join(t.dims, ","));
  return OracleKey{text, hash128(text)};
}

}  // namespace kwb
