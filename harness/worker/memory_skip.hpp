// A case skipped because it does not fit in the device's free memory at the time it would run:
// the one wording the worker writes and the parent recognises.
//
// Free memory, not total: another process on the GPU may hold part of it. `kwb compare
// --confirm` keeps two workers (one per build) on one GPU, and a case that fits once may not fit
// beside the other worker's inputs; the interleaved rounds (harness/session/interleaved_runner.hpp)
// tell such a skip from the others by this reason and measure the side again with the other
// worker stopped. Older builds wrote the same words, so their workers are recognised too.
#pragma once

#include <cstddef>
#include <string>

#include "harness/record/record.hpp"

namespace kwb {

// "needs 41.00 GiB of device memory, 30.12 GiB free of 79.19 GiB".
std::string memory_skip_reason(double needed_bytes, std::size_t free_bytes, std::size_t total_bytes);

// Whether `record` was skipped for want of free device memory (memory_skip_reason's wording).
bool skipped_for_memory(const CaseRecord& record);

}  // namespace kwb
