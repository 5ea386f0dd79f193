// Constants of the rope_fwd / rope_bwd contracts that their kernels share with the oracle.
//
// Both ops take the same tensors in the same order (the backward's gradients stand where the
// forward's q and k stand), so one kernel serves both with the sign of sin flipped:
//   inputs  q (or dq_out) [batch, seq, heads, head_dim], k (or dk_out) [batch, seq, kv_heads,
//           head_dim], cos [table_rows, head_dim/2] fp32, sin (same), position_ids [batch, seq]
//           int64 (positions=ids only)
//   outputs q_out (or dq), k_out (or dk), shaped as q and k.
#pragma once

#include <cstdint>

namespace kwb::rope {

inline constexpr int kQ = 0, kK = 1, kCos = 2, kSin = 3, kIds = 4;

// Index of the first output: after the tables, or after position_ids when the case has them.
inline constexpr int first_output(bool ids) { return ids ? 5 : 4; }

// positions=ids draws each sequence's ids as start + s with start in [0, seq] (a chunk that
// continues a longer context), so the tables hold 2 * seq rows: the most a case can address.
inline constexpr std::int64_t kIdsTableRowsPerSeq = 2;

inline constexpr std::int64_t table_rows(std::int64_t seq, bool ids) { return ids ? kIdsTableRowsPerSeq * seq : seq; }

}  // namespace kwb::rope
