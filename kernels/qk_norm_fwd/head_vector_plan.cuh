// How the fused QK-norm kernels map head vectors onto threads (shared by qk_norm_fwd and
// qk_norm_bwd): a group of `lanes` threads (a power of two up to a warp) holds one head vector
// of head_dim elements in registers, `accesses` vector accesses of `elems` elements per lane.
// Access j of a head vector (elements j*elems .. j*elems+elems-1) belongs to lane j % lanes,
// slot j / lanes, so consecutive lanes touch consecutive bytes (coalesced).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kwb {

inline constexpr int kQkThreads = 256;      // per block; a multiple of 32
inline constexpr int kQkMaxAccesses = 8;    // register slots per lane

struct HeadVectorPlan {
  int elems = 1;     // elements per access: 16 bytes where head_dim and the pointers allow
  int lanes = 1;     // threads per head vector: a power of two, at most 32
  int accesses = 1;  // slots per lane, a power of two: 1, 2, 4 or 8
};

// The widest access (a power of two elements, at most 16 bytes) that divides head_dim and
// keeps every pointer aligned; then the fewest lanes (up to a warp) and slots that cover it.
// nullopt: head_dim is beyond one warp's registers at this access width.
inline std::optional<HeadVectorPlan> plan_head_vectors(std::int64_t head_dim, std::size_t elem_bytes,
                                                       std::uintptr_t pointer_bits = 0) {
  HeadVectorPlan p;
  for (int e = static_cast<int>(16 / elem_bytes); e > 1; e /= 2) {
    if (head_dim % e == 0 && pointer_bits % (e * elem_bytes) == 0) {
      p.elems = e;
      break;
    }
  }
  const std::int64_t accesses = head_dim / p.elems;  // per head vector
  while (p.lanes < 32 && p.lanes < accesses) p.lanes *= 2;
  while (static_cast<std::int64_t>(p.lanes) * p.accesses < accesses) p.accesses *= 2;
  if (p.accesses > kQkMaxAccesses) return std::nullopt;
  return p;
}

inline std::string head_dim_reach_reason() {
  return "head_dim beyond one warp's registers (8 accesses per lane: 256 elements at odd sizes, "
         "2048 bf16 at 16-byte accesses); use baseline_eager";
}

}  // namespace kwb
