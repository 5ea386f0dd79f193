// rope_fwd and rope_bwd on the host: the oracles against hand values, a true rotation keeps the
// norm of every pair and the backward undoes it, the backward oracle is the vector-Jacobian
// product of the forward's (finite differences), ids mode agrees with index mode, sampling
// along seq gives the oracle the slabs it needs, and the work model counts the bytes it says.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "reference/rope.hpp"
#include "tests/support/oracle_support.hpp"
#include "harness/worker/verify/sampling.hpp"

namespace kwb {
namespace {

Shape rope_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                 std::int64_t head_dim, const char* positions) {
  return Shape{{{"batch", batch},
                {"seq", seq},
                {"heads", heads},
                {"kv_heads", kv_heads},
                {"head_dim", head_dim},
                {"positions", positions}}};
}

// Fills cos/sin with cos/sin of HF's angles p * 10000^(-2i/D): a true rotation per pair.
void true_rotation_tables(std::vector<HostTensor>& in, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2, rows = in[rope::kCos].dims[0];
  for (std::int64_t p = 0; p < rows; ++p)
    for (std::int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / head_dim);
      in[rope::kCos].values[static_cast<std::size_t>(p * half + i)] = std::cos(angle);
      in[rope::kSin].values[static_cast<std::size_t>(p * half + i)] = std::sin(angle);
    }
}

TEST(RopeOracle, ForwardMatchesHandValuesAtHeadDim4) {
  const Op& op = registered_op("rope_fwd");
  const Shape s = rope_shape(1, 2, 1, 1, 4, "index");
  auto in = host_inputs(op.tensors(s, DType::fp32), 1);
  in[rope::kQ].values = {1, 2, 3, 4, /* token 1 */ -1, 0.5, 2, -3};
  in[rope::kK].values = {0.5, -2, 1, 1, /* token 1 */ 2, 2, -1, 4};
  in[rope::kCos].values = {0.5, -0.25, /* row 1 */ 1, 0};
  in[rope::kSin].values = {0.75, 0.1, /* row 1 */ 0, -1};
  const auto out = run_oracle(op, s, in);
  // Token 0, row 0: out[i] = x[i] c_i - x[i+2] s_i, out[i+2] = x[i+2] c_i + x[i] s_i.
  // q: 1*0.5 - 3*0.75, 2*-0.25 - 4*0.1, 3*0.5 + 1*0.75, 4*-0.25 + 2*0.1.
  // Token 1, row 1: c = (1, 0), s = (0, -1): (-1, 0.5*0 - (-3)(-1), 2, -3*0 + 0.5*-1).
  const std::vector<double> q_out = {-1.75, -0.9, 2.25, -0.8, -1, -3, 2, -0.5};
  // k: 0.5*0.5 - 1*0.75, -2*-0.25 - 1*0.1, 1*0.5 + 0.5*0.75, 1*-0.25 + -2*0.1; then
  //    (2, 2*0 - 4*-1, -1, 4*0 + 2*-1).
  const std::vector<double> k_out = {-0.5, 0.4, 0.875, -0.45, 2, 4, -1, -2};
  for (std::size_t e = 0; e < 8; ++e) {
    EXPECT_NEAR(out[0].values[e], q_out[e], 1e-12) << "q_out[" << e << "]";
    EXPECT_NEAR(out[1].values[e], k_out[e], 1e-12) << "k_out[" << e << "]";
  }
}

TEST(RopeOracle, BackwardMatchesHandValuesAtHeadDim4) {
  const Op& op = registered_op("rope_bwd");
  const Shape s = rope_shape(1, 1, 1, 1, 4, "index");
  auto in = host_inputs(op.tensors(s, DType::fp32), 2);
  in[rope::kQ].values = {1, 2, 3, 4};
  in[rope::kK].values = {-1, 1, 2, 0.5};
  in[rope::kCos].values = {0.5, -0.25};
  in[rope::kSin].values = {0.75, 0.1};
  const auto out = run_oracle(op, s, in);
  // dx[i] = g[i] c_i + g[i+2] s_i, dx[i+2] = g[i+2] c_i - g[i] s_i.
  const std::vector<double> dq = {0.5 + 2.25, -0.5 + 0.4, 1.5 - 0.75, -1 - 0.2};
  const std::vector<double> dk = {-0.5 + 1.5, -0.25 + 0.05, 1 + 0.75, -0.125 - 0.1};
  for (std::size_t e = 0; e < 4; ++e) {
    EXPECT_NEAR(out[0].values[e], dq[e], 1e-12) << "dq[" << e << "]";
    EXPECT_NEAR(out[1].values[e], dk[e], 1e-12) << "dk[" << e << "]";
  }
}

