// The host side of norm_backward.cuh's kernel: the launch plan (vectors per thread, groups,
// ring stages), the tunables and their defaults, the workspace (partials and, for rows by demand,
// the row counter), and the variants' prepare and launch callbacks (two kernels: the row kernel,
// then the deterministic column sums of column_partials.cuh).
// Below it (namespace register_rows), the same two launches for the kernels that hold a row in
// registers (layernorm_bwd fused_v1, v2, v3): their grid, workspace, prepare and launch, one copy
// for the three; each variant only picks its kernel for the row length.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/column_partials.cuh"
#include "kernels/common/norm_backward.cuh"
#include "kernels/common/partial_layout.hpp"
#include "kernels/common/row_in_registers.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb::norm_backward {

struct Plan {
  int vector_bytes = 16;
  int vector_elems = 8;  // V
  int vectors_per_thread = 2;  // VPT
  int tpr = 32;
  int groups = 1;
  int stages = 3;
  std::size_t smem_bytes = 0;  // the ring (dynamic shared memory)
};

// The launch for a row of `cols` elements of `elem_bytes`, from the wanted vectors per thread
// (raised until a row fits a group), threads per CTA and stages (lowered until the ring fits).
// None: odd rows of 16-bit elements, or rows over 4 vectors x 1024 threads (16384 bf16 columns).
inline std::optional<Plan> plan_for(std::int64_t cols, int elem_bytes, int accumulators, int want_vpt,
                                    int want_cta_threads, int want_stages) {
  const std::int64_t row_bytes = cols * elem_bytes;
  Plan p;
  p.vector_bytes = row_bytes % 16 == 0 ? 16 : row_bytes % 8 == 0 ? 8 : row_bytes % 4 == 0 ? 4 : 0;
  if (p.vector_bytes == 0 || cols < 1) return std::nullopt;
  p.vector_elems = p.vector_bytes / elem_bytes;
  const std::int64_t nvec = cols / p.vector_elems;
  p.vectors_per_thread = std::clamp(want_vpt, 1, 4);
  auto threads = [&] { return (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread; };
  auto max_threads = [&] { return max_threads_for(p.vector_elems * p.vectors_per_thread, accumulators); };
  while (threads() > max_threads() && p.vectors_per_thread < 4) p.vectors_per_thread *= 2;
  if (threads() > max_threads()) return std::nullopt;
  p.tpr = static_cast<int>((threads() + 31) / 32 * 32);
  p.groups = std::max(1, std::min(want_cta_threads, max_threads()) / p.tpr);
  if (p.tpr > 32) p.groups = std::min(p.groups, kMaxGroupsNamed);
  p.stages = std::clamp(want_stages, 1, kMaxStages);
  auto smem = [&] {
    return static_cast<std::size_t>(p.groups) * p.stages *
           ring_stage_bytes(p.vectors_per_thread, p.tpr, p.vector_bytes, accumulators);
  };
  while (smem() > kSmemLimit && p.groups > 1) --p.groups;
  while (smem() > kSmemLimit && p.stages > 1) --p.stages;
  if (smem() > kSmemLimit) return std::nullopt;
  p.smem_bytes = smem();
  return p;
}

// Calls fn(kernel) with the instantiation for the plan's V and VPT.
template <class Norm, class T, Schedule S, class Fn>
void with_kernel(const Plan& p, Fn&& fn) {
  constexpr int E16 = 16 / static_cast<int>(sizeof(T));
  auto by_vpt = [&](auto v_tag) {
    constexpr int V = decltype(v_tag)::value;
    if constexpr (V >= 1) {
      switch (p.vectors_per_thread) {
        case 1: fn(norm_backward_kernel<Norm, T, V, 1, S>); break;
        case 2: fn(norm_backward_kernel<Norm, T, V, 2, S>); break;
        default: fn(norm_backward_kernel<Norm, T, V, 4, S>); break;
      }
    }
  };
  if (p.vector_bytes == 16) by_vpt(std::integral_constant<int, E16>{});
  else if (p.vector_bytes == 8) by_vpt(std::integral_constant<int, E16 / 2>{});
  else by_vpt(std::integral_constant<int, E16 / 4>{});
}

// CTAs of launch 1 for any of the kernels here: every resident CTA of one wave (at `threads` and
// `smem_bytes` per CTA), at most one per `rows_per_cta` rows and kMaxParts, at least one.
// Occupancy queries: call outside timing (prepare()).
template <class Kernel>
int one_wave(Kernel kernel, int threads, std::size_t smem_bytes, std::int64_t rows, int rows_per_cta) {
  int device = 0, sms = 1, per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes);
  const std::int64_t wave = std::int64_t{sms} * std::max(1, per_sm);
  return static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>({wave, (rows + rows_per_cta - 1) / rows_per_cta, kMaxParts})));
}

