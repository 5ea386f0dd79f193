// block_sparse_attention_fwd: attention_fwd under a block mask over (query block, key block), as
// FlexAttention's BlockMask and block-sparse FlashAttention run it (reference/block_sparse_attention.hpp
// holds the mask's formula and the convention for rows that see no key).
//
// Work model. FLOPs = 4 d per visible (query, key) pair inside a kept block, summed over every
// (batch, head): kept blocks only, as the throughput per kept block compares it with dense
// attention_fwd (density 100 is attention_fwd's own count). Bytes: every tensor once (q, k, v and
// the mask read; o and lse written). At b4 s4096 h32/8 d128 causal density 50 that is ~2.8e11 FLOPs
// against 0.34 GB: compute-bound, the roof is the dtype's tensor cores.
//
// Verification samples along `seq` as attention_fwd's: q, o and lse at the sampled query rows, k,
// v and the mask whole. The oracle is attention_fwd's tile arithmetic (attention_oracle_rows)
// with each query's row of the block mask, on the host (the fp64 GPU oracle knows no block mask):
// at density 50 it costs half of attention_fwd's host oracle at the same rows. Error bounds are
// attention_fwd's at the most keys a row keeps.
//
// Inputs: q and k ~ N(0, 1.5), v ~ N(0, 1) (peaky attention, as attention_fwd); block_mask derived
// on the device from the formula.
#include "reference/block_sparse_attention.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_catalogue.hpp"
#include "reference/attention_tile.hpp"
#include "reference/block_sparse_attention_mask_gpu.hpp"

namespace kwb {
namespace block_sparse {

namespace {

// Calls f(b, h, qb, kept key blocks of that row) for every row block of every (batch, head).
template <class F>
void for_each_row_block(const BlockSparseAxes& s, F&& f) {
  const std::int64_t n = s.blocks();
  for (std::int64_t b = 0; b < s.attention.batch; ++b)
    for (std::int64_t h = 0; h < s.attention.heads; ++h)
      for (std::int64_t qb = 0; qb < n; ++qb) {
        std::int64_t kept = 0;
        for (std::int64_t kb = 0; kb < n; ++kb) kept += s.kept(b, h, qb, kb) ? 1 : 0;
        f(b, h, qb, kept);
      }
}

}  // namespace

double BlockSparseAxes::kept_pairs() const {
  const std::int64_t n = blocks(), seq = attention.seq;
  auto extent = [&](std::int64_t blk) { return std::min(block, seq - blk * block); };  // a last block is short
  double pairs = 0;
  for (std::int64_t b = 0; b < attention.batch; ++b)
    for (std::int64_t h = 0; h < attention.heads; ++h)
      for (std::int64_t qb = 0; qb < n; ++qb)
        for (std::int64_t kb = 0; kb < n; ++kb) {
          if (!kept(b, h, qb, kb)) continue;
          const double rows = static_cast<double>(extent(qb)), keys = static_cast<double>(extent(kb));
          // Under causal a kept block lies on or below the diagonal; on it, row r sees keys 0..r.
          pairs += attention.causal && kb == qb ? rows * (rows + 1) / 2 : rows * keys;
        }
  return pairs;
}

std::int64_t BlockSparseAxes::kept_blocks() const {
  std::int64_t total = 0;
  for_each_row_block(*this, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t kept) { total += kept; });
  return total;
}

std::int64_t BlockSparseAxes::empty_row_blocks() const {
  std::int64_t empty = 0;
  for_each_row_block(*this, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t kept) { empty += kept == 0; });
  return empty;
}

std::int64_t BlockSparseAxes::max_keys() const {
  std::int64_t most = 0;
  for_each_row_block(*this, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t kept) {
    most = std::max(most, kept);
  });
  return std::clamp<std::int64_t>(most * block, 1, attention.seq);
}

namespace {

Shape block_sparse_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                         std::int64_t head_dim, const char* causal, std::int64_t block, std::int64_t density,
                         const char* softcap = "0") {
  return Shape{{{"batch", batch}, {"seq", seq}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim},
                {"causal", causal}, {"softcap", softcap}, {"block", block}, {"density", density}}};
}

