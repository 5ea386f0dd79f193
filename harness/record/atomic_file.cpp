// Atomic whole-file replacement: temp file in the same folder, fsync, rename.
#include "harness/record/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

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

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ReportError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  return std::move(text).str();
}

}  // namespace kwb
