// mean_pooling_fwd fused_v3_dynamic_tail_rows on a GPU: its blocks claim the last rows of each
// sequence from counters in the workspace, which prepare() zeroes once and every launch zeroes
// again (the combine kernel, or with combine=2 the last block of each group, which also leaves
// its arrivals, kept counts and fp32 sums zero). Launched back to back without a reset between
// (as timing does), each launch must still sum every row: y stays within a few fp32 ulps of
// fused_v2's (the same terms, grouped by whichever block claimed them), and the state reads zero
// after each run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/align_up.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/op_tensors.hpp"

namespace kwb {
namespace {

struct PoolingRun {
  std::vector<float> y;
  std::vector<int> counters;  // the workspace's first ints (fused_v3: the row counters)
};

// One shape's inputs (x, mask) drawn once, seeded; a variant's launches on them.
class PoolingRuns {
 public:
  explicit PoolingRuns(Shape shape, DType dtype = DType::fp32)
      : dtype_(dtype), tensors_("mean_pooling_fwd", std::move(shape), dtype) {}

  // y after `launches` launches of `variant` with its default tunables (those in `asked` set as
  // given), one prepare() before
  // them, from a workspace and a y filled with 0xff bytes (prepare() must zero what it needs; an
  // element left unwritten reads NaN); and the workspace's first `counters` ints after them.
  PoolingRun run(const char* variant_name, int launches, std::size_t counters = 0,
                 const TunableValues& asked = {}) {
    const Variant* variant = Registry::instance().find_variant("mean_pooling_fwd", variant_name);
    EXPECT_NE(variant, nullptr) << variant_name;
    if (!variant) return {};
    const std::size_t bytes = variant->workspace_bytes(tensors_.shape(), dtype_);
    void* workspace = nullptr;
    cuda_check(cudaMalloc(&workspace, bytes), "workspace");
    cuda_check(cudaMemset(workspace, 0xff, bytes), "poison the workspace");
    tensors_.poison_outputs();
    TunableValues tunables = default_tunables(*variant, tensors_.shape(), dtype_);
    for (const auto& [name, value] : asked)
      for (auto& [have, v] : tunables)
        if (have == name) v = value;
    LaunchArgs args = tensors_.args(workspace, tunables);
    const std::shared_ptr<void> state = variant->prepare ? variant->prepare(args) : nullptr;
    args.state = state.get();
    for (int k = 0; k < launches; ++k) variant->launch(args);
    const auto outputs = tensors_.outputs();
    PoolingRun out;
    out.y = to_floats(outputs.at(0));
    out.counters.resize(counters);
    cuda_check(cudaMemcpy(out.counters.data(), workspace, counters * sizeof(int), cudaMemcpyDeviceToHost), "counters");
    cudaFree(workspace);
    return out;
  }

 private:
  // y's bytes as floats: fp32 as it is, bf16 widened (its bits are an fp32's high half).
  std::vector<float> to_floats(const std::vector<unsigned char>& bytes) const {
    std::vector<float> y;
    if (dtype_ == DType::bf16) {
      y.resize(bytes.size() / 2);
      for (std::size_t i = 0; i < y.size(); ++i) {
        const std::uint32_t bits = std::uint32_t{bytes[2 * i]} | std::uint32_t{bytes[2 * i + 1]} << 8;
        const std::uint32_t wide = bits << 16;
        std::memcpy(&y[i], &wide, 4);
      }
    } else {
      y.resize(bytes.size() / sizeof(float));
      std::memcpy(y.data(), bytes.data(), bytes.size());
    }
    return y;
  }

  DType dtype_;
  test::OpTensors tensors_;
};

// The largest |a - b| relative to b's root mean square; infinite where either holds a NaN or an
// infinity (std::max would pass a NaN by).
double max_diff_over_rms(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, squares = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
    squares += double(b[i]) * b[i];
  }
  return b.empty() ? 0 : worst / std::sqrt(squares / static_cast<double>(b.size()) + 1e-300);
}

TEST(MeanPoolingClaims, BackToBackLaunchesSumEveryRowAndLeaveTheCountersAtZero) {
  KWB_REQUIRE_GPU();
  // b4 s8192 d4096: 8 column blocks of 512 fp32 columns a sequence, 32 counters. d4099 takes one
  // element a thread: the workspace holds 33 counters a sequence (one pack a thread, the most
  // column blocks), of which the default 4 packs use 9; all of them must read zero.
  // The state after the counters (combine=2): arrivals and kept counts (as many ints each, each
  // array aligned as the variant lays them out) and the fp32 sums, b x hidden; zero bits all.
  // bf16 b4 s8192 d4096 (2 KB column blocks of 8-element packs, 16 counters): the 16-byte loads
  // with their L2 hint (auto: 201 MB of kept rows) and two float4 atomics a pack; its y is
  // rounded to bf16, so it may differ from fused_v2's by an ulp of the larger values.
  struct Case {
    std::int64_t batch, seq, hidden;
    std::size_t counters;
    DType dtype = DType::fp32;
    double tolerance = 1e-5;  // of y's RMS
  };
  for (const Case c : {Case{4, 8192, 4096, 32}, Case{7, 1000, 4099, 7 * 33}, Case{4, 8192, 4096, 16, DType::bf16, 0.05}}) {
    PoolingRuns runs(Shape{{{"batch", c.batch}, {"seq", c.seq}, {"hidden", c.hidden}}}, c.dtype);
    const PoolingRun reference = runs.run("fused_v2_spread_combine", 1);
    ASSERT_FALSE(reference.y.empty());
    const std::size_t group_ints = align_up(c.counters * sizeof(int)) / sizeof(int);
    const std::size_t state_ints = 3 * group_ints + static_cast<std::size_t>(c.batch * c.hidden);
    for (std::int64_t combine : {1, 2}) {
      double worst = 0;
      for (int launches : {1, 2, 5}) {
        const PoolingRun claimed = runs.run("fused_v3_dynamic_tail_rows", launches,
                                            combine == 1 ? c.counters : state_ints, {{"combine", combine}});
        ASSERT_EQ(claimed.y.size(), reference.y.size());
        worst = std::max(worst, max_diff_over_rms(claimed.y, reference.y));
        EXPECT_TRUE(std::all_of(claimed.counters.begin(), claimed.counters.end(), [](int v) { return v == 0; }))
            << "b" << c.batch << " s" << c.seq << " d" << c.hidden << ", combine=" << combine << ", " << launches
            << " launches: each launch must leave the row counters (and with combine=2 the arrivals, counts "
               "and sums) zero for the next";
      }
      std::printf("fused_v3 combine=%lld against fused_v2, b%lld s%lld d%lld %s: largest difference over y's RMS %.3g\n",
                  static_cast<long long>(combine), static_cast<long long>(c.batch), static_cast<long long>(c.seq),
                  static_cast<long long>(c.hidden), std::string(to_string(c.dtype)).c_str(), worst);
      // A claim left out (a counter not zeroed: every claim of the next launch fails) drops 10% of
      // the rows, and sums left over add a launch's y again, moving y by a fair fraction of its RMS;
      // regrouping fp32 sums moves it by ulps (of fp32, or of bf16 once rounded).
      EXPECT_LT(worst, c.tolerance) << "combine=" << combine << " " << to_string(c.dtype);
    }
  }
}

}  // namespace
}  // namespace kwb
