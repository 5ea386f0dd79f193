#include "reference/paged_attention_decode_lengths_gpu.hpp"

#include <cstdint>

#include "harness/catalogue/cuda_check.hpp"
#include "reference/paged_attention_decode.hpp"

namespace kwb::ref {
namespace {

__global__ void context_lengths(std::int32_t* lengths, std::int64_t batch, std::int64_t context, std::int64_t q_len,
                                bool ragged) {
  const std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (b < batch) lengths[b] = static_cast<std::int32_t>(paged_decode::context_length(b, context, q_len, ragged));
}

}  // namespace

void paged_decode_derive_lengths(const LaunchArgs& args) {
  const auto a = paged_decode::PagedDecodeAxes::of(args.shape);
  const unsigned blocks = static_cast<unsigned>((a.batch + 255) / 256);
  context_lengths<<<blocks, 256, 0, args.stream>>>(args.tensor<std::int32_t>("context_lens"), a.batch, a.context,
                                                   a.q_len, a.ragged);
  cuda_check(cudaGetLastError(), "paged_attention_decode: derive context_lens");
}

}  // namespace kwb::ref