// CTAs of norm_backward_kernel's launch 1 (one_wave). Sets the kernel's dynamic shared memory limit.
template <class Kernel>
int grid_for(Kernel kernel, const Plan& p, std::int64_t rows) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.smem_bytes));
  return one_wave(kernel, p.tpr * p.groups, p.smem_bytes, rows, p.groups);
}

// The workspace: [the dynamic schedule's row counter, padded to kCounterBytes] then the partials.
inline constexpr std::size_t kCounterBytes = 256;
inline std::size_t workspace_bytes(const RowsCols& s, int accumulators, Schedule schedule = Schedule::kStatic) {
  return (schedule == Schedule::kDynamic ? kCounterBytes : 0) +
         static_cast<std::size_t>(std::min<std::int64_t>(s.rows, kMaxParts)) * accumulators *
             static_cast<std::size_t>(padded_cols(s.cols)) * sizeof(float);
}

// ---- The variant's callbacks: tensors x, weight, dy, dx, dweight[, dbias] by name ------------

inline std::vector<Tunable> tunables(Schedule schedule = Schedule::kStatic) {
  Tunable stages{"stages", {2, 3, 4},
                 "row buffers per group (lowered until the ring fits): rows in flight = stages - 1 while one is reduced"};
  if (schedule == Schedule::kStatic) {  // the dynamic schedule's default is the first value, 2
    stages.shape_default = [](const Shape& s, DType d) {
      return std::int64_t{default_stages(RowsCols::of(s).cols, dtype_size(d), false)};
    };
    stages.default_rule = "2 up to 32 KB of x and dy per row, else 3";
  }
  return {{"vectors_per_thread", {2, 1, 4}, "16-byte vectors of a row per thread (raised when a row needs it)"},
          {"cta_threads", {512, 1024, 256}, "threads per CTA: row groups of a CTA = this / threads per row"},
          std::move(stages)};
}

template <class Norm, Schedule S = Schedule::kStatic>
std::optional<Plan> plan_for(const LaunchArgs& a, int elem_bytes) {
  auto value = [&](const char* name, int fallback) {
    return a.tunables ? static_cast<int>(a.tunable(name)) : fallback;
  };
  const std::int64_t cols = RowsCols::of(a.shape).cols;
  return plan_for(cols, elem_bytes, Norm::kAccumulators, value("vectors_per_thread", 2), value("cta_threads", 512),
                  value("stages", default_stages(cols, elem_bytes, S == Schedule::kDynamic)));
}

// Independent of the tunables: plan_for only raises VPT and lowers groups and stages. The dynamic
// schedule's row ring holds 32-bit row indices.
template <class Norm, Schedule S = Schedule::kStatic>
std::optional<std::string> refuse(const Shape& s, DType dtype, const char* reason) {
  const auto [rows, cols] = RowsCols::of(s);
  if (S == Schedule::kDynamic && rows > (std::int64_t{1} << 30))
    return std::string("more than 2^30 rows: the dynamic schedule counts rows in 32 bits; use the statically scheduled variant");
  if (plan_for(cols, static_cast<int>(dtype_size(dtype)), Norm::kAccumulators, 2, 512, 3))
    return std::nullopt;
  return std::string(reason);
}