// attention_fwd's axes without the window (the block mask is the op's sparsity), then the mask's.
std::vector<AxisSpec> block_sparse_axes() {
  std::vector<AxisSpec> axes;
  for (AxisSpec& axis : attention_axes()) {
    if (axis.name == "window") continue;
    if (axis.name == "heads") axis.help = "query heads (each with its own block mask)";
    if (axis.name == "kv_heads") axis.default_value = 8;
    if (axis.name == "causal") axis.help = "1: query i sees keys j <= i, and blocks above the diagonal are dropped";
    axes.push_back(std::move(axis));
  }
  axes.push_back({"block", 128, {}, "block size of the mask in tokens, each way: a multiple of 64 (FlexAttention's "
                                    "default 128)", {}, "block"});
  axes.push_back({"density", 50, {}, "percent of the visible blocks kept (0-100), each by a hash of its index", {},
                  "density"});
  return axes;
}

std::vector<TensorSpec> block_sparse_tensors(const Shape& shape, DType dtype) {
  const auto s = BlockSparseAxes::of(shape);
  const AttentionAxes& a = s.attention;
  const std::int64_t keys = s.max_keys();
  const auto qk_init = Distribution::normal(0.0, 1.5);
  return {
      {.name = "q", .dims = {a.batch, a.seq, a.heads, a.head_dim}, .sample_dim = 1, .init = qk_init},
      {.name = "k", .dims = {a.batch, a.seq, a.kv_heads, a.head_dim}, .init = qk_init},
      {.name = "v", .dims = {a.batch, a.seq, a.kv_heads, a.head_dim}, .init = Distribution::normal(0.0, 1.0)},
      {.name = "block_mask", .dims = {a.batch, a.heads, s.blocks(), s.blocks()}, .init = Distribution::derived(),
       .elem = ElemType::boolean},
      {.name = "o", .dims = {a.batch, a.seq, a.heads, a.head_dim}, .is_output = true, .sample_dim = 1,
       .tolerance = attention_output_tolerance(keys, dtype)},
      {.name = "lse", .dims = {a.batch, a.heads, a.seq}, .is_output = true, .sample_dim = 2, .elem = ElemType::fp32,
       .tolerance = attention_lse_tolerance(keys, dtype), .minus_inf_is_value = true},
  };
}

// in: q [b, n, h, d] at the sampled rows, k and v whole, block_mask whole; out: o [b, n, h, d], lse
// [b, h, n] and their magnitudes. The true seq is K's dim 1.
void block_sparse_oracle(const Shape& shape, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                         std::vector<HostTensor>& out) {
  const auto s = BlockSparseAxes::of(shape);
  HostTensor& o = out[0];
  HostTensor& lse = out[1];
  o.abs_sum.assign(o.values.size(), 0.0);
  o.root_sum_sq.assign(o.values.size(), 0.0);
  lse.root_sum_sq.assign(lse.values.size(), 0.0);
  const std::int64_t seq = in[1].dims[1];
  const BlockMaskView mask{in[3].values.data(), s.block, (seq + s.block - 1) / s.block};
  attention_oracle_rows(s.attention, rows.data(), seq, in[0].values.data(), in[1].values.data(), in[2].values.data(),
                        {o.values.data(), lse.values.data(), o.abs_sum.data(), o.root_sum_sq.data(),
                         lse.root_sum_sq.data()},
                        mask);
}

