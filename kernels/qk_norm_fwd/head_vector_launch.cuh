// Host side of the fused QK-norm variants (qk_norm_fwd and qk_norm_bwd): from a launch's dtype,
// head_dim and pointers to the kernel instantiation of its head-vector plan, and the forward
// variants' grid, launch and refusal (they differ only in head vectors per thread group).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/qk_norm_fwd/head_vector_plan.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {

// The low address bits of the first `count` tensors together: a plan's access width must keep
// every one of them aligned.
inline std::uintptr_t tensor_pointer_bits(const LaunchArgs& a, int count) {
  std::uintptr_t bits = 0;
  for (int i = 0; i < count; ++i) bits |= reinterpret_cast<std::uintptr_t>(a.tensors[i]);
  return bits;
}

// Plans the launch's head vectors (accesses aligned for its first `pointer_tensors` tensors) and
// calls launch_plan(T{}, elems, slots, plan) with elems (E) and slots (A) as
// std::integral_constant, so that the kernel holds the vector in registers. Nothing is launched
// when there is no plan: refuse() has turned such shapes away before launch.
template <class LaunchPlan>
void dispatch_head_vector_plan(const LaunchArgs& a, int pointer_tensors, LaunchPlan&& launch_plan) {
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto plan = plan_head_vectors(a.shape.at("head_dim"), sizeof(T), tensor_pointer_bits(a, pointer_tensors));
    if (!plan) return;
    auto with_slots = [&](auto elems) {
      switch (plan->accesses) {
        case 1: launch_plan(tag, elems, std::integral_constant<int, 1>{}, *plan); break;
        case 2: launch_plan(tag, elems, std::integral_constant<int, 2>{}, *plan); break;
        case 4: launch_plan(tag, elems, std::integral_constant<int, 4>{}, *plan); break;
        default: launch_plan(tag, elems, std::integral_constant<int, 8>{}, *plan); break;
      }
    };
    switch (plan->elems) {
      case 1: with_slots(std::integral_constant<int, 1>{}); break;
      case 2: with_slots(std::integral_constant<int, 2>{}); break;
      case 4: with_slots(std::integral_constant<int, 4>{}); break;
      default:
        if constexpr (sizeof(T) <= 2) with_slots(std::integral_constant<int, 8>{});
        break;
    }
  });
}

// Forward grid: `lanes` threads per group, `heads_per_group` head vectors per group.
inline std::int64_t qk_norm_fwd_blocks(std::int64_t all_vectors, int lanes, int heads_per_group) {
  const std::int64_t heads_per_block = std::int64_t{kQkThreads / lanes} * heads_per_group;
  return (all_vectors + heads_per_block - 1) / heads_per_block;
}

// Launches a forward kernel (q, k, q_weight, k_weight, q_out, k_out, q_vectors, all_vectors,
// head_dim, lanes, eps) over all Q and K head vectors. kernel_for(T{}, elems, slots) returns the
// kernel instantiation for that plan.
template <int HeadsPerGroup, class KernelFor>
void launch_qk_norm_fwd(const LaunchArgs& a, KernelFor&& kernel_for) {
  dispatch_head_vector_plan(a, 6, [&](auto tag, auto elems, auto slots, const HeadVectorPlan& plan) {
    using T = decltype(tag);
    const QkNormDims d{a.shape.at("tokens"), a.shape.at("heads"), a.shape.at("kv_heads"), a.shape.at("head_dim")};
    const std::int64_t all = d.q_vectors() + d.k_vectors();
    const auto kernel = kernel_for(tag, elems, slots);
    kernel<<<static_cast<unsigned>(qk_norm_fwd_blocks(all, plan.lanes, HeadsPerGroup)), kQkThreads, 0, a.stream>>>(
        static_cast<const T*>(a.tensors[0]), static_cast<const T*>(a.tensors[1]),
        static_cast<const T*>(a.tensors[2]), static_cast<const T*>(a.tensors[3]), static_cast<T*>(a.tensors[4]),
        static_cast<T*>(a.tensors[5]), d.q_vectors(), all, static_cast<int>(d.head_dim), plan.lanes,
        static_cast<float>(kQkNormEps));
  });
}

template <int HeadsPerGroup>
std::optional<std::string> refuse_qk_norm_fwd(const Shape& s, DType dtype) {
  const auto plan = plan_head_vectors(s.at("head_dim"), dtype_size(dtype));
  if (!plan) return head_dim_reach_reason();
  const std::int64_t all = s.at("tokens") * (s.at("heads") + s.at("kv_heads"));
  if (qk_norm_fwd_blocks(all, plan->lanes, HeadsPerGroup) > 2147483647)
    return "more head vectors than one grid's x dimension reaches";
  return std::nullopt;
}

}  // namespace kwb
