// Host side of the fused QK-norm variants (qk_norm_fwd and qk_norm_bwd): from a launch's element
// type, head_dim and pointers to the kernel instantiation of its head-vector plan, and the forward
// variants' grid, launch and refusal (they differ only in head vectors per thread group).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/qk_norm_fwd/head_vector_plan.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {

// The low address bits of the tensors together: a plan's access width must keep every one of
// them aligned.
inline std::uintptr_t pointer_bits(std::initializer_list<const void*> tensors) {
  std::uintptr_t bits = 0;
  for (const void* t : tensors) bits |= reinterpret_cast<std::uintptr_t>(t);
  return bits;
}

// Plans the head vectors of head_dim elements of T (accesses aligned for `bits`, pointer_bits of
// the tensors the kernel reads and writes) and calls launch_plan(elems, slots, plan) with elems
// (E) and slots (A) as std::integral_constant, so that the kernel holds the vector in registers.
// Nothing is launched when there is no plan: refuse() has turned such shapes away before launch.
template <class T, class LaunchPlan>
void with_head_vector_plan(std::int64_t head_dim, std::uintptr_t bits, LaunchPlan&& launch_plan) {
  const auto plan = plan_head_vectors(head_dim, sizeof(T), bits);
  if (!plan) return;
  auto with_slots = [&](auto elems) {
    switch (plan->accesses) {
      case 1: launch_plan(elems, std::integral_constant<int, 1>{}, *plan); break;
      case 2: launch_plan(elems, std::integral_constant<int, 2>{}, *plan); break;
      case 4: launch_plan(elems, std::integral_constant<int, 4>{}, *plan); break;
      default: launch_plan(elems, std::integral_constant<int, 8>{}, *plan); break;
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
}

// Forward grid: `lanes` threads per group, `heads_per_group` head vectors per group.
inline std::int64_t qk_norm_fwd_blocks(std::int64_t all_vectors, int lanes, int heads_per_group) {
  const std::int64_t heads_per_block = std::int64_t{kQkThreads / lanes} * heads_per_group;
  return (all_vectors + heads_per_block - 1) / heads_per_block;
}

// Launches a forward kernel (q, k, q_weight, k_weight, q_out, k_out, q_vectors, all_vectors,
// head_dim, lanes, eps) over all Q and K head vectors. kernel_for(elems, slots) returns the
// kernel instantiation for that plan.
template <class T, int HeadsPerGroup, class KernelFor>
void launch_qk_norm_fwd(const LaunchArgs& a, KernelFor&& kernel_for) {
  const QkNormDims d = QkNormDims::of(a.shape);
  const T* q = a.tensor<const T>("q");
  const T* k = a.tensor<const T>("k");
  const T* q_weight = a.tensor<const T>("q_weight");
  const T* k_weight = a.tensor<const T>("k_weight");
  T* q_out = a.tensor<T>("q_out");
  T* k_out = a.tensor<T>("k_out");
  const std::uintptr_t bits = pointer_bits({q, k, q_weight, k_weight, q_out, k_out});
  with_head_vector_plan<T>(d.head_dim, bits, [&](auto elems, auto slots, const HeadVectorPlan& plan) {
    const std::int64_t all = d.q_vectors() + d.k_vectors();
    const auto kernel = kernel_for(elems, slots);
    kernel<<<static_cast<unsigned>(qk_norm_fwd_blocks(all, plan.lanes, HeadsPerGroup)), kQkThreads, 0, a.stream>>>(
        q, k, q_weight, k_weight, q_out, k_out, d.q_vectors(), all, static_cast<int>(d.head_dim), plan.lanes,
        static_cast<float>(kQkNormEps));
  });
}

template <int HeadsPerGroup>
std::optional<std::string> refuse_qk_norm_fwd(const Shape& s, DType dtype) {
  const QkNormDims d = QkNormDims::of(s);
  const auto plan = plan_head_vectors(d.head_dim, dtype_size(dtype));
  if (!plan) return head_dim_reach_reason();
  const std::int64_t all = d.q_vectors() + d.k_vectors();
  if (qk_norm_fwd_blocks(all, plan->lanes, HeadsPerGroup) > 2147483647)
    return "more head vectors than one grid's x dimension reaches";
  return std::nullopt;
}

}  // namespace kwb
