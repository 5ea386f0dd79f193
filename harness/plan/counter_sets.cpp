// The counter sets and the parsing of --counters / --metrics (see counter_sets.hpp).
#include "harness/plan/counter_sets.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "harness/plan/setting_error.hpp"
#include "harness/plan/setting_values.hpp"
#include "harness/plan/suggest.hpp"

namespace kwb {

const std::vector<CounterSet>& counter_sets() {
  static const std::vector<CounterSet> sets = {
      {"memory",
       "DRAM bytes read and written, L2 sectors and hit rate, L1 hit rate of global loads, sectors per "
       "request and useful bytes per sector of global loads and stores",
       {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
        "lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "smsp__sass_data_bytes_mem_global_op_ld.sum",
        "smsp__sass_data_bytes_mem_global_op_st.sum"}},
      {"compute",
       "SM cycles, issue activity, instructions by pipe, and the FP32 FMA, add and multiply instructions "
       "executed (per thread)",
       {"sm__cycles_elapsed.sum", "sm__cycles_active.sum", "smsp__issue_active.sum", "smsp__cycles_active.sum",
        "sm__inst_executed.sum", "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_fma.sum",
        "sm__inst_executed_pipe_fp64.sum", "sm__inst_executed_pipe_lsu.sum", "sm__inst_executed_pipe_xu.sum",
        "sm__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_uniform.sum",
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"}},
      {"tensor",
       "tensor-pipe active cycles, warpgroup (gmma) and warp (hmma) MMA instructions, and tensor FLOPs by "
       "input type (bf16, fp16, tf32, fp8; an MMA's multiply-add counts 2)",
       {"sm__cycles_elapsed.sum", "sm__pipe_tensor_cycles_active.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
        "sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp8.sum"}},
      {"occupancy",
       "achieved occupancy (active warps per active cycle), blocks and warps launched; registers, shared "
       "memory, theoretical occupancy and waves come from each kernel's launch",
       {"sm__warps_active.sum", "sm__cycles_active.sum", "sm__ctas_launched.sum", "smsp__warps_launched.sum"}},
  };
  return sets;
}

namespace {

std::vector<std::string> set_names() {
  std::vector<std::string> names;
  for (const CounterSet& s : counter_sets()) names.push_back(s.name);
  return names;
}

void add_once(std::vector<std::string>& list, const std::string& metric) {
  if (std::find(list.begin(), list.end(), metric) == list.end()) list.push_back(metric);
}

// A full metric name is a base name and a rollup or ratio suffix after its first dot
// ("dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"); bare base names collect nothing.
bool looks_like_full_name(const std::string& name) {
  const auto dot = name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size()) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.'; });
}

}  // namespace

CounterRequest parse_counter_request(const std::vector<std::string>& sets, const std::vector<std::string>& metrics) {
  CounterRequest request;
  const auto known = set_names();
  for (const std::string& name : sets) {
    const auto it = std::find_if(counter_sets().begin(), counter_sets().end(),
                                 [&](const CounterSet& s) { return s.name == name; });
    if (it == counter_sets().end())
      throw SettingError(Setting::counters,
                         SettingText(Setting::counters, ": " + unknown_name_message("counter set", name, known) +
                                                            " (`kwb counters --list` shows each set's metrics)"));
    add_once(request.sets, name);
  }
  for (const std::string& metric : metrics) {
    if (!looks_like_full_name(metric))
      throw SettingError(Setting::metrics,
                         SettingText(Setting::metrics, ": " + shown(metric) +
                                                           " is not a full metric name; give the base name and its "
                                                           "rollup, e.g. dram__bytes_read.sum (`kwb counters --list "
                                                           "--all` shows the chip's base names)"));
    add_once(request.extra_metrics, metric);
  }
  if (request.sets.empty() && request.extra_metrics.empty()) return request;
  request.metrics.push_back(kDurationMetric);
  for (const std::string& name : request.sets)
    for (const CounterSet& s : counter_sets())
      if (s.name == name)
        for (const std::string& m : s.metrics) add_once(request.metrics, m);
  for (const std::string& m : request.extra_metrics) add_once(request.metrics, m);
  return request;
}

MetricsByRange split_by_range(const std::vector<std::string>& metrics) {
  MetricsByRange out;
  for (const std::string& m : metrics)
    (m.find("__sass_") != std::string::npos ? out.whole_launch : out.per_kernel).push_back(m);
  return out;
}

std::string metric_explanation(const std::string& metric) {
  static const std::map<std::string, std::string> notes = {
      {"gpu__time_duration.sum", "the kernel's duration in the counter pass (serialised; times come from the timing pass)"},
      {"dram__bytes_read.sum", "bytes read from DRAM; a streaming kernel reads each input byte once"},
      {"dram__bytes_write.sum", "bytes written to DRAM, the write-back of the lines the kernel leaves dirty in "
                                "the L2 included (Nsight Compute counts only what is written back while the "
                                "kernel runs: about 0 for outputs that fit the L2)"},
      {"lts__t_sectors_op_read.sum", "32-byte L2 sectors read (from L1 and other clients)"},
      {"lts__t_sectors_op_write.sum", "32-byte L2 sectors written"},
      {"lts__t_sectors_lookup_hit.sum", "L2 sector lookups that hit; L2 hit rate = hits / (hits + misses)"},
      {"lts__t_sectors_lookup_miss.sum", "L2 sector lookups that missed and went to DRAM"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
       "L1 sectors of global loads; sectors per request: 4 is a fully coalesced 128-byte warp load of 4-byte "
       "words, more means scattered accesses"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "global-load sectors that hit in L1"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global load requests (one per warp instruction)"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "L1 sectors of global stores"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global store requests (one per warp instruction)"},
      {"smsp__sass_data_bytes_mem_global_op_ld.sum",
       "bytes the threads asked for in global loads; per sector: 32 means every byte fetched was used"},
      {"smsp__sass_data_bytes_mem_global_op_st.sum", "bytes the threads stored; per sector: 32 is ideal"},
      {"sm__cycles_elapsed.sum", "SM cycles elapsed, summed over SMs"},
      {"sm__cycles_active.sum", "SM cycles with at least one warp resident, summed over SMs"},
      {"smsp__issue_active.sum",
       "cycles in which a scheduler issued an instruction; issue active = this / scheduler active cycles (above "
       "80%: issue-bound)"},
      {"smsp__cycles_active.sum", "scheduler cycles with at least one warp resident"},
      {"sm__inst_executed.sum", "warp instructions executed"},
      {"sm__inst_executed_pipe_alu.sum", "warp instructions on the ALU pipe (integer, logic, conversions, FP32 compares)"},
      {"sm__inst_executed_pipe_fma.sum", "warp instructions on the FMA pipe (FP32 multiply-add, IMAD)"},
      {"sm__inst_executed_pipe_fp64.sum", "warp instructions on the FP64 pipe"},
      {"sm__inst_executed_pipe_lsu.sum", "warp instructions on the load/store pipe (global, shared, local memory)"},
      {"sm__inst_executed_pipe_xu.sum", "warp instructions on the transcendental pipe (exp2, rsqrt, sin: MUFU)"},
      {"sm__inst_executed_pipe_tensor.sum", "warp instructions on the tensor pipes"},
      {"sm__inst_executed_pipe_uniform.sum", "warp instructions on the uniform datapath (per-warp scalars)"},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "FP32 fused multiply-adds, per thread (2 FLOPs each)"},
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "FP32 adds, per thread"},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "FP32 multiplies, per thread"},
      {"sm__pipe_tensor_cycles_active.sum",
       "cycles the tensor pipe was busy, summed over SMs; over elapsed cycles, the tensor pipe's utilisation "
       "(a GEMM near its peak reads above 80%)"},
      {"sm__inst_executed_pipe_tensor_op_gmma.sum", "warpgroup MMA (wgmma) instructions, Hopper's tensor path"},
      {"sm__inst_executed_pipe_tensor_op_hmma.sum", "warp-level MMA (mma.sync) instructions"},
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "tensor FLOPs with bf16 inputs and fp32 accumulation"},
      {"sm__ops_path_tensor_src_fp16.sum", "tensor FLOPs with fp16 inputs"},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", "tensor FLOPs with tf32 inputs (fp32 data on tensor cores)"},
      {"sm__ops_path_tensor_src_fp8.sum", "tensor FLOPs with fp8 inputs"},
      {"sm__warps_active.sum",
       "resident warps summed over active cycles; achieved occupancy = this / active cycles / 64 warps per SM"},
      {"sm__ctas_launched.sum", "thread blocks launched"},
      {"smsp__warps_launched.sum", "warps launched"},
  };
  auto it = notes.find(metric);
  return it == notes.end() ? std::string() : it->second;
}

}  // namespace kwb
