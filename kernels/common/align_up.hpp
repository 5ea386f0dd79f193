// Workspace offsets: every buffer a variant carves out of its workspace starts on a 256-byte
// boundary (what cudaMalloc gives, and what cuBLASLt and vector loads want).
#pragma once

#include <cstddef>

namespace kwb {

inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace kwb
