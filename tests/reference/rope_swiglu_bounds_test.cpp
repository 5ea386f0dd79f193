// The error bounds of rope_fwd/rope_bwd and swiglu_fwd/swiglu_bwd against CPU simulations of
// their kernels' fp32 arithmetic (kernels/rope_*/, kernels/swiglu_*/): the fused kernels and the
// eager chains stay inside the bounds at every edge shape in every dtype, and planted defects
// that the old flat tolerances let through fail them: RoPE tables rounded to bf16 (the contract
// keeps them fp32 because the two products can cancel) and a sigmoid taken from bf16 gates
// rounded once more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "reference/rope.hpp"
#include "tests/support/kernel_simulation.hpp"

namespace kwb {
namespace {

using sim::FastMath;

float store(float v, DType dtype) { return static_cast<float>(round_to_dtype(v, dtype)); }

// ---- RoPE --------------------------------------------------------------------------------------

enum class RopeKind { fused, eager, bf16_tables };

// Both outputs of a rope case: out[i] = x1 c - x2 s, out[i + D/2] = x2 c + x1 s (s signed).
// fused: one fma per output (nvcc contracts x1 * c - x2 * s); eager: each product and the sum
// rounded in fp32 (separate launches); bf16_tables: the fused arithmetic on bf16 cos and sin.
std::vector<std::vector<float>> rope_simulated(const Shape& shape,
                                               const std::vector<HostTensor>& in, DType dtype,
                                               float sin_sign, RopeKind kind) {
  const rope::Axes n = rope::Axes::of(shape);
  const std::int64_t half = n.half(), dim = n.head_dim;
  std::vector<std::vector<float>> out(2);
  for (int which = 0; which < 2; ++which) {
    const auto& x = in[which == 0 ? rope::kQ : rope::kK].values;
    const std::int64_t heads = which == 0 ? n.heads : n.kv_heads;
    auto& y = out[static_cast<std::size_t>(which)];
    y.resize(x.size());
    for (std::int64_t t = 0; t < n.tokens(); ++t) {
      const auto pos =
          n.ids ? static_cast<std::int64_t>(in[rope::kIds].values[static_cast<std::size_t>(t)])
                : t % n.seq;
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t base = (t * heads + h) * dim;
          float c =
              static_cast<float>(in[rope::kCos].values[static_cast<std::size_t>(pos * half + i)]);
          float s = sin_sign * static_cast<float>(
                                   in[rope::kSin].values[static_cast<std::size_t>(pos * half + i)]);
          if (kind == RopeKind::bf16_tables) c = store(c, DType::bf16), s = store(s, DType::bf16);
          const float x1 = static_cast<float>(x[static_cast<std::size_t>(base + i)]);
          const float x2 = static_cast<float>(x[static_cast<std::size_t>(base + half + i)]);
          float a, b;
          if (kind == RopeKind::eager) {
            const float p1 = x1 * c, p2 = -x2 * s, p3 = x2 * c, p4 = x1 * s;
            a = p1 + p2, b = p3 + p4;
          } else {
            a = std::fmaf(x1, c, -(x2 * s)), b = std::fmaf(x2, c, x1 * s);
          }
          y[static_cast<std::size_t>(base + i)] = store(a, dtype);
          y[static_cast<std::size_t>(base + half + i)] = store(b, dtype);
        }
    }
  }
  return out;
}

TEST(RopeBounds, FusedAndEagerArithmeticStayInsideTheBoundAtEveryEdgeShape) {
  for (const char* op_name : {"rope_fwd", "rope_bwd"}) {
    const Op& op = registered_op(op_name);
    const float sin_sign = std::string(op_name) == "rope_fwd" ? 1.0f : -1.0f;
    for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
      for (const Shape& s : op.edge_shapes)
        for (RopeKind kind : {RopeKind::fused, RopeKind::eager}) {
          const auto in = sim::case_inputs(op, s, dtype, 8);
          const auto ref = sim::oracle_outputs(op, s, dtype, in);
          const auto got = rope_simulated(s, in, dtype, sin_sign, kind);
          for (std::size_t o = 0; o < 2; ++o) {
            const OutputCheck c = sim::check_simulated(op, s, dtype, ref, got[o], o);
            EXPECT_TRUE(c.passed) << op_name << " " << to_string(dtype) << " " << s.to_compact()
                                  << " " << c.name;
            EXPECT_LT(c.worst_bound_fraction, dtype == DType::fp32 ? 0.4 : 0.6)
                << op_name << " " << to_string(dtype) << " " << s.to_compact() << " " << c.name;
            if (std::getenv("KWB_PRINT_BOUNDS"))
              std::cout << op_name << " " << (kind == RopeKind::eager ? "eager" : "fused") << " "
                        << to_string(dtype) << " " << s.to_compact() << " " << c.name << " "
                        << c.worst_bound_fraction << "\n";
          }
        }
  }
}

TEST(RopeBounds, TablesRoundedToBf16FailTheBoundButPassedTheFlatTolerance) {
  // bf16 cos and sin put u_bf16 |x1 cos| + u_bf16 |x2 sin| into an output that may cancel to
  // near 0: within the flat bf16 atol 8e-3, outside the bound wherever the products cancel.
  const Op& op = registered_op("rope_fwd");
  const Shape small{{{"batch", 1},
                     {"seq", 256},
                     {"heads", 16},
                     {"kv_heads", 16},
                     {"head_dim", 64},
                     {"positions", "index"}}};
  const auto in = sim::case_inputs(op, small, DType::bf16, 4);
  const auto ref = sim::oracle_outputs(op, small, DType::bf16, in);
  const auto got = rope_simulated(small, in, DType::bf16, 1.0f, RopeKind::bf16_tables);
  const OutputCheck bound = sim::check_simulated(op, small, DType::bf16, ref, got[0], 0);
  EXPECT_FALSE(bound.passed);
  const OutputCheck flat =
      sim::check_simulated(op, small, DType::bf16, ref, got[0], 0, default_tolerance(DType::bf16));
  EXPECT_TRUE(flat.passed) << "the old bf16 table (atol 8e-3) let the bf16 tables through";
}

// ---- SwiGLU ------------------------------------------------------------------------------------

// fused (swiglu_streaming.cuh): sig = __frcp_rn(1 + __expf(-gate)), __expf = ex2.approx(x log2 e);
// eager: silu(gate) = gate / (1 + expf(-gate)) stored in the case dtype, then the product.
float fast_sigmoid(float gate, FastMath& fm) {
  return 1.0f / (1.0f + fm.exp2_approx(-gate * 1.44269504f));
}

struct SwigluOut {
  std::vector<float> out, dgate, dup;
};

SwigluOut swiglu_simulated(const std::vector<HostTensor>& in, DType dtype, bool eager, FastMath& fm,
                           bool round_gate_twice = false) {
  const auto& gate = in[0].values;
  const auto& up = in[1].values;
  const bool backward = in.size() > 2;
  SwigluOut r;
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const float g = static_cast<float>(gate[i]), u = static_cast<float>(up[i]);
    const float d = backward ? static_cast<float>(in[2].values[i]) : 0.0f;
    if (eager) {
      const float silu = store(g / (1.0f + fm.expf(-g)), dtype);
      r.out.push_back(store(silu * u, dtype));
      if (backward) {
        r.dup.push_back(store(d * silu, dtype));
        const float t = store(d * u, dtype), sig = 1.0f / (1.0f + fm.expf(-g));
        r.dgate.push_back(store(t * sig * (1.0f + g * (1.0f - sig)), dtype));
      }
    } else {
      const float gs =
          round_gate_twice ? store(store(g, DType::bf16) * 1.0078125f, DType::bf16) : g;
      const float sig = fast_sigmoid(gs, fm);
      r.out.push_back(store(g * sig * u, dtype));
      if (backward) {
        r.dgate.push_back(store(d * u * sig * std::fmaf(g, 1.0f - sig, 1.0f), dtype));
        r.dup.push_back(store(d * (g * sig), dtype));
      }
    }
  }
  return r;
}

