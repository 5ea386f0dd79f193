// One case, step by step: run() calls its phases in order (refuse, make room, prepare the group,
// prepare the variant, verify, time, counters), each below it in that order; the next group's
// preparation ahead of its turn is in case_runner_prefetch.cpp.
#include "harness/worker/case_runner.hpp"
#include "harness/worker/case_runner_parts.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <fmt/format.h>

#include "harness/catalogue/case_identity.hpp"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/oracle_device.hpp"
#include "harness/worker/measure/graph_launch.hpp"
#include "harness/worker/memory_skip.hpp"
#include "harness/worker/oracle_cache/group_oracle.hpp"
#include "harness/worker/prepare/device_fill.hpp"
#include "harness/worker/prepare/group_inputs.hpp"
#include "harness/worker/prepare/group_prefetch.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/shape_label.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "harness/worker/counters/case_counters.hpp"
#include "harness/worker/verify/device_scan.hpp"
#include "harness/worker/verify/timed_output.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "harness/worker/verify/verify.hpp"
#include "harness/worker/test_slowdown.hpp"

namespace kwb {

struct NvtxDomain {
  static constexpr const char* name{"kwb"};
};
using ScopedRange = nvtx3::scoped_range_in<NvtxDomain>;

namespace {

CaseRecord skipped(CaseRecord rec, std::string reason) {
  rec.disposition = Disposition::skipped;
  rec.reason = std::move(reason);
  return rec;
}

}  // namespace

namespace case_runner_detail {

// (case_runner_parts.hpp)
std::optional<std::string> refusal(const Op& op, const Variant& variant, const CaseRequest& req) {
  if ((variant.test_only || op.test_only) && !req.include_test_variants)
    return "test-only variant (use --include-test-variants)";
  for (const Tunable& t : variant.tunables) {
    const auto given = std::find_if(req.tunables.begin(), req.tunables.end(),
                                    [&](const auto& x) { return x.first == t.name; });
    if (given == req.tunables.end() ||
        std::find(t.values.begin(), t.values.end(), given->second) == t.values.end())
      return "no declared value of tunable '" + t.name + "' in the request";
  }
  if (std::find(op.dtypes.begin(), op.dtypes.end(), req.dtype) == op.dtypes.end())
    return std::string("the op does not define ") + std::string(to_string(req.dtype));
  if (op.invalid)
    if (auto why = op.invalid(req.shape)) return why;
  if (variant.refuse)
    if (auto why = variant.refuse(req.shape, req.dtype)) return why;
  // A tunable value this (valid) shape cannot take: after the op's and the variant's reasons,
  // which say more about a shape that fails both.
  for (const auto& [name, value] : req.tunables)
    for (const Tunable& t : variant.tunables)
      if (t.name == name && t.refuse_value)
        if (auto why = t.refuse_value(req.shape, req.dtype, value)) return why;
  return std::nullopt;
}

}  // namespace case_runner_detail

using case_runner_detail::DeviceBuffer;
using case_runner_detail::free_device_bytes;

// Inputs on the device, the sample to verify and the oracle's answer for it.
struct CaseRunner::Group {
  std::string key;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;  // one per tensor, outputs included
  GroupOracle oracle;  // the sample plan (what verification reads) and the oracle's answer for it

  // What verification reads of a tensor: its sampled slabs if it is aligned, else all of it.
  std::vector<unsigned char> copy_to_host(const void* device, const TensorSpec& t, std::size_t esize) const {
    return copy_for_verification(oracle.plan, device, t, esize);
  }
};

// One case's launch: the variant's workspace, the state its prepare() returned and the arguments
// every launch gets. The state is declared after the buffers, so it is destroyed first when the
// case ends (a plan or handle may refer to them).
struct CaseRunner::CaseLaunch {
  DeviceBuffer scratch;
  std::vector<void*> ptrs;  // the group's buffers, in the op's tensor order
  LaunchArgs args;
  std::shared_ptr<void> state;

  CaseLaunch(std::size_t workspace, const Group& group, const CaseRequest& req, const std::vector<TensorSpec>& specs,
             cudaStream_t stream)
      : scratch(workspace), ptrs(pointers(group)),
        args{req.shape, req.dtype, ptrs, scratch.ptr, stream, nullptr, &req.tunables, &specs, req.seed} {}

