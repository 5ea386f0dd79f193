// Whole-file writes that never leave a half-written report behind.
//
// A run can be killed at any moment (Ctrl-C, a job time limit, a crashed driver); a reader must
// then see either the previous file or the new one, never a truncated mix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kwb {

// Writes `content` to `<path>.tmp.<pid>.<n>` in the same folder (n counts this process's writes,
// so two threads writing one path never share a temp file), flushes it to disk (fsync), then
// renames it over `path`, so the replacement is atomic. Creates missing parent folders.
// Throws std::runtime_error naming the path and the OS error; the temp file is removed then.
void atomic_write_file(const std::filesystem::path& path, std::string_view content);

// The whole file as bytes; throws ReportError naming the path when it cannot be read, when it is
// not a regular file (a directory, a FIFO, a device such as /dev/zero: refused before any read,
// so nothing blocks or reads without end), or when it is larger than max_input_bytes().
std::string read_text_file(const std::filesystem::path& path);

// The largest input file the tool reads: 4 GiB, or KWB_MAX_INPUT_BYTES (a positive integer).
std::uintmax_t max_input_bytes();

// JSON text nested deeper than this is refused before any parser sees it: a document tree of
// 10^5 levels overflows the stack when it is copied or freed. kwb's own files nest under 10.
inline constexpr int kMaxJsonDepth = 256;
// Throws ReportError naming `path` and the byte where the text first nests deeper than
// kMaxJsonDepth (arrays and objects; brackets inside strings do not count), or holds a NUL byte:
// JSON has none (inside a string it is written \u0000), and the parser would take one for the
// end of the text and never read what follows it (a binary file, or two files run together).
void check_json_text(std::string_view text, const std::filesystem::path& path);

// The JSON library's message of a parse or type error as a kwb message quotes it: without its
// "[json.exception.parse_error.101] " id, and its quoted part (from its first quote to its last,
// such as what it "last read") cut to an excerpt, so a 100 KB string or number in a file is not echoed whole.
std::string json_library_message(std::string_view what);

}  // namespace kwb
