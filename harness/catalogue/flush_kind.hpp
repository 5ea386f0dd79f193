// Which L2 state a cold sample starts from. Plain names, no CUDA: the planner, the CLI and the
// worker protocol carry it.
//
// dirty (default): a memset of 2x L2, as nvbench and Triton's do_bench flush. The L2 is left full
//   of dirty lines; the timed kernel pays for writing them back (measured ~4 us on a 64 us
//   kernel on an H200, 3-8 us per sample on an H100 whatever the length), as the kernel after
//   another in a real program does (docs/notebook/2026-11-22-flush-choice-and-nsight-compute.md).
// clean: the L2 is emptied of the case's data and holds no dirty line, as Nsight Compute's
//   `--cache-control all` leaves it: times agree with ncu's gpu__time_duration within 1% from
//   ~85 us up (ncu adds ~1 us of its own to every kernel, which dominates under ~20 us).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kwb {

enum class FlushKind { dirty, clean };

std::string_view to_string(FlushKind kind);
std::optional<FlushKind> parse_flush_kind(std::string_view text);
// One line for the report's settings: what the flush does, with the buffer size.
std::string describe_flush(FlushKind kind, std::int64_t l2_bytes);

}  // namespace kwb
