// The `l2_hint` tunable of kernels that read their inputs once (mean_pooling_fwd's rows, paged
// decoding's K and V): its values and the rule its default follows. Host-only; the loads that
// carry the hints are in l2_hints.cuh, which says why a read-only kernel may gain by them.
//
// The rule, from the read probe and both ops' sweeps under either flush (2026-11-28 notebook,
// "L2 hints"): under kwb's default dirty flush a read that marks its lines first to go leaves
// most of the L2's dirty lines where they are and does not pay their write-back (about 6 us of
// the 10); but its own lines then share the few ways a set frees, and a long read loses a share
// of its time to that. A bare read on an H100 (50 MiB of L2) under the dirty flush, plain ->
// hinted, % of the read roof: 134 MB 79.7 -> 89.4, 201 MB 86.0 -> 89.8, 268 MB 89.4 -> 90.6,
// 335 MB 91.5 -> 91.1, 403 MB 93.0 -> 91.4, 805 MB 96.3 -> 92.7. Under the clean flush the hints
// move a bare read and paged decoding by about a point either way at any size (and lift
// mean_pooling_fwd's fused_v2 by 3 points at its large shapes). So the default, chosen under the
// default flush, hints reads of up to kAutoL2Multiple x the L2, where the gain crosses zero
// (6 x 52.4 MB = 315 MB); a sweep over the tunable shows either flush's best. The crossover is
// the contiguous read's: mean pooling's own order lost more to the hint at 805 MB (91.8% -> 87.0%)
// and no pooling shape between 57 and 400 MB was measured, so pooling's may lie lower.
#pragma once

#include <cstdint>

namespace kwb {
namespace l2 {

// The tunable's values (tunables are positive).
enum class Hint : int {
  kNormal = 1,      // a plain load: evict_normal
  kStreaming = 2,   // ld.global.cs: "likely accessed once", evict-first in L1 and L2
  kEvictFirst = 3,  // an L2 evict_first policy (createpolicy) on a non-coherent load / cp.async
  kAuto = 4,        // the default: the op's hint (`hinted`) where resolve() says, else kNormal
};

inline constexpr double kAutoL2Multiple = 6;

// What a launch uses for `asked`: kAuto becomes `hinted` where the kernel reads at most
// kAutoL2Multiple x `l2_bytes`, else kNormal; any other value stays as asked.
constexpr Hint resolve(Hint asked, Hint hinted, double bytes_read, double l2_bytes) {
  if (asked != Hint::kAuto) return asked;
  return bytes_read <= kAutoL2Multiple * l2_bytes ? hinted : Hint::kNormal;
}

}  // namespace l2
}  // namespace kwb