struct State {
  Plan plan;
  int parts = 0;
};

// Where the workspace keeps the dynamic schedule's row counter (null for the static one) and the partials.
template <Schedule S>
int* row_counter(void* workspace) {
  return S == Schedule::kDynamic ? static_cast<int*>(workspace) : nullptr;
}
template <Schedule S>
float* partials_of(void* workspace) {
  return reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + (S == Schedule::kDynamic ? kCounterBytes : 0));
}

// Plan, kernel attribute and occupancy query once per case, outside timing. The dynamic schedule's
// counter starts at zero here; every launch's second kernel sets it back to zero (launch below).
template <class Norm, Schedule S = Schedule::kStatic>
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  auto state = std::make_shared<State>();
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto plan = plan_for<Norm, S>(a, sizeof(T));
    if (!plan) return;  // refused
    state->plan = *plan;
    const std::int64_t rows = RowsCols::of(a.shape).rows;
    with_kernel<Norm, T, S>(*plan, [&](auto kernel) { state->parts = grid_for(kernel, *plan, rows); });
  });
  if (int* counter = row_counter<S>(a.workspace)) cudaMemsetAsync(counter, 0, sizeof(int), a.stream);
  return state;
}

template <class Norm, Schedule S = Schedule::kStatic>
void launch(const LaunchArgs& a, double eps) {
  std::shared_ptr<void> own;  // only if the harness did not call prepare()
  if (!a.state) own = prepare<Norm, S>(a);
  const auto& st = *static_cast<const State*>(a.state ? a.state : own.get());
  if (st.parts == 0) return;  // refused before launch
  const RowsCols shape = RowsCols::of(a.shape);
  const auto cols = static_cast<int>(shape.cols);
  float* partials = partials_of<S>(a.workspace);
  int* counter = row_counter<S>(a.workspace);
  const PartialLayout layout{st.plan.tpr, st.plan.vectors_per_thread, st.plan.vector_elems, cols,
                             Norm::kAccumulators};
  // The dtype is dispatched here, not at registration: the column-sum lambda below must stay in
  // this function (its kernel's name is the enclosing function's), one instance for every dtype.
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const Args args{a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<const T>("dy"), a.tensor<T>("dx"),
                    partials, counter, shape.rows, cols, st.plan.tpr, st.plan.stages, static_cast<float>(eps)};
    with_kernel<Norm, T, S>(st.plan, [&](auto kernel) {
      kernel<<<st.parts, st.plan.tpr * st.plan.groups, st.plan.smem_bytes, a.stream>>>(args);
    });
  });
  float* dweight = a.tensor<float>("dweight");
  float* dbias = Norm::kAccumulators == 2 ? a.tensor<float>("dbias") : nullptr;
  // The column sums start after the first kernel has completed (sum_partial_columns waits for
  // it), so no CTA of it still takes rows when position 0 zeroes the counter for the next launch.
  sum_partial_columns(partials, st.parts, layout.width(), a.stream,
                      [=] __device__(std::int64_t position, float total) {
                        int accumulator, column;
                        layout.column_of(static_cast<int>(position), accumulator, column);
                        if (column >= 0) (accumulator == 0 ? dweight : dbias)[column] = total;
                        if (S == Schedule::kDynamic && position == 0) *counter = 0;
                      });
}