  static std::vector<void*> pointers(const Group& group) {
    std::vector<void*> p;
    for (auto& b : group.buffers) p.push_back(b->ptr);
    return p;
  }
};

// Whether a device may serve the oracles is part of it: it decides the sample plan (an op's
// unaligned outputs from the device, or the whole case on the host), and KWB_ORACLE_GPU is read
// at each call.
std::string input_group_key(const CaseRequest& req) {
  return req.op + "|" + std::string(to_string(req.dtype)) + "|" + req.shape.to_assignments() + "|" +
         std::to_string(req.seed) + (oracle_device_usable() ? "|oracle on device" : "|oracle on host");
}

std::string nvtx_case_name(const CaseRequest& req) {
  return case_identity(req.op, req.variant, req.dtype, req.shape, req.tunables);
}

CaseRunner::CaseRunner(TimerKind timer, std::size_t l2_bytes) : CaseRunner(timer, l2_bytes, nullptr) {}

CaseRunner::CaseRunner(TimerKind timer, std::size_t l2_bytes, std::unique_ptr<OracleCache> oracle_cache)
    : timer_(timer), l2_bytes_(l2_bytes), oracle_cache_(std::move(oracle_cache)) {
  renew_stream();
  state_guard_ = std::make_unique<DeviceStateGuard>(stream_);
  try {
    slowdowns_ = test_slowdowns_from_env();
  } catch (const std::invalid_argument&) {  // `kwb run` refuses a malformed value before any worker starts
  }
}

CaseRunner::~CaseRunner() {
  prefetch_.reset();  // waits for its thread, which reads the oracle cache
  group_.reset();
  flusher_.reset();
  counter_flusher_.reset();
  if (stream_ && !context_lost_) cudaStreamDestroy(stream_);
}

// Each case's stream is new: an attribute a variant set on the last one (an access policy window,
// a priority) goes with it.
void CaseRunner::renew_stream() {
  if (stream_) cuda_check(cudaStreamDestroy(stream_), "cudaStreamDestroy");
  stream_ = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

CaseRecord record_for(const CaseRequest& req) {
  CaseRecord rec;
  rec.index = req.index;
  rec.op = req.op;
  rec.variant = req.variant;
  rec.dtype = req.dtype;
  rec.shape = req.shape;
  rec.shape_label = recorded_shape_label(req.op, req.shape);
  rec.tunables = req.tunables;
  rec.nvtx_range = nvtx_case_name(req);
  return rec;
}

// The phases in order. A phase that finds the case cannot run here returns why (the case is
// skipped); a CUDA error or an exception in any of them fails the case, naming the phase. Once
// the variant has run (its state destroyed, as at the end of any case), the device state is
// compared with what it was before its prepare and put back.
CaseRecord CaseRunner::run(const CaseRequest& req) {
  CaseRecord rec = record_for(req);
  const auto& registry = Registry::instance();
  const Op* op = registry.find_op(req.op);
  const Variant* variant = registry.find_variant(req.op, req.variant);
  if (!op || !variant) return skipped(std::move(rec), "not in this build's registry");
  rec.role = variant->role;
  if (auto why = case_runner_detail::refusal(*op, *variant, req)) return skipped(std::move(rec), std::move(*why));

  ScopedRange case_range{rec.nvtx_range};
  std::string phase = "prepare";
  std::optional<DeviceState> state_before;
  CaseStageTimes stages;
  StageTimer timer(stages);  // in setup
  try {
    // 0. The device state the worker started with, and a fresh stream.
    // A failure here is not this variant's: it has not run yet. The state was left by what ran
    // before it in this worker (an earlier case, a ceilings or copy-check command).
    phase = "reset device state (left by an earlier case or command in this worker; this variant did not run)";
    try {
      state_guard_->restore();
    } catch (const CudaError&) {
      context_lost_ = true;  // a state this worker cannot set back: a fresh worker starts clean
      throw;
    }
    renew_stream();
    phase = "prepare";

    // 1. Memory: skip what cannot fit before allocating anything.
    const auto specs = op->tensors(req.shape, req.dtype);
    const std::size_t workspace = variant->workspace_bytes ? variant->workspace_bytes(req.shape, req.dtype) : 0;
    const std::string key = input_group_key(req);
    if (auto why = make_room(req, specs, workspace, key)) return skipped(std::move(rec), std::move(*why));
    if (req.mode == Mode::cold && (!flusher_ || flusher_->kind() != req.flush))
      flusher_ = std::make_unique<L2Flusher>(l2_bytes_, req.flush);

    // 2. Inputs and oracle, once per group; then the next group's, in the background, as soon as
    // the session has named it (at a group's first case with one GPU, at its last beside others).
    if (!group_) {
      group_ = prepare_group(*op, req, specs, key, timer);
      if (on_group_prepared_) on_group_prepared_();
    }
    if (next_request_) {
      timer.enter(&CaseStageTimes::inputs_ms);
      phase = "prepare the next group's inputs (ahead of its turn; this variant has not run)";
      prefetch_next_group(req);
      phase = "prepare";
    }

    // 3. The variant's own preparation, once per case and outside timing, with the device state
    // read just before it.
    timer.enter(&CaseStageTimes::isolation_ms);
    state_before = state_guard_->capture(stream_);
    timer.enter(&CaseStageTimes::prepare_ms);
    const std::size_t free_before_variant = free_device_bytes();
    CaseLaunch case_launch(workspace, *group_, req, specs, stream_);
    if (variant->prepare) {
      phase = "variant prepare";
      prepare_variant(*variant, case_launch);
    }

    // 4. Verify on poisoned outputs.
    phase = "verify";
    timer.enter(&CaseStageTimes::verify_ms);
    rec.device_memory_bytes = launch_on_poisoned_outputs(*variant, req, specs, case_launch.args, free_before_variant);
    rec.verify = verify_outputs(*op, req, specs);
    if (!rec.verify->passed) {
      rec.disposition = Disposition::failed;
      rec.reason = failure_reason(*rec.verify);  // a wrong kernel's speed means nothing: not timed
    } else if (req.preset == kVerifyOnlyPreset) {
      rec.disposition = Disposition::passed;
    } else {
      // 5. Time, re-checking the timed launches' output.
      phase = "measure";
      timer.enter(&CaseStageTimes::measure_ms);
      time_case(*op, *variant, req, specs, case_launch.args, rec);
      rec.disposition = Disposition::passed;
      // 6. Hardware counters, when asked for: replay passes of their own, after timing.
      if (!req.counter_metrics.empty()) {
        phase = "counter passes";
        timer.enter(&CaseStageTimes::counters_ms);
        collect_case_counters(*variant, req, case_launch.args, rec);
      }
    }
  } catch (const TimedOutputMismatch& e) {
    rec.disposition = Disposition::failed;
    rec.reason = e.what();
    rec.timing.reset();  // what was timed is not what was verified
  } catch (const GraphCaptureError& e) {
    // Verified, and correct as a stream launch; only this way of timing it does not apply.
    rec.disposition = Disposition::skipped;
    rec.reason = e.what();
    rec.timing.reset();
  } catch (const CudaError& e) {
    fail_on_cuda_error(rec, phase, e);
  } catch (const std::exception& e) {
    rec.disposition = Disposition::failed;
    rec.reason = std::string("error during ") + phase + ": " + e.what();
    // An exception may carry a device fault in words of its own (a Python variant's framework
    // raises "CUDA error: an illegal memory access" as a RuntimeError): a sticky error left on
    // the device means the context is gone, as after a CudaError, and the worker is replaced.
    // (A second synchronize tells a sticky error from one the first call reported and cleared.)
    if (const cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess) {
      context_lost_ = true;
      rec.reason += std::string(" [the device then reported ") + cudaGetErrorString(sticky) +
                    ": its context is lost; the next case runs in a new worker]";
    } else {
      (void)cudaGetLastError();  // an error that did not stay must not be read by the next case
    }
  }
  // The stage that ran last (or threw) is closed here; the variant's state and workspace, freed
  // with the try block, went with it.
  timer.enter(&CaseStageTimes::isolation_ms);
  if (state_before && !context_lost_) check_device_state(*state_before, rec);
  timer.enter(&CaseStageTimes::isolation_ms);  // closes the check
  rec.stages = stages;
  return rec;
}

// 1. Frees the previous group's tensors when this case needs new ones, then says why the case
// cannot fit in the device's free memory (nullopt: it fits).
std::optional<std::string> CaseRunner::make_room(const CaseRequest& req, const std::vector<TensorSpec>& specs,
                                                 std::size_t workspace, const std::string& key) {
  double needed = static_cast<double>(workspace);
  if (!group_ || group_->key != key) {
    group_.reset();  // free the previous group's tensors before measuring the new need
    needed += tensor_bytes(specs, req.dtype);  // each tensor at its own element size
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (needed > 0.95 * static_cast<double>(free_bytes)) return memory_skip_reason(needed, free_bytes, total_bytes);
  return std::nullopt;
}

// 2. Fills the inputs on the device, plans the sample, and runs the oracle on just the sampled
// slabs (a sub-shape whose sample axis is the number of sampled indices), or on everything. The
// oracle's answer comes from the cache when an earlier run stored it for these very input values,
// or from the background thread that prepared it while the previous group was timed.
std::unique_ptr<CaseRunner::Group> CaseRunner::prepare_group(const Op& op, const CaseRequest& req,
                                                             const std::vector<TensorSpec>& specs,
                                                             std::string key, StageTimer& timer) {
  ScopedRange range{"prepare inputs and oracle"};
  timer.enter(&CaseStageTimes::inputs_ms);
  std::optional<GroupOracle> prefetched = take_prefetch(key, timer);
  timer.enter(&CaseStageTimes::inputs_ms);
  auto g = std::make_unique<Group>();
  g->key = std::move(key);
  // Validates the sample dims before any allocation.
  SamplePlan plan = prefetched ? prefetched->plan : plan_sample(op, req.shape, specs, req.seed, oracle_device_usable());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& t = specs[i];
    g->buffers.push_back(std::make_unique<DeviceBuffer>(t.numel() * elem_size(t.elem_type(req.dtype))));
    if (!t.is_output) fill_input(op, req, specs, i, g->buffers[i]->ptr);
  }
  if (op.derive_inputs) derive_inputs(op, req, specs, *g);
  cuda_check(cudaStreamSynchronize(stream_), "synchronize after filling inputs");

  if (!prefetched) {
    std::vector<std::vector<unsigned char>> raw(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (!specs[i].is_output)
        raw[i] = copy_for_verification(plan, g->buffers[i]->ptr, specs[i], elem_size(specs[i].elem_type(req.dtype)));
    std::vector<const void*> tensors;
    for (const auto& b : g->buffers) tensors.push_back(b->ptr);
    const DeviceOracleArgs on_device{req.shape, req.dtype, specs, tensors, stream_};
    // The oracle stage includes the cache's lookup and store, and the inputs' decoding when the
    // oracle runs.
    prefetched = oracle_for_group(op, req, specs, std::move(plan), raw, oracle_cache_.get(), &on_device,
                                  [&] { timer.enter(&CaseStageTimes::oracle_ms); });
  }
  g->oracle = std::move(*prefetched);
  return g;  // the oracle stage runs on until the caller enters the next
}

// Draws input `i` of the case on the device. A derived input is poisoned instead, so that an
// element its op's derive_inputs leaves unwritten is found (derive_inputs refuses the case).
void CaseRunner::fill_input(const Op& op, const CaseRequest& req, const std::vector<TensorSpec>& specs, std::size_t i,
                            void* device) {
  const TensorSpec& t = specs[i];
  const ElemType type = t.elem_type(req.dtype);
  if (t.init.kind == Distribution::Kind::derived) {
    cuda_check(poison(device, t.numel() * elem_size(type), type, stream_), "poison a derived input");
    return;
  }
  try {
    cuda_check(fill_tensor(device, t.numel(), type, t.init, req.seed, i, stream_), "fill inputs");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("op '{}', input '{}' ({}, {} draws): {}", op.name, t.name,
                                            to_string(type), to_string(t.init.kind), e.what()));
  }
}

// The op's derived inputs, computed on the device from the drawn ones (Op::derive_inputs).
void CaseRunner::derive_inputs(const Op& op, const CaseRequest& req, const std::vector<TensorSpec>& specs,
                               const Group& g) {
  ScopedRange range{"derive inputs"};
  std::vector<void*> tensors;
  for (const auto& b : g.buffers) tensors.push_back(b->ptr);
  op.derive_inputs(LaunchArgs{.shape = req.shape, .dtype = req.dtype, .tensors = tensors, .workspace = nullptr,
                              .stream = stream_, .specs = &specs, .seed = req.seed});
  cuda_check(cudaGetLastError(), "derive inputs");
  // An element the derivation left unwritten still holds the poison and would reach the oracle
  // and every variant alike, where NaN against NaN compares as a match: the case is refused.
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    if (t.is_output || t.init.kind != Distribution::Kind::derived) continue;
    const ScanCounts counts = scan_output(g.buffers[i]->ptr, t.numel(), t.elem_type(req.dtype), stream_);
    if (counts.unwritten > 0 || counts.nonfinite > 0)
      throw std::invalid_argument(fmt::format(
          "op '{}': its derive_inputs left {} of the {} elements of input '{}' unwritten and made {} non-finite; "
          "it must write every element of a derived input with a finite value",
          op.name, counts.unwritten, t.numel(), t.name, counts.nonfinite));
  }
}

// 3. The variant's prepare(), synchronised so that a fault in it is reported as its own.
void CaseRunner::prepare_variant(const Variant& variant, CaseLaunch& case_launch) {
  ScopedRange r{"variant prepare"};
  case_launch.state = variant.prepare(case_launch.args);
  cuda_check_launch("variant prepare");
  cuda_check(cudaStreamSynchronize(stream_), "synchronize after variant prepare");
  case_launch.args.state = case_launch.state.get();
}

// 4. One launch on poisoned outputs, for verify_outputs() to read. The reset runs after the
// poison, as it runs before every sample: an accumulator the kernel adds into must start from the
// reset state. (Elements a reset covers then read as reset, not as poison, if the kernel never
// writes them; the oracle comparison still catches them.) Returns the device memory the variant
// took beyond the inputs and outputs: its workspace, prepare()'s allocations and whatever its
// first launch made the driver or a library allocate.
std::int64_t CaseRunner::launch_on_poisoned_outputs(const Variant& variant, const CaseRequest& req,
                                                    const std::vector<TensorSpec>& specs, const LaunchArgs& args,
                                                    std::size_t free_before_variant) {
  ScopedRange r{"verify"};
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].is_output)
      cuda_check(poison(args.tensors[i], group_->buffers[i]->bytes, specs[i].elem_type(req.dtype), stream_),
                 "poison outputs");
  if (variant.reset) {
    variant.reset(args);
    cuda_check_launch("reset (verify)");
  }
  variant.launch(args);
  cuda_check_launch("launch (verify)");
  cuda_check(cudaStreamSynchronize(stream_), "synchronize after verify launch");
  const std::size_t free_after_launch = free_device_bytes();
  return free_before_variant > free_after_launch ? static_cast<std::int64_t>(free_before_variant - free_after_launch)
                                                 : 0;
}

