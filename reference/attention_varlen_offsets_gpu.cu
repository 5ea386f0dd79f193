#include "reference/attention_varlen_offsets_gpu.hpp"

#include <cstdint>

#include "harness/catalogue/cuda_check.hpp"
#include "reference/attention_varlen.hpp"

namespace kwb::ref {
namespace {

// One thread: the running sum over a batch of at most 65535 sequences.
__global__ void sequence_offsets(std::int32_t* offsets, std::int64_t batch, std::int64_t seq, varlen::Lengths kind) {
  std::int64_t at = 0;
  offsets[0] = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    at += varlen::sequence_length(b, seq, kind);
    offsets[b + 1] = static_cast<std::int32_t>(at);
  }
}

}  // namespace

void attention_varlen_derive_offsets(const LaunchArgs& args) {
  const auto a = varlen::VarlenAxes::of(args.shape);
  sequence_offsets<<<1, 1, 0, args.stream>>>(args.tensor<std::int32_t>("cu_seqlens"), a.attention.batch,
                                              a.attention.seq, a.lengths);
  cuda_check(cudaGetLastError(), "attention_varlen_fwd: derive cu_seqlens");
}

}  // namespace kwb::ref
