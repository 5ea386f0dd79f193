// An op's tensors at one shape and dtype on the GPU, for tests that launch variants by hand: the
// inputs drawn once (seeded, each tensor's own init, as the harness draws them), the outputs left
// as cudaMalloc gives them, one stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/prepare/device_fill.hpp"

namespace kwb::test {

class OpTensors {
 public:
  OpTensors(const std::string& op, Shape shape, DType dtype, std::uint64_t seed = 2026)
      : shape_(std::move(shape)), dtype_(dtype) {
    cuda_check(cudaSetDevice(0), "cudaSetDevice");
    cuda_check(cudaStreamCreate(&stream_), "stream");
    specs_ = Registry::instance().find_op(op)->tensors(shape_, dtype_);
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      void* p = nullptr;
      cuda_check(cudaMalloc(&p, static_cast<std::size_t>(bytes_of(specs_[i], dtype_))), "cudaMalloc");
      tensors_.push_back(p);
      if (!specs_[i].is_output)
        cuda_check(fill_tensor(p, specs_[i].numel(), specs_[i].elem_type(dtype_), specs_[i].init, seed, i, stream_),
                   "fill input");
    }
  }
  OpTensors(const OpTensors&) = delete;
  OpTensors& operator=(const OpTensors&) = delete;
  ~OpTensors() {
    for (void* p : tensors_) cudaFree(p);
    cudaStreamDestroy(stream_);
  }

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  cudaStream_t stream() const { return stream_; }

  // What a variant's prepare() and launch() take; `tunables` and the object must outlive it.
  LaunchArgs args(void* workspace, const TunableValues& tunables) {
    return LaunchArgs{shape_, dtype_, tensors_, workspace, stream_, nullptr, &tunables, &specs_};
  }

  // Fills every output with 0xff bytes (NaN in every float type): an element a launch leaves
  // unwritten then reads as NaN, not as an earlier launch's answer.
  void poison_outputs() {
    for (std::size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].is_output)
        cuda_check(cudaMemsetAsync(tensors_[i], 0xff, static_cast<std::size_t>(bytes_of(specs_[i], dtype_)), stream_),
                   "poison an output");
  }

  // Every output's bytes, in the op's order, after the stream's work so far.
  std::vector<std::vector<unsigned char>> outputs() {
    cuda_check(cudaStreamSynchronize(stream_), "run");
    std::vector<std::vector<unsigned char>> out;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (!specs_[i].is_output) continue;
      out.emplace_back(static_cast<std::size_t>(bytes_of(specs_[i], dtype_)));
      cuda_check(cudaMemcpy(out.back().data(), tensors_[i], out.back().size(), cudaMemcpyDeviceToHost), "copy out");
    }
    return out;
  }

 private:
  Shape shape_;
  DType dtype_;
  cudaStream_t stream_ = nullptr;
  std::vector<TensorSpec> specs_;
  std::vector<void*> tensors_;
};

}  // namespace kwb::test