// 4. Scans every output in full on the device, then compares the verified part with the oracle,
// each output with its own element type and tolerance.
VerifyResult CaseRunner::verify_outputs(const Op&, const CaseRequest& req,
                                        const std::vector<TensorSpec>& specs) {
  Verifier verifier;
  std::size_t out_index = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& t = specs[i];
    if (!t.is_output) continue;
    const ElemType type = t.elem_type(req.dtype);
    OutputToCheck out{t.name, type, tolerance_for(t, req.dtype), t.numel(), group_->oracle.plan.gathers(t),
                      scan_output(group_->buffers[i]->ptr, t.numel(), type, stream_), t.minus_inf_is_value};
    const auto got = group_->copy_to_host(group_->buffers[i]->ptr, t, elem_size(type));
    const HostTensor& expected = group_->oracle.expected[out_index++];
    verifier.compare(out, got, expected.values, {expected.abs_sum, expected.root_sum_sq});
  }
  const auto& plan = group_->oracle.plan;
  VerifyResult result = verifier.finish(static_cast<std::int64_t>(plan.indices.size()), plan.axis_size);
  result.sampling = plan.note;
  result.oracle_source = std::string(to_string(group_->oracle.source));
  result.sampled_block_starts = plan.block_starts;
  if (!plan.block_starts.empty()) result.sampled_block_length = kSampleBlockRows;
  return result;
}

