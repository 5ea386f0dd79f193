// Atomic whole-file replacement: temp file in the same folder, fsync, rename.
#include "harness/record/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "harness/catalogue/excerpt.hpp"
#include "harness/record/json_node.hpp"

namespace kwb {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
  throw std::runtime_error(path.string() + ": " + what + ": " + std::strerror(err));
}

// Makes the rename itself durable: without it a power loss can bring the old name back.
// Best effort: some filesystems refuse fsync on a folder, and the data is already safe.
void sync_folder(const std::filesystem::path& folder) {
  int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

void atomic_write_file(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path folder = path.parent_path();
  if (!folder.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) fail(folder, "cannot create folder", ec.value());
  }

  // Same folder as the target: rename is only atomic within one filesystem.
  std::filesystem::path tmp = path;
  static std::atomic<unsigned long> writes{0};
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);

  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(tmp, "cannot create", errno);

  // errno is not guaranteed to be set by a short fwrite; EIO stands in then.
  auto os_error = [] { return errno != 0 ? errno : EIO; };
  int err = 0;
  errno = 0;
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size())
    err = os_error();
  if (!err && std::fflush(f) != 0) err = os_error();
  if (!err && ::fsync(::fileno(f)) != 0) err = os_error();
  if (std::fclose(f) != 0 && !err) err = os_error();
  if (err) {
    std::remove(tmp.c_str());
    fail(tmp, "cannot write", err);
  }

  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    fail(path, "cannot replace", err);
  }
  sync_folder(folder);
}

std::uintmax_t max_input_bytes() {
  constexpr std::uintmax_t kDefault = std::uintmax_t{4} << 30;
  const char* text = std::getenv("KWB_MAX_INPUT_BYTES");
  if (text == nullptr || *text == '\0') return kDefault;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value == 0 || text[0] == '-')
    throw ReportError(fmt::format("KWB_MAX_INPUT_BYTES='{:.40}' is not a positive whole number of bytes; unset it for "
                                  "the default (4 GiB) or give e.g. 8589934592",
                                  text));
  return value;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows links: a link to a file is a file
  if (!ec && std::filesystem::is_directory(status))
    throw ReportError(fmt::format("{}: is a directory; give the file inside it", path.string()));
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ReportError(fmt::format("{}: is not a regular file (a FIFO, device or socket); give a file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  const std::uintmax_t limit = max_input_bytes();
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit)
    throw ReportError(fmt::format("{}: {} bytes, over the {}-byte limit for an input file (KWB_MAX_INPUT_BYTES "
                                  "raises it)",
                                  path.string(), size, limit));
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit)  // the file grew while being read
      throw ReportError(fmt::format("{}: over the {}-byte limit for an input file (KWB_MAX_INPUT_BYTES raises it)",
                                    path.string(), limit));
  }
  if (in.bad()) throw ReportError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  return text;
}

void check_json_text(std::string_view text, const std::filesystem::path& path) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0')
      throw ReportError(fmt::format("{}: a NUL byte at byte {}, which JSON text never holds: a binary or damaged "
                                    "file, not one kwb wrote",
                                    path.string(), i));
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ReportError(fmt::format("{}: JSON nested deeper than {} levels (at byte {}); kwb's files nest under 10: "
                                      "this is not one of them",
                                      path.string(), kMaxJsonDepth, i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string json_library_message(std::string_view what) {
  if (auto pos = what.find("] "); what.starts_with("[json.exception") && pos != what.npos) what.remove_prefix(pos + 2);
  // The outermost pair of quotes: a token may hold quotes of its own.
  const std::size_t open = what.find('\''), close = what.rfind('\'');
  if (open == what.npos || close <= open) return std::string(what);
  return std::string(what.substr(0, open + 1)) + excerpt(what.substr(open + 1, close - open - 1)) +
         std::string(what.substr(close));
}

}  // namespace kwb
