// Messages between `kwb run` and its worker (`kwb __worker`), one JSON object per line.
//
//   worker -> parent  {"event":"hello","device":{...},"timer":"cupti","timer_note":""}
//                     {"event":"no_gpu","reason":"..."}
//   parent -> worker  {"cmd":"case","request":{...}}   {"cmd":"ceilings"}   {"cmd":"exit"}
//   worker -> parent  {"event":"started","index":7}   {"event":"record","record":{...}}
//                     {"event":"prepared","index":7} (the case made a new group's inputs and oracle)
//                     {"event":"ceilings","ceilings":{...}}   {"event":"error","message":"..."}
//
// The parent's watchdog (--case-timeout) waits that long for each line of a case, so "prepared"
// starts its time again: the oracle is host work (85 s for attention_varlen_bwd at b8 s4096 on an
// H100's 16-core host), and the watchdog is for a hung kernel.
//
// A case request crosses the pipe as the CaseRequest the planner made, field by field; its
// enumerations (dtype, mode, flush, launch) as their names, written and read back only by the two
// functions below (the flush is a FlushKind on both sides: parsed once, from the setting, by the
// planner).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/catalogue/case_request.hpp"

namespace kwb {

nlohmann::ordered_json to_json(const CaseRequest& request);
CaseRequest case_request_from_json(const nlohmann::ordered_json& j);

// The worker's main loop: reads commands on stdin, answers on fd 3. Returns its exit status:
// 0 after "exit" or end of input, 3 after a CUDA fault that lost the context.
// `counters`: the run collects hardware counters; the profiler is initialised before any kernel
// is loaded.
int worker_main(int device, const std::string& timer_preference, bool counters = false);

inline constexpr int kWorkerExitContextLost = 3;

}  // namespace kwb