// 5. Times the variant's launches under the request's preset, mode and launch: fills rec.timing
// (and, when slowed on purpose, says so in rec.reason). In graph mode one sample's launches are
// captured in a CUDA graph first and every sample replays it (GraphCaptureError: the case is
// skipped). The last sample of every batch runs on poisoned outputs and its output is checked
// (harness/worker/verify/timed_output.hpp): bit for bit against the verified output, or, for a
// variant that varies run to run (or whose copy does not fit), scanned for poison and re-verified
// against the oracle after the last batch. Throws TimedOutputMismatch when the timed launches do
// not reproduce the verified output.
void CaseRunner::time_case(const Op& op, const Variant& variant, const CaseRequest& req,
                           const std::vector<TensorSpec>& specs, const LaunchArgs& args, CaseRecord& rec) {
  ScopedRange r{"measure"};
  MeasureSettings settings;
  settings.mode = req.mode;
  settings.rule = *stopping_preset(req.preset);
  // KWB_WARMUP=fixed: every warm-up runs its preset's whole length, as before it could settle
  // sooner; for checking that a result does not depend on the shorter warm-up.
  if (const char* w = std::getenv("KWB_WARMUP"); w && std::string_view(w) == "fixed")
    settings.rule.warmup_min_ms = settings.rule.warmup_ms;
  auto on_stream = [&](cudaStream_t s) {
    LaunchArgs a = args;
    a.stream = s;
    return a;
  };
  // The outputs hold the verified values now: nothing has launched since verification.
  std::vector<DeviceOutput> outputs;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].is_output)
      outputs.push_back({specs[i].name, group_->buffers[i]->ptr, specs[i].numel(), specs[i].elem_type(req.dtype)});
  TimedOutputCheck output_check(std::move(outputs), variant.varies_run_to_run, stream_);
  settings.output_check = MeasureSettings::OutputCheck{[&](cudaStream_t s) { output_check.poison(s); },
                                                       [&] { return output_check.check(stream_); }};

  if (variant.reset)
    settings.reset = [&](cudaStream_t s) { variant.reset(on_stream(s)); };
  LaunchFn launch = [&](cudaStream_t s) { variant.launch(on_stream(s)); };
  if (const TestSlowdown* slowdown = find_slowdown(slowdowns_, req.op, req.variant)) {  // test only (test_slowdown.hpp)
    // The spin kernel's own launch and the gap before it cost time too: measured with a zero
    // spin and taken off, so that the case slows by the fraction asked for.
    const double alone_ns = median_launch_ns(launch, settings.reset, stream_, 21);
    const auto with_spin = [&](double ns) {
      return [&, ns](cudaStream_t s) {
        variant.launch(on_stream(s));
        launch_spin(s, ns);
      };
    };
    const double extra_launch_ns = median_launch_ns(with_spin(0), settings.reset, stream_, 21) - alone_ns;
    const double spin_ns = std::max(0.0, slowdown->fraction * alone_ns - extra_launch_ns);
    launch = with_spin(spin_ns);
    rec.reason = fmt::format("slowed on purpose by {}: +{:.3g}% ({:.2f} us spin after each launch, {:.2f} us "
                             "for the extra launch itself)",
                             kTestSlowdownEnv, 100 * slowdown->fraction, spin_ns / 1000, extra_launch_ns / 1000);
  }

  std::optional<GraphLaunch> graph;
  if (req.launch == LaunchKind::graph) {
    graph.emplace(launch, stream_);
    settings.launch = LaunchKind::graph;
    settings.graph_kernels = graph->kernels();
    launch = [&](cudaStream_t s) { graph->replay(s); };
  }

  rec.timing = measure(launch, stream_, settings, timer_, flusher_.get());
  if (output_check.needs_oracle_recheck()) {
    const VerifyResult again = verify_outputs(op, req, specs);
    if (!again.passed)
      throw TimedOutputMismatch("timed launches did not reproduce the verified output: the last timed sample's "
                                "output, re-verified against the oracle, failed: " + failure_reason(again));
  }
  rec.timing->output_check = output_check.summary();
}