TEST(RopeOracle, TrueRotationKeepsTheNormOfEveryPairAndTheBackwardUndoesIt) {
  const Op& fwd = registered_op("rope_fwd");
  const Op& bwd = registered_op("rope_bwd");
  for (const char* positions : {"index", "ids"}) {
    const Shape s = rope_shape(2, 9, 4, 2, 10, positions);
    auto in = host_inputs(fwd.tensors(s, DType::fp32), 3);
    true_rotation_tables(in, 10);
    const auto out = run_oracle(fwd, s, in);
    for (int which = 0; which < 2; ++which) {
      const auto& x = in[static_cast<std::size_t>(which)].values;
      const auto& y = out[static_cast<std::size_t>(which)].values;
      double moved = 0;
      for (std::size_t row = 0; row < x.size() / 10; ++row)
        for (std::size_t i = 0; i < 5; ++i) {
          const std::size_t a = row * 10 + i, b = a + 5;
          EXPECT_NEAR(y[a] * y[a] + y[b] * y[b], x[a] * x[a] + x[b] * x[b], 1e-12) << positions << " pair " << a;
          moved += std::abs(y[a] - x[a]);
        }
      EXPECT_GT(moved, 1.0) << "the rotation must move the vectors (angles are not all zero)";
    }
    // rope_bwd applies the transpose, the inverse of a rotation.
    auto back_in = in;
    back_in[rope::kQ].values = out[0].values;
    back_in[rope::kK].values = out[1].values;
    const auto back = run_oracle(bwd, s, back_in);
    for (int which = 0; which < 2; ++which)
      for (std::size_t e = 0; e < back[static_cast<std::size_t>(which)].values.size(); ++e)
        EXPECT_NEAR(back[static_cast<std::size_t>(which)].values[e], in[static_cast<std::size_t>(which)].values[e],
                    1e-12);
  }
}

TEST(RopeOracle, BackwardEqualsFiniteDifferencesOfTheForward) {
  const Op& fwd = registered_op("rope_fwd");
  const Op& bwd = registered_op("rope_bwd");
  for (const char* positions : {"index", "ids"}) {
    const Shape s = rope_shape(2, 5, 4, 2, 6, positions);
    const auto bwd_in = host_inputs(bwd.tensors(s, DType::fp32), 11);  // dq_out, dk_out, cos, sin(, ids)
    const auto grads = run_oracle(bwd, s, bwd_in);
    // The forward's inputs: fresh q and k, the same tables and ids; cotangents dq_out, dk_out.
    auto fwd_in = host_inputs(fwd.tensors(s, DType::fp32), 12);
    for (std::size_t t = rope::kCos; t < fwd_in.size(); ++t) fwd_in[t] = bwd_in[t];
    const std::vector<HostTensor> cotangents = {bwd_in[rope::kQ], bwd_in[rope::kK]};
    std::mt19937_64 rng(13);
    for (std::size_t input : {std::size_t{rope::kQ}, std::size_t{rope::kK}}) {
      const auto size = static_cast<std::int64_t>(fwd_in[input].values.size());
      for (int trial = 0; trial < 12; ++trial) {
        const std::int64_t e = std::uniform_int_distribution<std::int64_t>(0, size - 1)(rng);
        const double fd = finite_difference_vjp(fwd, s, fwd_in, input, e, cotangents);
        EXPECT_NEAR(grads[input].values[static_cast<std::size_t>(e)], fd, 1e-6 * (1 + std::abs(fd)))
            << positions << " input " << input << " element " << e;
      }
    }
  }
}

