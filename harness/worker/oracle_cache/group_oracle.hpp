// The oracle's answer for a case group: read from the oracle cache when it holds the group's key,
// else computed and stored. The case runner calls this once per group (it needs no GPU, so the
// CPU tests drive it with a counting oracle).
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "harness/worker/oracle_cache/oracle_key.hpp"

namespace kwb {

enum class OracleSource { computed, cache };
std::string_view to_string(OracleSource source);  // "computed", "cache"

// Fills `expected` (one tensor per output, allocated at the sampled dims, as the oracle gets it).
using OracleFn = std::function<void(std::vector<HostTensor>& expected)>;

// What is worth a place in the cache: an entry of up to kAlwaysStoredOracleBytes, or a larger one
// whose oracle took at least kOracleMsWorthAMiB per MiB of it: what reading it back costs, with its
// checksum and decode (measured on an H100 machine's disk: a 12.6 GB entry read back in 29.3 s,
// 2.4 ms/MiB, against 20 s for its oracle; at the 1 ms/MiB assumed before, it was stored at a cost
// of 45 s a run and read back slower than computed). A large answer the oracle makes faster than the disk could
// return it (a full [tokens, vocab] softmax) would only push out the entries that save time: in a
// sweep larger than the bound, least-recently-used eviction would then evict every entry before
// its next use.
inline constexpr std::uint64_t kAlwaysStoredOracleBytes = std::uint64_t{64} << 20;
inline constexpr double kOracleMsWorthAMiB = 2.5;
bool worth_storing(std::uint64_t entry_bytes, double compute_ms);

// `cache` null: no cache, the oracle runs. Otherwise the key is made from `parts`, `inputs` (the
// bytes the oracle's inputs are decoded from: `compute` decodes them, only on a miss) and
// the layout of `expected`; a hit whose tensors do not have that layout (names, dims, sizes) is
// taken as a miss. After computing, the answer is stored when worth_storing() says so (a store
// that fails costs nothing but the cache's one warning). An answer whose values alone exceed a
// quarter of the bound is neither looked up nor stored.
OracleSource expected_for_group(OracleCache* cache, const OracleKeyParts& parts, const std::vector<KeyInput>& inputs,
                                std::vector<HostTensor>& expected, const OracleFn& compute);

}  // namespace kwb
