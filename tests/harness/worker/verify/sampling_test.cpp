// The sample plan (which indices of which axis, or everything and why) and the strided copies
// that gather a sampled dim that is not the outermost.
#include "harness/worker/verify/sampling.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "harness/catalogue/registry.hpp"

namespace kwb {
namespace {

const Op& op(const char* name) {
  const Op* found = Registry::instance().find_op(name);
  if (!found) throw std::runtime_error(std::string("no op ") + name);
  return *found;
}

// Applies the copies on the host, as cudaMemcpy2D does on the device.
std::vector<std::int64_t> apply(const std::vector<SlabCopy>& copies, const std::vector<std::int64_t>& src,
                                std::size_t packed_elements) {
  std::vector<std::int64_t> dst(packed_elements, -1);
  auto* d = reinterpret_cast<unsigned char*>(dst.data());
  const auto* s = reinterpret_cast<const unsigned char*>(src.data());
  for (const auto& c : copies)
    for (std::int64_t row = 0; row < c.height; ++row)
      std::memcpy(d + c.dst_offset + row * c.dst_pitch, s + c.src_offset + row * c.src_pitch, c.width);
  return dst;
}

TEST(SlabCopies, GatherASampledInnerDimLikeANaiveLoop) {
  // [batch=3, heads=2, seq=50, dim=5] sampled on seq (dim 2) at scattered runs of indices.
  const std::vector<std::int64_t> dims = {3, 2, 50, 5};
  const std::vector<std::int64_t> indices = {0, 1, 2, 10, 11, 30, 47, 48, 49};
  std::vector<std::int64_t> src(3 * 2 * 50 * 5);
  std::mt19937_64 rng(3);
  for (auto& v : src) v = static_cast<std::int64_t>(rng() >> 1);
  const auto copies = slab_copies(dims, 2, indices, sizeof(std::int64_t));
  EXPECT_EQ(copies.size(), 4u) << "one copy per run of consecutive indices";
  const auto got = apply(copies, src, 3 * 2 * indices.size() * 5);
  std::size_t k = 0;
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t s : indices)
        for (std::int64_t d = 0; d < 5; ++d)
          ASSERT_EQ(got[k++], src[((b * 2 + h) * 50 + s) * 5 + d]) << b << "," << h << "," << s << "," << d;
}

TEST(SlabCopies, OutermostAndInnermostDimsAreOneOrManyRows) {
  const std::vector<std::int64_t> indices = {1, 3};
  std::vector<std::int64_t> src(4 * 6);
  std::iota(src.begin(), src.end(), 0);
  // dims [4, 6] sampled on dim 0: rows 1 and 3.
  auto rows = apply(slab_copies({4, 6}, 0, indices, 8), src, 12);
  EXPECT_EQ(rows, (std::vector<std::int64_t>{6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23}));
  // Sampled on dim 1 (innermost): columns 1 and 3 of every row.
  auto cols = apply(slab_copies({4, 6}, 1, indices, 8), src, 8);
  EXPECT_EQ(cols, (std::vector<std::int64_t>{1, 3, 7, 9, 13, 15, 19, 21}));
}

TEST(SamplePlan, LargeBhsdShapeIsSampledOnSeqAndSmallOneIsNot) {
  const Op& bhsd = op("test_bhsd_scale");
  const Shape large{{{"batch", 4}, {"heads", 8}, {"seq", 4096}, {"dim", 136}}};
  const auto specs = bhsd.tensors(large, DType::bf16);
  const SamplePlan plan = plan_sample(bhsd, large, specs, 1);
  EXPECT_TRUE(plan.sampled);
  EXPECT_EQ(plan.axis, "seq");
  EXPECT_EQ(plan.axis_size, 4096);
  EXPECT_LT(plan.indices.size(), 4096u);
  EXPECT_EQ(plan.indices.front(), 0);
  EXPECT_EQ(plan.indices.back(), 4095);
  EXPECT_NE(plan.note.find("along seq"), std::string::npos) << plan.note;
  // x [4, 8, 4096, 136] -> [4, 8, n, 136]; pos [4, 4096] -> [4, n].
  const auto n = static_cast<std::int64_t>(plan.indices.size());
  EXPECT_EQ(plan.dims(specs[0]), (std::vector<std::int64_t>{4, 8, n, 136}));
  EXPECT_EQ(plan.dims(specs[2]), (std::vector<std::int64_t>{4, n}));
  EXPECT_EQ(plan.elements(specs[4]), 4 * 8 * n * 136);

  const Shape small{{{"batch", 2}, {"heads", 2}, {"seq", 64}, {"dim", 8}}};
  const SamplePlan all = plan_sample(bhsd, small, bhsd.tensors(small, DType::bf16), 1);
  EXPECT_FALSE(all.sampled);
  EXPECT_EQ(all.indices.size(), 64u);
  EXPECT_EQ(all.note, "full");
}

TEST(SamplePlan, AnOutputNotAlignedWithTheAxisTurnsSamplingOffAndSaysWhy) {
  const Op& colsum = op("test_colsum");
  const Shape large{{{"rows", 1 << 20}, {"cols", 256}}};
  const auto specs = colsum.tensors(large, DType::fp16);
  const SamplePlan plan = plan_sample(colsum, large, specs, 1);
  EXPECT_FALSE(plan.sampled);
  EXPECT_EQ(plan.indices.size(), std::size_t{1} << 20);
  EXPECT_NE(plan.note.find("output 'colsum' is not aligned with the sample axis 'rows'"), std::string::npos)
      << plan.note;
  for (const auto& t : specs) EXPECT_EQ(plan.elements(t), t.numel()) << t.name;
}

// cross_entropy's scalar loss sums every token: on the host alone the case is verified in full;
// where its device oracle may run, the gradient rows are sampled, the labels come whole (the
// gradient's scale counts every labelled token) and the loss is the device's.
TEST(SamplePlan, AnUnalignedOutputTheDeviceOracleGivesWholeLetsTheCaseBeSampled) {
  const Op& xent = op("cross_entropy");
  ASSERT_TRUE(xent.device_unaligned_oracle);
  const Shape large{{{"tokens", 8192}, {"vocab", 32000}}};
  const auto specs = xent.tensors(large, DType::bf16);
  const SamplePlan host = plan_sample(xent, large, specs, 1);
  EXPECT_FALSE(host.sampled);
  EXPECT_FALSE(host.unaligned_on_device);
  EXPECT_NE(host.note.find("output 'loss' is not aligned with the sample axis 'tokens'"), std::string::npos)
      << host.note;
  const SamplePlan device = plan_sample(xent, large, specs, 1, true);
  EXPECT_TRUE(device.sampled) << device.note;
  EXPECT_TRUE(device.unaligned_on_device);
  EXPECT_NE(device.note.find("'loss' (not aligned with tokens) from the fp64 device oracle"), std::string::npos)
      << device.note;
  EXPECT_EQ(device.dims(specs[1]), (std::vector<std::int64_t>{8192})) << "every label";
  EXPECT_EQ(device.dims(specs[3])[0], static_cast<std::int64_t>(device.indices.size())) << "sampled gradient rows";
  EXPECT_EQ(device.dims(specs[2]), (std::vector<std::int64_t>{1})) << "the loss, whole";
  const Shape small{{{"tokens", 7}, {"vocab", 33}}};
  const SamplePlan tiny = plan_sample(xent, small, xent.tensors(small, DType::bf16), 1, true);
  EXPECT_FALSE(tiny.sampled);
  EXPECT_FALSE(tiny.unaligned_on_device) << "in full, the host oracle gives every output";
}

// linear_cross_entropy declares that its positional oracle reads every input whole and gives the
// unaligned loss and dh itself: dW's vocabulary rows are sampled. Without the declaration the
// same op is verified in full; a declaration its tensors contradict is refused, naming them.
TEST(SamplePlan, UnalignedOutputsFromWholeInputsAreCheckedWholeBesideSampledOnesOnlyWhereTheOpSaysSo) {
  const Op& lce = op("linear_cross_entropy");
  ASSERT_TRUE(lce.unaligned_from_whole_inputs);
  const Shape large{{{"tokens", 1024}, {"hidden", 4096}, {"vocab", 32000}}};
  const auto specs = lce.tensors(large, DType::bf16);
  const SamplePlan plan = plan_sample(lce, large, specs, 1);
  EXPECT_TRUE(plan.sampled) << plan.note;
  EXPECT_NE(plan.note.find("'loss', 'dh' (not aligned with vocab) whole, from the whole inputs"), std::string::npos)
      << plan.note;

  Op undeclared = lce;
  undeclared.unaligned_from_whole_inputs = false;
  const SamplePlan full = plan_sample(undeclared, large, specs, 1);
  EXPECT_FALSE(full.sampled);
  EXPECT_NE(full.note.find("output 'loss' is not aligned"), std::string::npos) << full.note;

  auto aligned_w = specs;
  for (auto& t : aligned_w)
    if (t.name == "W") t.sample_dim = 0;
  try {
    plan_sample(lce, large, aligned_w, 1);
    ADD_FAILURE() << "an aligned input under unaligned_from_whole_inputs was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("its input 'W' has sample_dim 0"), std::string::npos) << e.what();
  }
  auto nothing_aligned = specs;
  for (auto& t : nothing_aligned) t.sample_dim = -1;
  EXPECT_THROW(plan_sample(lce, large, nothing_aligned, 1), std::invalid_argument);
}

TEST(SamplePlan, ALargeAlignedInputMakesTheCaseSampledEvenWhenTheOutputIsSmall) {
  // loss is [rows] but the oracle reads [rows, vocab] logits: verifying every row costs 64M.
  const Op& nll = op("test_label_nll");
  const Shape large{{{"rows", 65536}, {"vocab", 1024}}};
  const auto specs = nll.tensors(large, DType::bf16);
  const SamplePlan plan = plan_sample(nll, large, specs, 1);
  EXPECT_TRUE(plan.sampled) << plan.note;
  EXPECT_EQ(plan.dims(specs[1]), (std::vector<std::int64_t>{static_cast<std::int64_t>(plan.indices.size())}))
      << "the int32 labels are gathered with their rows";
  const Shape small{{{"rows", 4096}, {"vocab", 1024}}};
  EXPECT_FALSE(plan_sample(nll, small, nll.tensors(small, DType::bf16), 1).sampled);
}

TEST(SamplePlan, ASampleDimThatDoesNotHoldTheAxisIsRefusedNamingTheTensor) {
  Op bad = op("test_colsum");
  auto specs = bad.tensors(Shape{{{"rows", 64}, {"cols", 32}}}, DType::fp32);
  specs[0].sample_dim = 1;  // cols, not rows
  try {
    plan_sample(bad, Shape{{{"rows", 64}, {"cols", 32}}}, specs, 1);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'x' declares sample_dim 1"), std::string::npos) << e.what();
  }
}

// A positional oracle (attention's causal mask needs each query's position) gets the plan's
// indices beside the sub-shape; a plain oracle gets the sub-shape alone.
TEST(RunSampledOracle, APositionalOracleReceivesTheSampledIndicesAndThePlainOneTheSubShape) {
  Op positional = op("test_bhsd_scale");
  positional.oracle = nullptr;
  std::vector<std::int64_t> seen_indices;
  std::int64_t seen_seq = -1;
  positional.positional_oracle = [&](const Shape& s, const std::vector<std::int64_t>& indices,
                                     const std::vector<HostTensor>&, std::vector<HostTensor>&) {
    seen_seq = s.at("seq");
    seen_indices = indices;
  };
  const Shape large{{{"batch", 4}, {"heads", 8}, {"seq", 4096}, {"dim", 136}}};
  const SamplePlan plan = plan_sample(positional, large, positional.tensors(large, DType::bf16), 1);
  ASSERT_TRUE(plan.sampled);
  std::vector<HostTensor> none;
  run_sampled_oracle(positional, large, plan, {}, none);
  EXPECT_EQ(seen_seq, static_cast<std::int64_t>(plan.indices.size()));
  EXPECT_EQ(seen_indices, plan.indices);
  EXPECT_EQ(seen_indices.back(), 4095) << "original positions, not 0 .. n-1 of the sub-shape";

  const Shape small{{{"batch", 1}, {"heads", 1}, {"seq", 5}, {"dim", 8}}};
  const SamplePlan all = plan_sample(positional, small, positional.tensors(small, DType::bf16), 1);
  run_sampled_oracle(positional, small, all, {}, none);
  EXPECT_EQ(seen_indices, (std::vector<std::int64_t>{0, 1, 2, 3, 4})) << "unsampled: every index";

  Op plain = op("test_bhsd_scale");
  plain.oracle = [&](const Shape& s, const std::vector<HostTensor>&, std::vector<HostTensor>&) {
    seen_seq = s.at("seq");
  };
  run_sampled_oracle(plain, large, plan, {}, none);
  EXPECT_EQ(seen_seq, static_cast<std::int64_t>(plan.indices.size()));
}

}  // namespace
}  // namespace kwb