TEST(SwigluBounds, FusedAndEagerArithmeticStayInsideTheBoundAtEveryEdgeShape) {
  for (const char* op_name : {"swiglu_fwd", "swiglu_bwd"}) {
    const Op& op = registered_op(op_name);
    const bool backward = std::string(op_name) == "swiglu_bwd";
    for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
      for (const Shape& s : op.edge_shapes)
        for (bool eager : {false, true}) {
          if (s.at("rows") * s.at("cols") > (1 << 20))
            continue;  // CPU time: 1031 x 4099 adds no new path
          const auto in = sim::case_inputs(op, s, dtype, 12);
          const auto ref = sim::oracle_outputs(op, s, dtype, in);
          FastMath fm(3);
          const SwigluOut got = swiglu_simulated(in, dtype, eager, fm);
          std::vector<std::vector<float>> outs =
              backward ? std::vector<std::vector<float>>{got.dgate, got.dup}
                       : std::vector<std::vector<float>>{got.out};
          for (std::size_t o = 0; o < outs.size(); ++o) {
            const OutputCheck c = sim::check_simulated(op, s, dtype, ref, outs[o], o);
            EXPECT_TRUE(c.passed) << op_name << (eager ? " eager " : " fused ") << to_string(dtype)
                                  << " " << s.to_compact() << " " << c.name << " "
                                  << c.worst_bound_fraction;
            EXPECT_LT(c.worst_bound_fraction, dtype == DType::fp32 ? 0.4 : 0.6)
                << op_name << (eager ? " eager " : " fused ") << to_string(dtype) << " "
                << s.to_compact() << " " << c.name;
            if (std::getenv("KWB_PRINT_BOUNDS"))
              std::cout << op_name << (eager ? " eager " : " fused ") << to_string(dtype) << " "
                        << s.to_compact() << " " << c.name << " " << c.worst_bound_fraction << "\n";
          }
        }
  }
}

TEST(SwigluBounds, ASigmoidOfAPerturbedGateFailsTheBoundButPassedTheFlatTolerance) {
  // sigmoid taken of gate (1 + 2^-7): a relative error of ~|gate| (1 - sig) 2^-7 in out, under
  // the flat bf16 tolerance (atol 8e-3 + rtol 1.6e-2) almost everywhere.
  const Op& op = registered_op("swiglu_fwd");
  const Shape s{{{"rows", 64}, {"cols", 1000}}};
  const auto in = sim::case_inputs(op, s, DType::bf16, 2);
  const auto ref = sim::oracle_outputs(op, s, DType::bf16, in);
  FastMath fm(1);
  const SwigluOut got = swiglu_simulated(in, DType::bf16, false, fm, /*round_gate_twice=*/true);
  const OutputCheck bound = sim::check_simulated(op, s, DType::bf16, ref, got.out, 0);
  const OutputCheck flat =
      sim::check_simulated(op, s, DType::bf16, ref, got.out, 0, default_tolerance(DType::bf16));
  EXPECT_FALSE(bound.passed);
  EXPECT_GT(bound.mismatches, 10 * flat.mismatches);
}

}  // namespace
}  // namespace kwb
