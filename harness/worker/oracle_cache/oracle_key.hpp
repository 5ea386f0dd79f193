// The key of an oracle cache entry: everything the oracle's answer depends on, written out.
//
// The expected outputs of a case group are a function of the op's oracle code, the op, dtype and
// shape, the sample the verifier reads (which indices of which axis), and the input values the
// oracle is handed. The seed and the generator decide those values, so the key carries the seed
// for people and a 128-bit digest of the values themselves (each input's name, dims and the bits
// of every double): a change to a generator changes the digest, and no stale answer can be
// served, whatever version anybody forgot to bump. The oracle code's version is a hash of its
// sources made at build time (cmake/oracle_code_version.cmake), so editing an oracle invalidates
// its entries by itself.
//
// The key is text, stored whole in the entry and compared on read: two keys whose digests collide
// still never share an answer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/oracle_cache/hash128.hpp"
#include "harness/worker/oracle_cache/oracle_entry.hpp"  // kOracleEntryFormat, kOracleEntrySuffix
#include "harness/worker/verify/sampling.hpp"

namespace kwb {

// A hash of the oracle sources of this build (reference/, the sampled oracle call, the host
// decoding), 32 hex digits, generated at build time.
std::string_view oracle_code_version();

// The version of the code that computes `op`'s oracle: kwb's oracle code version, and for an op a
// plugin or a Python file brought (its oracle lives there, not in kwb) that file's SHA-256 too, so
// that an oracle changed and rebuilt is never answered from the cache.
std::string oracle_version_of(std::string_view op, const Registry& registry);

// The case group's part of the key.
struct OracleKeyParts {
  std::string op;
  DType dtype = DType::fp32;
  Shape shape;
  std::uint64_t seed = 0;
  SamplePlan plan;
  std::string oracle_version = std::string(oracle_code_version());
};

struct OracleKey {
  std::string text;  // every component, one per line
  Digest128 digest;  // of text: names the entry's file
  std::string file_name() const;  // "<32 hex digits>.kwb-oracle"
};

// One input of a case group as the key sees it: the bytes the device holds (the sampled slabs when
// the plan samples, as copied back), with their type and dims. The key digests these bytes, not
// the fp64 values decoded from them: decoding is a pure function of the bytes and the type (its
// code is in the oracle code version), so a hit needs no decoding at all, and a bf16 input hashes
// a quarter of the bytes its decoded values would.
struct KeyInput {
  std::string name;
  std::vector<std::int64_t> dims;
  std::string type;  // "bf16", "int32", ...; "fp64" for values already decoded on the host
  std::span<const unsigned char> bytes;
};

// Values already on the host in fp64 (host-drawn inputs, tests): the bytes of their values. The
// views point into `tensors`, which must outlive them.
std::vector<KeyInput> key_inputs(const std::vector<HostTensor>& tensors);

// The digest of the inputs: each one's name, dims, type and bytes.
Digest128 digest_inputs(const std::vector<KeyInput>& inputs);

// `inputs`: what the oracle reads; `outputs`: the expected tensors as allocated for it (names
// and dims: the layout its answer must have).
OracleKey make_oracle_key(const OracleKeyParts& parts, const std::vector<KeyInput>& inputs,
                          const std::vector<HostTensor>& outputs);

}  // namespace kwb
