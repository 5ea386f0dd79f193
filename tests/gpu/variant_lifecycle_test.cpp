// The variant lifecycle on a GPU, through the hidden test_seq_sum op: its one variant needs its
// prepare step (the weight table exists nowhere else) and a reset before every launch (it adds
// into its output with atomics), and has a block-size tunable.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/measure/measure.hpp"
#include "harness/plan/planner.hpp"
#include "harness/worker/prepare/device_fill.hpp"
#include "reference/testing/seq_sum.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "harness/worker/case_runner.hpp"

namespace kwb {
namespace {

CaseRunner& runner() {
  static int device = (cudaSetDevice(0), 0);
  (void)device;
  static CaseRunner r(TimerKind::events, std::size_t{64} << 20);
  return r;
}

std::vector<CaseRequest> seq_sum_cases(const std::vector<std::string>& axes, Mode mode) {
  PlanRequest r;
  r.ops = {seq_sum::kOp};
  r.include_test_variants = true;
  r.mode = mode;
  r.preset = "quick";
  r.seed = 77;
  for (const auto& a : axes) r.axes.push_back(parse_axis_for(a, Registry::instance()));
  return plan_cases(r, Registry::instance());
}

TEST(VariantLifecycle, VerifiesInBothLayoutsCausalOrNotForEveryBlockSize) {
  KWB_REQUIRE_GPU();
  const auto cases = seq_sum_cases(
      {"layout=bshd,bhsd", "causal=0,1", "block=128,256,512", "seq=37", "dim=24"}, Mode::cold);
  ASSERT_EQ(cases.size(), 12u);
  auto& counts = seq_sum::counts();
  for (const CaseRequest& c : cases) {
    const auto prepares0 = counts.prepares.load(), launches0 = counts.launches.load(),
               resets0 = counts.resets.load();
    const CaseRecord rec = runner().run(c);
    ASSERT_EQ(rec.disposition, Disposition::passed) << rec.nvtx_range << ": " << rec.reason;
    ASSERT_TRUE(rec.verify && rec.timing) << rec.nvtx_range;
    EXPECT_EQ(rec.verify->elements_checked, 2 * 37 * 3 * 24) << "no sample axis: all of y is verified";
    EXPECT_EQ(rec.tunables, c.tunables);
    EXPECT_EQ(rec.nvtx_range, case_identity(c));
    // Once per case; one reset per launch (verification, warm-up and every sample).
    EXPECT_EQ(counts.prepares.load() - prepares0, 1) << rec.nvtx_range;
    const auto launches = counts.launches.load() - launches0;
    EXPECT_GE(launches, 1 + 2 + rec.timing->span.count) << rec.nvtx_range;
    EXPECT_EQ(counts.resets.load() - resets0, launches) << rec.nvtx_range;
  }
}

// Runs the variant by hand around measure(): y after timing is one launch's answer only if every
// sample was reset first; without the reset hook it holds the sum of all launches.
struct ByHand {
  const Variant* variant = Registry::instance().find_variant(seq_sum::kOp, seq_sum::kVariant);
  Shape shape{{{"batch", 2}, {"seq", 50}, {"heads", 2}, {"dim", 16}, {"layout", "bhsd"}, {"causal", "1"}}};
  TunableValues tunables{{"block", 256}};
  std::vector<TensorSpec> specs = Registry::instance().find_op(seq_sum::kOp)->tensors(shape, DType::fp32);
  std::int64_t n = 2 * 50 * 2 * 16;
  std::vector<void*> tensors{nullptr, nullptr};
  cudaStream_t stream = nullptr;
  std::shared_ptr<void> state;

  ByHand() {
    cuda_check(cudaStreamCreate(&stream), "stream");
    for (auto& t : tensors) cuda_check(cudaMalloc(&t, n * sizeof(float)), "cudaMalloc");
    cuda_check(fill_random(tensors[0], n, DType::fp32, {Distribution::Kind::normal, 0, 1}, 5, 0, stream), "fill");
    state = variant->prepare(args(stream));
  }
  ~ByHand() {
    state.reset();
    for (auto t : tensors) cudaFree(t);
    cudaStreamDestroy(stream);
  }
  LaunchArgs args(cudaStream_t s) const {
    return LaunchArgs{shape, DType::fp32, tensors, nullptr, s, state.get(), &tunables, &specs};
  }
  std::vector<float> output() const {
    std::vector<float> y(n);
    cuda_check(cudaStreamSynchronize(stream), "sync");
    cuda_check(cudaMemcpy(y.data(), tensors[1], n * sizeof(float), cudaMemcpyDeviceToHost), "copy y");
    return y;
  }
  TimingResult time(bool with_reset, L2Flusher& flusher) const {
    MeasureSettings settings;
    settings.mode = Mode::cold;
    settings.rule = *stopping_preset("quick");
    if (with_reset) settings.reset = [this](cudaStream_t s) { variant->reset(args(s)); };
    return measure([this](cudaStream_t s) { variant->launch(args(s)); }, stream, settings,
                   TimerKind::events, &flusher);
  }
};

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(double(a[i]) - b[i]) / (1e-3 + std::abs(double(b[i]))));
  return worst;
}

TEST(VariantLifecycle, ResetBeforeEverySampleLeavesOneLaunchsAnswerAfterTiming) {
  KWB_REQUIRE_GPU();
  runner();  // device 0 selected
  ByHand h;
  ASSERT_NE(h.variant, nullptr);
  L2Flusher flusher(std::size_t{64} << 20);
  h.variant->reset(h.args(h.stream));
  h.variant->launch(h.args(h.stream));
  const std::vector<float> once = h.output();

  const TimingResult with = h.time(true, flusher);
  EXPECT_LT(max_rel_diff(h.output(), once), 1e-4) << "a sample ran without its reset";
  EXPECT_GT(with.span.count, 0);

  // The same loop without the hook: y accumulates every launch. This is what the check above
  // would see if measure() skipped the reset, so the check can fail.
  h.time(false, flusher);
  EXPECT_GT(max_rel_diff(h.output(), once), 1.0);
}

}  // namespace
}  // namespace kwb