TEST(RopeOracle, IdsModeReadsTheRowsItsIdsNameAndEqualsIndexModeOnThoseRows) {
  const Op& op = registered_op("rope_fwd");
  const Shape ids_shape = rope_shape(3, 7, 4, 2, 8, "ids");
  const Shape index_shape = rope_shape(3, 7, 4, 2, 8, "index");
  const auto ids_in = host_inputs(op.tensors(ids_shape, DType::fp32), 21);
  const auto& ids = ids_in[rope::kIds].values;
  ASSERT_EQ(ids_in[rope::kCos].dims, (std::vector<std::int64_t>{14, 4})) << "2 * seq rows in ids mode";
  bool shifted = false;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    ASSERT_GE(ids[t], 0);
    ASSERT_LT(ids[t], 14);
    EXPECT_EQ(ids[t] - ids[t - t % 7], static_cast<double>(t % 7)) << "ids run start + s within a sequence";
    shifted |= ids[t] != static_cast<double>(t % 7);
  }
  EXPECT_TRUE(shifted) << "some sequence starts past 0";
  const auto ids_out = run_oracle(op, ids_shape, ids_in);
  // Each sequence b in index mode, with tables holding rows start_b .. start_b + 6 of the ids
  // tables, must give sequence b's outputs.
  for (std::int64_t b = 0; b < 3; ++b) {
    auto index_in = host_inputs(op.tensors(index_shape, DType::fp32), 22);
    index_in[rope::kQ].values = ids_in[rope::kQ].values;
    index_in[rope::kK].values = ids_in[rope::kK].values;
    const auto start = static_cast<std::int64_t>(ids[static_cast<std::size_t>(b * 7)]);
    for (int t : {rope::kCos, rope::kSin})
      for (std::int64_t e = 0; e < 7 * 4; ++e)
        index_in[static_cast<std::size_t>(t)].values[static_cast<std::size_t>(e)] =
            ids_in[static_cast<std::size_t>(t)].values[static_cast<std::size_t>(start * 4 + e)];
    const auto index_out = run_oracle(op, index_shape, index_in);
    for (int which = 0; which < 2; ++which) {
      const std::size_t per_seq = index_out[static_cast<std::size_t>(which)].values.size() / 3;
      for (std::size_t e = b * per_seq; e < (b + 1) * per_seq; ++e)
        EXPECT_EQ(index_out[static_cast<std::size_t>(which)].values[e], ids_out[static_cast<std::size_t>(which)].values[e]);
    }
  }
}

// Gathers `indices` along `dim` of a host tensor with the verifier's slab copies.
std::vector<double> gather(const std::vector<double>& src, const std::vector<std::int64_t>& dims, int dim,
                           const std::vector<std::int64_t>& indices) {
  std::int64_t packed = static_cast<std::int64_t>(indices.size());
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (static_cast<int>(d) != dim) packed *= dims[d];
  std::vector<double> out(static_cast<std::size_t>(packed));
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  const auto* s = reinterpret_cast<const unsigned char*>(src.data());
  for (const auto& c : slab_copies(dims, dim, indices, sizeof(double)))
    for (std::int64_t r = 0; r < c.height; ++r)
      std::memcpy(o + c.dst_offset + r * c.dst_pitch, s + c.src_offset + r * c.src_pitch, c.width);
  return out;
}

TEST(RopeOracle, OracleOnSampledSeqSlabsEqualsTheSameSlabsOfTheFullOracle) {
  for (const char* name : {"rope_fwd", "rope_bwd"})
    for (const char* positions : {"index", "ids"}) {
      const Op& op = registered_op(name);
      const Shape full = rope_shape(2, 40, 4, 1, 6, positions);
      const auto specs = op.tensors(full, DType::fp32);
      const auto in = host_inputs(specs, 31);
      const auto expected_full = run_oracle(op, full, in);
      const std::vector<std::int64_t> indices = {0, 1, 2, 17, 18, 39};
      Shape sub = full;
      for (auto& [axis, value] : sub.axes)
        if (axis == "seq") value = static_cast<std::int64_t>(indices.size());
      std::vector<HostTensor> sub_in;
      std::vector<HostTensor> sub_out;
      std::size_t k = 0;
      for (const auto& t : specs) {
        if (t.is_output) {
          sub_out.push_back({t.name, {}, std::vector<double>(expected_full[sub_out.size()].values.size() / 40 * 6, NAN)});
          continue;
        }
        // Unaligned tensors (the ids-mode tables) reach the oracle whole, as the verifier passes them.
        sub_in.push_back({t.name, t.dims, t.sample_dim >= 0 ? gather(in[k].values, t.dims, t.sample_dim, indices)
                                                            : in[k].values});
        ++k;
      }
      op.oracle(sub, sub_in, sub_out);
      EXPECT_EQ(sub_out[0].values, gather(expected_full[0].values, specs[k].dims, 1, indices)) << name << " " << positions;
      EXPECT_EQ(sub_out[1].values, gather(expected_full[1].values, specs[k + 1].dims, 1, indices)) << name << " " << positions;
    }
}