// 6. The counter passes (harness/worker/counters/case_counters.hpp): the variant's launch
// replayed from the state the timed samples start from (its reset, the cold flush or a hot
// warm-up launch outside the profiled range), as stream launches in either launch mode: a CUDA
// graph is one opaque range to the profiler. Counters that cannot be read (the profiler refuses,
// the clean flusher does not fit beside the case) leave the case as it was, saying why in
// rec.counters; only a CUDA error of the variant's own launches fails it.
void CaseRunner::collect_case_counters(const Variant& variant, const CaseRequest& req, const LaunchArgs& args,
                                       CaseRecord& rec) {
  ScopedRange r{"counters"};
  auto on_stream = [&](cudaStream_t s) {
    LaunchArgs a = args;
    a.stream = s;
    return a;
  };
  CounterPass pass;
  pass.sets = req.counter_sets;
  pass.metrics = req.counter_metrics;
  pass.mode = req.mode;
  // Cold counter passes always start from a clean L2 (dirty lines written back, as Nsight
  // Compute's --cache-control all): under the dirty flush the L2's dirty lines would be written
  // back during the kernel and counted as its DRAM writes (up to the L2's size of them).
  if (req.mode == Mode::cold) {
    if (flusher_ && flusher_->kind() == FlushKind::clean) {
      pass.flusher = flusher_.get();
    } else {
      if (!counter_flusher_) {
        try {
          counter_flusher_ = std::make_unique<L2Flusher>(l2_bytes_, FlushKind::clean);
        } catch (const std::runtime_error& e) {  // no room beside the case's tensors: not the variant's fault
          cudaGetLastError();
          rec.counters = CaseCounters{.source = "cupti", .sets = req.counter_sets, .metrics = req.counter_metrics};
          rec.counters->unavailable = std::string("no room for the counter passes' clean L2 flush: ") + e.what();
          return;
        }
      }
      pass.flusher = counter_flusher_.get();
    }
  }
  pass.timer = timer_;
  if (variant.reset) pass.reset = [&](cudaStream_t s) { variant.reset(on_stream(s)); };
  pass.launch = [&](cudaStream_t s) { variant.launch(on_stream(s)); };
  rec.counters = collect_counters(pass, stream_);
}

