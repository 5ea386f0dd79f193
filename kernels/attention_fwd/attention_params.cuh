// What every attention_fwd kernel reads from a case: the dims, the mask (causal, sliding window,
// as reference/attention.hpp defines it) and the logit transform (scale, soft-cap), on host and
// device alike, so that the baseline's softmax and the flash kernels mask identically.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "harness/catalogue/registry.hpp"

namespace kwb {

struct AttentionParams {
  std::int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
  std::int64_t window = 0;  // 0: none
  float softcap = 0;        // 0: none
  float scale = 0;          // 1 / sqrt(head_dim)

  static AttentionParams of(const Shape& s) {
    AttentionParams p;
    p.batch = s.at("batch");
    p.seq = s.at("seq");
    p.heads = s.at("heads");
    p.kv_heads = s.at("kv_heads");
    p.head_dim = s.at("head_dim");
    p.causal = s.choice("causal") == "1";
    p.window = s.at("window");
    p.softcap = std::stof(s.choice("softcap"));
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
    return p;
  }

  // Keys query i sees: [first_key(i), end_key(i)).
  __host__ __device__ std::int64_t first_key(std::int64_t i) const {
    return window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;
  }
  __host__ __device__ std::int64_t end_key(std::int64_t i) const {
    std::int64_t end = seq;
    if (causal) end = i + 1;
    else if (window > 0) end = i + window;
    return end < seq ? end : seq;
  }
  __host__ __device__ bool visible(std::int64_t i, std::int64_t j) const {
    return j >= first_key(i) && j < end_key(i);
  }
};

}  // namespace kwb