std::optional<std::string> block_sparse_invalid(const Shape& shape) {
  const auto s = BlockSparseAxes::of(shape);
  const AttentionAxes& a = s.attention;
  if (a.batch < 1 || a.seq < 1 || a.heads < 1 || a.kv_heads < 1) return "batch, seq, heads and kv_heads must be at least 1";
  if (a.heads % a.kv_heads != 0) return "kv_heads must divide heads (grouped-query attention)";
  if (a.head_dim != 64 && a.head_dim != 128) return "head_dim must be 64 or 128";
  if (s.block < 64 || s.block % 64 != 0) return "block must be a positive multiple of 64 (64, 128, 256, ...)";
  if (s.density < 0 || s.density > 100) return "density must be a percentage, 0 to 100";
  // The mask has batch x heads x blocks^2 entries, and the work model and the tolerance walk them
  // on the host: a 1M-token sequence in 64-token blocks would be 2^28 per head.
  if (static_cast<double>(a.batch * a.heads) * static_cast<double>(s.blocks()) * static_cast<double>(s.blocks()) >
      static_cast<double>(std::int64_t{1} << 30))
    return "the block mask would hold more than 2^30 entries (batch x heads x ceil(seq / block)^2): use a larger "
           "block";
  if (a.batch > 65535 || a.heads > 65535) return "batch and heads must be at most 65535 (grid y and z)";
  return std::nullopt;
}

// ~16k tokens a case, Llama-3-8B's heads (h32/8, d128), FlexAttention's block of 128: half the
// blocks kept, causal and not (the density 0.5), a long sequence at 50% and at 10%, d64,
// a 64-token block, and density 100, which is dense attention_fwd with the mask read: the throughput
// per kept block compares against it in the same run.
std::vector<Shape> block_sparse_default_shapes() {
  return {
      block_sparse_shape(4, 4096, 32, 8, 128, "1", 128, 50),  block_sparse_shape(4, 4096, 32, 8, 128, "0", 128, 50),
      block_sparse_shape(1, 16384, 32, 8, 128, "1", 128, 50), block_sparse_shape(1, 16384, 32, 8, 128, "0", 128, 10),
      block_sparse_shape(4, 4096, 32, 8, 64, "1", 128, 50),   block_sparse_shape(4, 4096, 32, 8, 128, "1", 64, 50),
      block_sparse_shape(4, 4096, 32, 8, 128, "1", 128, 100),
  };
}

// A single token; sequences one past a block and around 128; every block masked (density 0) and
// rows of blocks that keep none (density 10-50: tests/reference/block_sparse_attention_oracle_test.cpp
// checks that these shapes hold such rows); soft-caps; blocks of 64, 128, 192 and 256 (fused_v2
// takes multiples of 128: four of these shapes); multi-query heads.
std::vector<Shape> block_sparse_edge_shapes() {
  return {
      block_sparse_shape(1, 1, 1, 1, 64, "0", 64, 100),         block_sparse_shape(2, 3, 4, 1, 128, "1", 64, 50),
      block_sparse_shape(1, 200, 3, 1, 128, "0", 64, 25, "50"), block_sparse_shape(2, 129, 2, 1, 64, "1", 64, 50),
      block_sparse_shape(1, 257, 2, 2, 128, "1", 128, 50, "30"), block_sparse_shape(1, 331, 2, 1, 64, "0", 64, 10),
      block_sparse_shape(1, 300, 2, 2, 128, "0", 128, 0),       block_sparse_shape(1, 450, 4, 2, 128, "1", 192, 60),
      block_sparse_shape(2, 400, 4, 2, 64, "0", 256, 40),       block_sparse_shape(1, 385, 2, 1, 128, "1", 128, 30),
  };
}

KWB_REGISTER_OP(Op{
    .name = kOp,
    .description = "flash attention forward under a block mask over (query block, key block): FlexAttention's "
                   "block-sparse attention, causal / soft-cap, grouped-query heads; rows that keep no block give 0 "
                   "and lse -inf",
    .axes = block_sparse_axes(),
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = block_sparse_tensors,
    .work = [](const Shape& shape, DType dtype) {
      const auto s = BlockSparseAxes::of(shape);
      return WorkModel{tensor_bytes(block_sparse_tensors(shape, dtype), dtype),
                       4.0 * static_cast<double>(s.attention.head_dim) * s.kept_pairs()};
    },
    .positional_oracle = block_sparse_oracle,
    .derive_inputs = ref::block_sparse_derive_mask,
    .sample_axis = "seq",
    .compute_unit = "tensor",
    .default_shapes = block_sparse_default_shapes(),
    .edge_shapes = block_sparse_edge_shapes(),
    .invalid = block_sparse_invalid,
});

}  // namespace
}  // namespace block_sparse
}  // namespace kwb
