// How the worker process allocates host memory.
//
// The worker's oracles and verifier allocate and fill host tensors of up to several GB (at
// linear_cross_entropy's 256 x 4096 x 128256, the weight gradient's expected values and its two
// magnitude fields are 12.6 GB). Filling fresh pages one 4 KiB fault at a time ran at about
// 1.3 GB/s on an H100 machine's host (8.4 GB of magnitude fields zeroed in 7.0 s, a third of that
// case's oracle time). glibc's malloc backs its large allocations with transparent huge pages when
// its tunable glibc.malloc.hugetlb=1 says so (glibc 2.35 and later; where glibc is older or the
// kernel's transparent huge pages are off, the tunable changes nothing), so the worker starts
// with it. A hugetlb setting the user already gives in $GLIBC_TUNABLES is kept as it is.
#pragma once

#include <string>
#include <utility>

namespace kwb {

// The GLIBC_TUNABLES value a worker starts with, given the parent's (null or empty: unset).
std::string worker_glibc_tunables(const char* parent_value);

// {"GLIBC_TUNABLES", worker_glibc_tunables(the parent's)}.
std::pair<std::string, std::string> worker_memory_environment();

}  // namespace kwb