// After the variant ran: a device-wide value or one of its stream's attributes left changed
// fails the case ("changed device state: <what>: <from> -> <to>"), whatever it was going to
// report, and the state is put back for the next case. A value the driver refuses to set back
// costs this worker: the next case starts in a fresh one.
void CaseRunner::check_device_state(const DeviceState& before, CaseRecord& rec) {
  try {
    const std::string changes = describe_changes(before, state_guard_->capture(stream_));
    if (!changes.empty()) {
      const std::string earlier = rec.disposition == Disposition::failed ? rec.reason : "";
      rec.disposition = Disposition::failed;
      rec.reason = "changed device state: " + changes + (earlier.empty() ? "" : "; besides, " + earlier);
      rec.timing.reset();  // timed under a state of its own making
    }
    state_guard_->restore();
  } catch (const std::exception& e) {
    rec.disposition = Disposition::failed;
    rec.reason += std::string(rec.reason.empty() ? "" : "; ") + "could not set the device state back (" + e.what() +
                  "): the next case starts in a fresh worker";
    rec.timing.reset();
    context_lost_ = true;
  }
}

// Fails the case and decides whether the context survived: faults (illegal address, assert,
// launch failure) are sticky, and the worker must then exit.
void CaseRunner::fail_on_cuda_error(CaseRecord& rec, const std::string& phase, const CudaError& e) {
  rec.disposition = Disposition::failed;
  rec.reason = std::string("CUDA error during ") + phase + ": " + e.what();
  const cudaError_t sticky = cudaDeviceSynchronize();
  context_lost_ = context_lost_ || sticky != cudaSuccess || e.code == cudaErrorIllegalAddress || e.code == cudaErrorAssert ||
                  e.code == cudaErrorLaunchFailure;
  if (!context_lost_) group_.reset();
}

}  // namespace kwb
