// The Nsight Compute command that profiles one case alone, through kwb's own worker.
//
//   ncu --target-processes all                      the worker is a child of `kwb run`
//       --nvtx --nvtx-include 'kwb@<identity>/measure/'
//                                                    only launches inside the case's timing range
//                                                    (domain kwb, the case's range, its "measure"
//                                                    range: harness/worker/case_runner.cpp)
//       --launch-skip K --launch-count K            K = the variant's kernels per launch: skip the
//                                                    first warm-up launch (it follows verification),
//                                                    profile the second, whole
//       --cache-control all|none                     all for a cold case (caches flushed and
//                                                    invalidated before each profiled kernel, as the
//                                                    clean flush of kwb's counter passes), none for hot
//       --clock-control none                         the GPU's own clocks: never lock them
//       --metrics <the same names kwb collects> --csv --page raw --print-units base
//       <kwb> run <the case's flags> --mode hot --preset quick --timer events --datasheet-ceilings --out DIR
//
// The inner run is hot whatever the case's mode, so that the launches in its measure range are
// the variant's own warm-up launches back to back, with no flush or poison kernel between them
// to count against --launch-skip; ncu's --cache-control gives the cold start instead. Under ncu
// the harness cannot use CUPTI (ncu holds it), hence --timer events, and no ceilings are
// measured (their kernels would run under ncu for nothing).
#pragma once

#include <string>
#include <vector>

#include "harness/catalogue/case_request.hpp"

namespace kwb {

struct NcuCommandSettings {
  std::string ncu = "ncu";         // the ncu to run
  std::string kwb;                 // this kwb's path
  std::string run_out;             // the inner `kwb run`'s --out folder
  std::vector<std::string> metrics;  // full names, in order
  int kernels_per_launch = 1;
};

struct NcuCommand {
  std::vector<std::string> argv;  // ncu's, the program's after it
  std::string nvtx_filter;        // kwb@<identity>/measure/
  int launch_skip = 0, launch_count = 0;
  std::string cache_control;      // "all" or "none"
  // How the figures were taken, for the record's note and the printout.
  std::string note;
};

// Throws std::invalid_argument when the case's identity holds a character ncu's NVTX filter
// reads as its own syntax ('/', '@', '[', ']', '*': never in this build's identities) or when
// kernels_per_launch is not positive.
NcuCommand build_ncu_command(const CaseRequest& c, const NcuCommandSettings& settings);

// A file name stem for a case's files: "ncu-" and its identity with every character other than
// letters, digits, '_', '-', '.' and 'x' as '_' (rope_fwd:v1:bf16:1x8192,positions=index ->
// ncu-rope_fwd_v1_bf16_1x8192_positions_index).
std::string ncu_file_stem(const std::string& identity);

// The case's own flags of kwb run (op, variant, dtype, --axis per axis and tunable, seed,
// test-only switch), the same case whatever the mode and preset around them.
std::vector<std::string> case_run_flags(const CaseRequest& c);

}  // namespace kwb
