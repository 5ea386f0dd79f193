// The hidden test ops on the host: work models count each tensor at its own element size, the
// NLL oracle honours the ignore index, and an oracle run on gathered slabs (a sampled seq of a
// [batch, heads, seq, dim] layout) equals the same slabs of the oracle run on everything.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "reference/testing/seq_sum.hpp"
#include "reference/testing/test_ops.hpp"
#include "tests/support/oracle_support.hpp"
#include "harness/worker/verify/sampling.hpp"

namespace kwb {
namespace test_ops_test {
namespace {

const Op& op(const char* name) { return registered_op(name); }

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

TEST(TestOpsOnHost, WorkModelsCountEachTensorAtItsOwnElementSize) {
  const Shape s{{{"rows", 64}, {"vocab", 1000}}};
  // logits bf16, labels int32, loss fp32.
  EXPECT_EQ(op("test_label_nll").work(s, DType::bf16).bytes, 64 * 1000 * 2 + 64 * 4 + 64 * 4);
  EXPECT_EQ(op("test_label_nll").work(s, DType::fp32).bytes, 64 * 1000 * 4 + 64 * 4 + 64 * 4);
  const Shape b{{{"batch", 2}, {"heads", 3}, {"seq", 5}, {"dim", 7}}};
  // x, y fp16; scale fp32 [2,3,5]; pos int64 [2,5]; keep bool [2,5].
  EXPECT_EQ(op("test_bhsd_scale").work(b, DType::fp16).bytes, 2 * (2 * 3 * 5 * 7 * 2) + 30 * 4 + 10 * 8 + 10);
  const Shape r{{{"rows", 16}, {"cols", 8}}};
  EXPECT_EQ(op("rmsnorm_fwd").work(r, DType::bf16).bytes, (2 * 16 * 8 + 8) * 2);
}

TEST(TestOpsOnHost, NllOracleGivesZeroForIgnoredRowsAndAPositiveLossElsewhere) {
  const Op& nll = op("test_label_nll");
  const Shape s{{{"rows", 2000}, {"vocab", 50}}};
  const auto specs = nll.tensors(s, DType::fp32);
  const auto in = host_inputs(specs, 5);
  auto out = empty_outputs(specs);
  nll.oracle(s, in, out);
  int ignored = 0;
  for (std::size_t r = 0; r < 2000; ++r) {
    if (in[1].values[r] == -100) {
      ++ignored;
      EXPECT_EQ(out[0].values[r], 0.0);
    } else {
      EXPECT_GT(out[0].values[r], 0.0) << "NLL of a softmax is positive";
    }
  }
  EXPECT_GT(ignored, 100);
  EXPECT_LT(ignored, 300);
}

TEST(TestOpsOnHost, BhsdOracleOnSampledSlabsEqualsTheSameSlabsOfTheFullOracle) {
  const Op& bhsd = op("test_bhsd_scale");
  const Shape full{{{"batch", 2}, {"heads", 3}, {"seq", 40}, {"dim", 6}}};
  const auto specs = bhsd.tensors(full, DType::fp32);
  const auto in = host_inputs(specs, 9);
  auto expected_full = empty_outputs(specs);
  bhsd.oracle(full, in, expected_full);

  const std::vector<std::int64_t> indices = {0, 1, 2, 17, 18, 39};
  Shape sub = full;
  for (auto& [name, value] : sub.axes)
    if (name == "seq") value = static_cast<std::int64_t>(indices.size());
  std::vector<HostTensor> sub_in;
  std::size_t k = 0;
  for (const auto& t : specs) {
    if (t.is_output) continue;
    ASSERT_GE(t.sample_dim, 0) << t.name << " is aligned with seq";
    sub_in.push_back({t.name, t.dims, gather(in[k++].values, t.dims, t.sample_dim, indices)});
  }
  std::vector<HostTensor> sub_out = {{"y", {}, std::vector<double>(2 * 3 * indices.size() * 6, NAN)}};
  bhsd.oracle(sub, sub_in, sub_out);
  EXPECT_EQ(sub_out[0].values, gather(expected_full[0].values, specs[4].dims, 2, indices));
}

TEST(TestOpsOnHost, AxesStructsReadTheirShapesOnce) {
  const auto nll = testing_ops::LabelNllAxes::of(Shape{{{"rows", 3}, {"vocab", 1000}}});
  EXPECT_EQ(nll.rows, 3);
  EXPECT_EQ(nll.vocab, 1000);
  const auto bhsd = testing_ops::BhsdScaleAxes::of(Shape{{{"batch", 2}, {"heads", 4}, {"seq", 5}, {"dim", 8}}});
  EXPECT_EQ(bhsd.batch, 2);
  EXPECT_EQ(bhsd.heads, 4);
  EXPECT_EQ(bhsd.seq, 5);
  EXPECT_EQ(bhsd.dim, 8);
  EXPECT_EQ(bhsd.numel(), 2 * 4 * 5 * 8);
  // test_seq_sum: the layout choice decides the tensor dims and where (b, t, h, d) sits.
  const Shape bshd{{{"batch", 2}, {"seq", 5}, {"heads", 3}, {"dim", 4}, {"layout", "bshd"}, {"causal", "1"}}};
  const Shape bhsd_layout{{{"batch", 2}, {"seq", 5}, {"heads", 3}, {"dim", 4}, {"layout", "bhsd"}, {"causal", "0"}}};
  const auto a = seq_sum::Axes::of(bshd), b = seq_sum::Axes::of(bhsd_layout);
  EXPECT_FALSE(a.bhsd);
  EXPECT_TRUE(a.causal);
  EXPECT_TRUE(b.bhsd);
  EXPECT_FALSE(b.causal);
  EXPECT_EQ(a.numel(), 2 * 5 * 3 * 4);
  EXPECT_EQ(a.tensor_dims(), (std::vector<std::int64_t>{2, 5, 3, 4}));
  EXPECT_EQ(b.tensor_dims(), (std::vector<std::int64_t>{2, 3, 5, 4}));
  EXPECT_EQ(a.index(1, 2, 1, 3), ((1 * 5 + 2) * 3 + 1) * 4 + 3);
  EXPECT_EQ(b.index(1, 2, 1, 3), ((1 * 3 + 1) * 5 + 2) * 4 + 3);
}

}  // namespace
}  // namespace test_ops_test
}  // namespace kwb
