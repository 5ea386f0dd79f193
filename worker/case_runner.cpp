// One case, step by step: refuse or skip, prepare the group, verify, time, record.
#include "worker/case_runner.hpp"

#include <nvtx3/nvtx3.hpp>

#include <cmath>
#include <fmt/format.h>

#include "catalogue/cuda_check.hpp"
#include "prepare/device_fill.hpp"
#include "catalogue/registry.hpp"
#include "verify/verify.hpp"

namespace kwb {

struct NvtxDomain {
  static constexpr const char* name{"kwb"};
};
using ScopedRange = nvtx3::scoped_range_in<NvtxDomain>;

namespace {

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) {
    if (n) cuda_check(cudaMalloc(&ptr, n), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Consecutive runs of sorted row indices, so gathers are a few large copies.
std::vector<std::pair<std::int64_t, std::int64_t>> row_runs(const std::vector<std::int64_t>& rows) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // (first row, count)
  for (auto r : rows) {
    if (!runs.empty() && runs.back().first + runs.back().second == r)
      ++runs.back().second;
    else
      runs.push_back({r, 1});
  }
  return runs;
}

// Copies the given rows of a row-major device tensor to the host, packed.
std::vector<unsigned char> gather_rows(const void* device, std::int64_t row_bytes,
                                       const std::vector<std::int64_t>& rows) {
  std::vector<unsigned char> host(rows.size() * row_bytes);
  std::size_t offset = 0;
  for (auto [first, count] : row_runs(rows)) {
    cuda_check(cudaMemcpy(host.data() + offset, static_cast<const char*>(device) + first * row_bytes,
                          count * row_bytes, cudaMemcpyDeviceToHost),
               "copy rows to host");
    offset += count * row_bytes;
  }
  return host;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

// Inputs on the device, the rows to verify and the oracle's answer for them.
struct CaseRunner::Group {
  std::string key;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;  // one per tensor, outputs included
  bool by_rows = false;                                // the op has a row axis: rows may be sampled
  std::vector<std::int64_t> rows;                      // rows to verify (all, or a sample)
  std::int64_t rows_total = 1;
  std::vector<HostTensor> expected;                    // one per output, packed rows

  // What verification reads of a tensor: its sampled rows if it is row-aligned, else all of it.
  bool gathers(const TensorSpec& t) const { return by_rows && t.row_aligned; }
  std::int64_t verified_elements(const TensorSpec& t) const {
    return gathers(t) ? t.numel() / rows_total * static_cast<std::int64_t>(rows.size()) : t.numel();
  }
  std::vector<unsigned char> copy_to_host(const void* device, const TensorSpec& t, std::size_t esize) const {
    if (gathers(t)) return gather_rows(device, t.numel() / rows_total * esize, rows);
    std::vector<unsigned char> host(t.numel() * esize);
    cuda_check(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost), "copy tensor to host");
    return host;
  }
};

std::string nvtx_case_name(const std::string& op, const std::string& variant, DType dtype,
                           const Shape& shape) {
  return op + ":" + variant + ":" + std::string(to_string(dtype)) + ":" + shape.to_compact();
}

CaseRunner::CaseRunner(TimerKind timer, std::size_t l2_bytes) : timer_(timer), l2_bytes_(l2_bytes) {
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

CaseRunner::~CaseRunner() {
  group_.reset();
  flusher_.reset();
  if (stream_ && !context_lost_) cudaStreamDestroy(stream_);
}

CaseRecord record_for(const CaseRequest& req) {
  CaseRecord rec;
  rec.index = req.index;
  rec.op = req.op;
  rec.variant = req.variant;
  rec.dtype = req.dtype;
  rec.shape = req.shape;
  rec.nvtx_range = nvtx_case_name(req.op, req.variant, req.dtype, req.shape);
  return rec;
}

CaseRecord CaseRunner::run(const CaseRequest& req) {
  CaseRecord rec = record_for(req);
  auto skip = [&](std::string reason) {
    rec.disposition = Disposition::skipped;
    rec.reason = std::move(reason);
    return rec;
  };

  const auto& registry = Registry::instance();
  const Op* op = registry.find_op(req.op);
  const Variant* variant = registry.find_variant(req.op, req.variant);
  if (!op || !variant) return skip("not in this build's registry");
  rec.role = variant->role;
  if (variant->test_only && !req.include_test_variants)
    return skip("test-only variant (use --include-test-variants)");
  if (std::find(op->dtypes.begin(), op->dtypes.end(), req.dtype) == op->dtypes.end())
    return skip(std::string("the op does not define ") + std::string(to_string(req.dtype)));
  if (op->invalid)
    if (auto why = op->invalid(req.shape)) return skip(*why);
  if (variant->refuse)
    if (auto why = variant->refuse(req.shape, req.dtype)) return skip(*why);

  ScopedRange case_range{rec.nvtx_range};
  std::string phase = "prepare";
  try {
    // 1. Memory: skip what cannot fit before allocating anything.
    const auto specs = op->tensors(req.shape, req.dtype);
    const std::size_t esize = dtype_size(req.dtype);
    const std::size_t workspace = variant->workspace_bytes ? variant->workspace_bytes(req.shape, req.dtype) : 0;
    const std::string key = req.op + "|" + std::string(to_string(req.dtype)) + "|" +
                            req.shape.to_assignments() + "|" + std::to_string(req.seed);
    double needed = static_cast<double>(workspace);
    if (!group_ || group_->key != key) {
      group_.reset();  // free the previous group's tensors before measuring the new need
      for (const auto& t : specs) needed += static_cast<double>(t.numel() * esize);
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (needed > 0.95 * static_cast<double>(free_bytes))
      return skip(fmt::format("needs {} of device memory, {} free of {}", gib(needed),
                              gib(static_cast<double>(free_bytes)), gib(static_cast<double>(total_bytes))));
    if (req.mode == Mode::cold && (!flusher_ || flusher_->kind() != req.flush))
      flusher_ = std::make_unique<L2Flusher>(l2_bytes_, req.flush);

    // 2. Inputs and oracle, once per group.
    if (!group_) group_ = prepare_group(*op, req, specs, key);

    // 3. Verify on poisoned outputs.
    DeviceBuffer scratch(workspace);
    std::vector<void*> ptrs;
    for (auto& b : group_->buffers) ptrs.push_back(b->ptr);
    const LaunchArgs args{req.shape, req.dtype, ptrs, scratch.ptr, stream_};
    phase = "verify";
    {
      ScopedRange r{"verify"};
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs[i].is_output) cuda_check(poison(ptrs[i], group_->buffers[i]->bytes, stream_), "poison outputs");
      variant->launch(args);
      cuda_check_launch("launch (verify)");
      cuda_check(cudaStreamSynchronize(stream_), "synchronize after verify launch");
    }
    rec.verify = verify_outputs(*op, req, specs);
    if (!rec.verify->passed) {
      const auto& v = *rec.verify;
      rec.disposition = Disposition::failed;
      rec.reason = fmt::format(
          "verification failed: {} of {} elements outside atol {:g} + rtol {:g}*|ref|, {} non-finite, "
          "{} unwritten{}; max abs err {:.3g}, rel L2 {:.3g}",
          v.mismatches, v.elements_checked, v.atol, v.rtol, v.nonfinite_mismatches, v.unwritten,
          v.all_zero ? ", output all zeros" : "", v.max_abs_err, v.rel_l2_err);
      return rec;  // a wrong kernel's speed means nothing: not timed
    }

    // 4. Time.
    phase = "measure";
    ScopedRange r{"measure"};
    MeasureSettings settings;
    settings.mode = req.mode;
    settings.rule = *stopping_preset(req.preset);
    rec.timing = measure([&](cudaStream_t s) {
      variant->launch(LaunchArgs{req.shape, req.dtype, ptrs, scratch.ptr, s});
    }, stream_, settings, timer_, flusher_.get());
    rec.disposition = Disposition::passed;
  } catch (const CudaError& e) {
    rec.disposition = Disposition::failed;
    rec.reason = std::string("CUDA error during ") + phase + ": " + e.what();
    // Faults (illegal address, assert, launch failure) are sticky: the context is gone.
    const cudaError_t sticky = cudaDeviceSynchronize();
    context_lost_ = sticky != cudaSuccess || e.code == cudaErrorIllegalAddress ||
                    e.code == cudaErrorAssert || e.code == cudaErrorLaunchFailure;
    if (!context_lost_) group_.reset();
  } catch (const std::exception& e) {
    rec.disposition = Disposition::failed;
    rec.reason = std::string("error during ") + phase + ": " + e.what();
  }
  return rec;
}

// Fills the inputs on the device, picks the rows to verify, and runs the oracle on just those
// rows (a sub-shape whose row axis is the number of sampled rows).
std::unique_ptr<CaseRunner::Group> CaseRunner::prepare_group(const Op& op, const CaseRequest& req,
                                                             const std::vector<TensorSpec>& specs,
                                                             std::string key) {
  ScopedRange range{"prepare inputs and oracle"};
  const std::size_t esize = dtype_size(req.dtype);
  auto g = std::make_unique<Group>();
  g->key = std::move(key);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& t = specs[i];
    g->buffers.push_back(std::make_unique<DeviceBuffer>(t.numel() * esize));
    if (!t.is_output)
      cuda_check(fill_random(g->buffers[i]->ptr, t.numel(), req.dtype, t.init, req.seed, i, stream_),
                 "fill inputs");
  }
  cuda_check(cudaStreamSynchronize(stream_), "synchronize after filling inputs");

  g->by_rows = !op.row_axis.empty();
  Shape sub = req.shape;
  if (g->by_rows) {
    g->rows_total = req.shape.at(op.row_axis);
    g->rows = rows_to_verify(g->rows_total, specs.back().numel() / std::max<std::int64_t>(g->rows_total, 1));
    for (auto& [name, value] : sub.axes)
      if (name == op.row_axis) value = static_cast<std::int64_t>(g->rows.size());
  } else {
    g->rows = {0};
  }

  std::vector<HostTensor> host_inputs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& t = specs[i];
    const std::int64_t count = g->verified_elements(t);
    HostTensor h{t.name, t.dims, std::vector<double>(count, std::nan(""))};
    if (g->gathers(t)) h.dims[0] = static_cast<std::int64_t>(g->rows.size());
    if (t.is_output) {
      g->expected.push_back(std::move(h));
      continue;
    }
    const auto raw = g->copy_to_host(g->buffers[i]->ptr, t, esize);
    decode_dtype(raw.data(), req.dtype, count, h.values.data());
    host_inputs.push_back(std::move(h));
  }
  op.oracle(sub, host_inputs, g->expected);
  return g;
}

// Compares the outputs the verify launch wrote with the oracle's, on the group's rows.
VerifyResult CaseRunner::verify_outputs(const Op& op, const CaseRequest& req,
                                        const std::vector<TensorSpec>& specs) {
  Verifier verifier(req.dtype, op.tolerance(req.dtype));
  std::size_t out_index = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].is_output) continue;
    const auto got = group_->copy_to_host(group_->buffers[i]->ptr, specs[i], dtype_size(req.dtype));
    verifier.compare(specs[i].name, got, group_->expected[out_index++].values);
  }
  return verifier.finish(group_->by_rows ? static_cast<std::int64_t>(group_->rows.size()) : 1,
                         group_->rows_total);
}

}  // namespace kwb