// ---- Kernels that hold a row in registers (layernorm_bwd fused_v1, v2, v3) ----------------------
// Launch 1 is kernel(x, weight, dy, dx, partials, rows, cols, eps): CTA b leaves row b of the
// partials (CTAs, 2, cols), its dweight sums then its dbias sums; launch 2 adds them per column.
namespace register_rows {

template <class T>
using Kernel = void (*)(const T*, const T*, const T*, T*, float*, std::int64_t, int, float);

// A variant's kernel for the row length and how it is launched: what the variant's pick returns.
template <class T>
struct Pick {
  Kernel<T> kernel = nullptr;  // none: the variant refuses the row length
  int threads = 0;             // per CTA
  int rows_per_cta = 1;        // row groups of a CTA, each on its own row at a time
  std::size_t smem_bytes = 0;  // dynamic shared memory per CTA
};

// CTAs of launch 1: one wave (one_wave). When cols is not a multiple of E, also a multiple of E,
// so that every row a CTA (a row group) takes has the same split: rounded down, since a CTA past
// the wave would wait for a whole CTA's rows to finish (doubling the time), or up to E when there
// are fewer rows (the extra CTAs write zero partials).
template <class T>
int grid_for(const Pick<T>& p, std::int64_t rows, int cols) {
  constexpr int E = RowSplit<T>::E;
  const int ctas = one_wave(p.kernel, p.threads, p.smem_bytes, rows, p.rows_per_cta);
  if (cols % E == 0) return ctas;  // every row starts on a 16-byte boundary
  return ctas >= E ? ctas / E * E : E;
}

// The partials of up to kMaxParts CTAs: at least grid_for's (rows rounded up to a multiple of 8 >= E).
inline std::size_t workspace_bytes(const RowsCols& s) {
  const std::int64_t parts = std::min<std::int64_t>((s.rows + 7) / 8 * 8, kMaxParts);
  return static_cast<std::size_t>(parts) * 2 * static_cast<std::size_t>(s.cols) * sizeof(float);
}

struct State {
  int parts = 0;  // CTAs of launch 1 (0: refused)
};

// The grid of launch 1 takes occupancy queries: done once per case, outside timing (under the
// CUDA-events timer, host work before the first launch would otherwise be timed).
// pick: []<class T>(const LaunchArgs&) -> Pick<T>, the variant's choice for the case.
template <class PickFn>
std::shared_ptr<void> prepare(const LaunchArgs& a, PickFn pick) {
  auto state = std::make_shared<State>();
  const RowsCols s = RowsCols::of(a.shape);
  dispatch_dtype(a.dtype, [&](auto tag) {
    const Pick<decltype(tag)> p = pick.template operator()<decltype(tag)>(a);
    if (p.kernel) state->parts = grid_for(p, s.rows, static_cast<int>(s.cols));
  });
  return state;
}

// Launch 2: the partials of `parts` CTAs summed per column, in a fixed order, into dweight and dbias.
// A template (Partial is float) only so that its kernel exists where it is called: an inline
// function's device lambda would put the kernel in the PTX of every file that includes this header.
template <class Partial>
void sum_weight_and_bias(const Partial* partials, int parts, int cols, float* dweight, float* dbias,
                         cudaStream_t stream) {
  sum_partial_columns(partials, parts, 2 * std::int64_t{cols}, stream, [=] __device__(std::int64_t c, float total) {
    if (c < cols) dweight[c] = total;
    else dbias[c - cols] = total;
  });
}

// Both launches with the variant's pick p for this case (the grid from prepare's state, or
// computed here when the harness did not call prepare).
template <class T>
void launch(const LaunchArgs& a, const Pick<T>& p, double eps) {
  const RowsCols s = RowsCols::of(a.shape);
  const auto cols = static_cast<int>(s.cols);
  auto* partials = static_cast<float*>(a.workspace);
  const int parts = a.state ? a.state_as<const State>().parts : p.kernel ? grid_for(p, s.rows, cols) : 0;
  if (p.kernel)  // else refused before launch; see the variant's refuse()
    p.kernel<<<parts, p.threads, p.smem_bytes, a.stream>>>(a.tensor<const T>("x"), a.tensor<const T>("weight"),
                                                           a.tensor<const T>("dy"), a.tensor<T>("dx"), partials,
                                                           s.rows, cols, static_cast<float>(eps));
  sum_weight_and_bias(partials, parts, cols, a.tensor<float>("dweight"), a.tensor<float>("dbias"), a.stream);
}

}  // namespace register_rows

}  // namespace kwb::norm_backward
