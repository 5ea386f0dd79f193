// Whole-file writes that never leave a half-written report behind.
//
// A run can be killed at any moment (Ctrl-C, a job time limit, a crashed driver); a reader must
// then see either the previous file or the new one, never a truncated mix.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kwb {

// Writes `content` to `<path>.tmp.<pid>.<n>` in the same folder (n counts this process's writes,
// so two threads writing one path never share a temp file), flushes it to disk (fsync), then
// renames it over `path`, so the replacement is atomic. Creates missing parent folders.
// Throws std::runtime_error naming the path and the OS error; the temp file is removed then.
void atomic_write_file(const std::filesystem::path& path, std::string_view content);

// The whole file as bytes; throws ReportError naming the path when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace kwb