TEST(RopeOracle, WorkModelCountsQAndKBothWaysSeqTableRowsAndTheIds) {
  const Op& op = registered_op("rope_fwd");
  // bf16 q [2,5,4,6], k [2,5,2,6] read and written; cos and sin 5 rows of 3 fp32; no ids.
  const Shape index = rope_shape(2, 5, 4, 2, 6, "index");
  const double qk = 2 * 5 * (4 + 2) * 6;
  EXPECT_EQ(op.work(index, DType::bf16).bytes, 2 * qk * 2 + 2 * 5 * 3 * 4);
  EXPECT_EQ(op.work(index, DType::bf16).bytes, tensor_bytes(op.tensors(index, DType::bf16), DType::bf16))
      << "index mode reads every tensor once";
  EXPECT_EQ(op.work(index, DType::fp32).bytes, 2 * qk * 4 + 2 * 5 * 3 * 4);
  EXPECT_EQ(op.work(index, DType::fp32).flops, 3 * qk);
  // ids: the tables hold 2 * seq rows but each sequence reads seq of them; ids are int64.
  const Shape ids = rope_shape(2, 5, 4, 2, 6, "ids");
  EXPECT_EQ(op.work(ids, DType::fp16).bytes, 2 * qk * 2 + 2 * 5 * 3 * 4 + 2 * 5 * 8);
  EXPECT_LT(op.work(ids, DType::fp16).bytes, tensor_bytes(op.tensors(ids, DType::fp16), DType::fp16));
  EXPECT_EQ(registered_op("rope_bwd").work(ids, DType::fp16).bytes, op.work(ids, DType::fp16).bytes);
}

TEST(RopeOracle, InvalidShapesAreRefusedWithAReason) {
  const Op& op = registered_op("rope_fwd");
  EXPECT_TRUE(op.invalid(rope_shape(1, 4, 4, 2, 7, "index")).has_value()) << "odd head_dim";
  EXPECT_TRUE(op.invalid(rope_shape(1, 4, 6, 4, 8, "index")).has_value()) << "kv_heads does not divide heads";
  EXPECT_TRUE(op.invalid(rope_shape(1, 0, 4, 2, 8, "index")).has_value()) << "empty seq";
  EXPECT_FALSE(op.invalid(rope_shape(1, 4, 6, 3, 8, "ids")).has_value());
}

TEST(RopeOracle, DefaultShapesHoldThePeerShapeAndStayUnder2GiBPerTensor) {
  for (const char* name : {"rope_fwd", "rope_bwd"}) {
    const Op& op = registered_op(name);
    bool peer = false;
    for (const Shape& s : op.default_shapes) {
      EXPECT_FALSE(op.invalid(s).has_value()) << s.to_assignments();
      peer |= s.at("batch") * s.at("seq") == 8192 && s.at("heads") == 32 && s.at("head_dim") == 128;
      for (const auto& t : op.tensors(s, DType::fp32))
        EXPECT_LE(bytes_of(t, DType::fp32), 2.0 * (1 << 30)) << s.to_assignments() << " " << t.name;
    }
    EXPECT_TRUE(peer) << "torch.compile's 8192 tokens x 32 heads x 128 (TARGETS.md)";
    for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value()) << s.to_assignments();
  }
}

}  // namespace
}  // namespace kwb
