// attention_varlen_fwd's contract, shared by its oracle, its kernels and their tests: sequences of
// different lengths packed one after another (FlashAttention's varlen layout), q and o
// [total, heads, d], k and v [total, kv_heads, d], sequence b at tokens [cu_seqlens[b],
// cu_seqlens[b + 1]), lse [heads, total]. Each sequence is attention_fwd's self-attention on its
// own tokens (reference/attention.hpp: the mask, the window, the soft-cap, grouped-query heads).
//
// attention_varlen_bwd (reference/attention_varlen_bwd.cpp) shares the axes, the lengths, the
// derived cu_seqlens, the validity rules and the edge shapes declared here.
//
// Lengths, a choice axis, a formula of the shape so that the work model counts the real pairs:
//   equal       every sequence `seq` tokens (the dense case, packed)
//   ragged      uniform over (seq / 4, seq] (ragged_length, reference/ragged_lengths.hpp)
//   with_empty  ragged, with every third sequence (b % 3 == 2) empty: a packed batch's padding
//               slots, which every kernel must skip without reading or writing a token
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"
#include "reference/ragged_lengths.hpp"

namespace kwb {
namespace varlen {

inline constexpr const char* kOp = "attention_varlen_fwd";

enum class Lengths : int { equal = 0, ragged = 1, with_empty = 2 };

KWB_RAGGED_HD inline std::int64_t sequence_length(std::int64_t b, std::int64_t seq, Lengths kind) {
  if (kind == Lengths::equal) return seq;
  if (kind == Lengths::with_empty && b % 3 == 2) return 0;
  return ragged_length(b, seq);
}

struct VarlenAxes {
  AttentionAxes attention;  // seq: the longest sequence
  Lengths lengths = Lengths::ragged;

  static VarlenAxes of(const Shape& s) {
    const std::string kind = s.choice("lengths");
    return {AttentionAxes::of(s), kind == "equal" ? Lengths::equal
                                  : kind == "with_empty" ? Lengths::with_empty
                                                         : Lengths::ragged};
  }
  std::int64_t length(std::int64_t b) const { return sequence_length(b, attention.seq, lengths); }
  std::int64_t total() const {
    std::int64_t sum = 0;
    for (std::int64_t b = 0; b < attention.batch; ++b) sum += length(b);
    return sum;
  }
};

// A packed case's shape: attention_shape's axes (seq: the longest sequence) and the lengths.
Shape varlen_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                   std::int64_t head_dim, const char* causal, const char* lengths, std::int64_t window = 0,
                   const char* softcap = "0");
// attention's axes and the lengths' choice axis.
std::vector<AxisSpec> varlen_axes();
// attention's rules, the grid's limits and int32 offsets.
std::optional<std::string> varlen_invalid(const Shape& s);
// One token, empty sequences between others, odd lengths around the 64-row tiles, windows,
// soft-caps, multi-query heads.
std::vector<Shape> varlen_edge_shapes();

}  // namespace varlen
}  // namespace kwb
