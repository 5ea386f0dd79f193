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

// `cache` null: no cache, the oracle runs. Otherwise the key is made from `parts`, `inputs` and
// the layout of `expected`; a hit whose tensors do not have that layout (names, dims, sizes) is
// taken as a miss. After computing, the answer is stored (a store that fails costs nothing but
// the cache's one warning).
OracleSource expected_for_group(OracleCache* cache, const OracleKeyParts& parts, const std::vector<HostTensor>& inputs,
                                std::vector<HostTensor>& expected, const OracleFn& compute);

}  // namespace kwb
