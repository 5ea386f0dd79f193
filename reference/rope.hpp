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

#include "harness/catalogue/types.hpp"

namespace kwb::rope {

// Positions of the inputs among the oracle's inputs (the op's tensor order).
inline constexpr int kQ = 0, kK = 1, kCos = 2, kSin = 3, kIds = 4;

// positions=ids draws each sequence's ids as start + s with start in [0, seq] (a chunk that
// continues a longer context), so the tables hold 2 * seq rows: the most a case can address.
inline constexpr std::int64_t kIdsTableRowsPerSeq = 2;

inline constexpr std::int64_t table_rows(std::int64_t seq, bool ids) { return ids ? kIdsTableRowsPerSeq * seq : seq; }

// The axes of a case, read once: const rope::Axes n = rope::Axes::of(a.shape).
struct Axes {
  std::int64_t batch, seq, heads, kv_heads, head_dim;
  bool ids;  // positions=ids: an int64 position_ids tensor gives each token's table row
  static Axes of(const Shape& s) {
    return {s.at("batch"),    s.at("seq"),      s.at("heads"),
            s.at("kv_heads"), s.at("head_dim"), s.choice("positions") == "ids"};
  }
  std::int64_t half() const { return head_dim / 2; }
  std::int64_t tokens() const { return batch * seq; }
  std::int64_t table_rows() const { return rope::table_rows(seq, ids); }
};

// Which rotation a launch runs and the tensors it reads and writes, by the op's names: the
// forward's q and k, or the backward's dq_out and dk_out rotated with sin negated (the transpose).
// Both read cos, sin and, with positions=ids, position_ids.
struct Rotation {
  float sin_sign;
  const char *q, *k, *q_out, *k_out;
};
inline constexpr Rotation kForwardRotation{1.0f, "q", "k", "q_out", "k_out"};
inline constexpr Rotation kBackwardRotation{-1.0f, "dq_out", "dk_out", "dq", "dk"};

}  // namespace kwb::rope
