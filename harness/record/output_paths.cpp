// Probes: create the folder, create and remove a file in it, look at what the names hold.
#include "harness/record/output_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>

namespace kwb {
namespace {

std::string quoted(const std::filesystem::path& p) {
  std::string out = p.string();  // built by appending: GCC 12 warns (wrongly) on "'" + string
  out.insert(out.begin(), '\'');
  out.push_back('\'');
  return out;
}

std::optional<std::string> ensure_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  if (std::filesystem::is_directory(folder, ec)) return std::nullopt;
  if (std::filesystem::exists(folder, ec))
    return quoted(folder) + " exists and is not a folder";
  std::filesystem::create_directories(folder, ec);
  if (ec) return "cannot create the folder " + quoted(folder) + ": " + ec.message();
  if (!std::filesystem::is_directory(folder, ec)) return "cannot create the folder " + quoted(folder);
  return std::nullopt;
}

// A JSON output's name taken by a file kwb did not write (notes, another tool's data) is refused,
// never overwritten: every JSON file kwb writes opens with its "schema": "kwb...." key. An empty
// file holds nothing to lose. Markdown, HTML and CSV carry no such mark, so they are replaced.
std::optional<std::string> foreign_json(const std::filesystem::path& file) {
  if (file.extension() != ".json") return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  char head[4096];
  in.read(head, sizeof head);
  const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  // Blank: nothing to lose, when the whole file was read (4 KB of spaces before text is not).
  if (in.eof() && text.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::nullopt;
  const std::size_t key = text.find("\"schema\"");
  if (key != std::string_view::npos) {
    const std::size_t value = text.find_first_not_of(" \t\r\n:", key + 8);
    if (value != std::string_view::npos && text.substr(value).starts_with("\"kwb.")) return std::nullopt;
  }
  return quoted(file) + " exists and is not a file kwb wrote (no \"schema\": \"kwb....\" at its start), so it is "
                        "not replaced; move it or give another name";
}

// A regular file may be replaced or appended to; anything else under the name blocks the write: a
// symbolic link too (the write-then-rename would replace the link, not write where it points: a
// link to /dev/null would become a regular file).
std::optional<std::string> name_is_free(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (ec || !std::filesystem::exists(status)) return std::nullopt;
  if (std::filesystem::is_symlink(status))
    return quoted(file) + " is a symbolic link, which would be replaced, not written through; give its target or "
                          "another name";
  if (std::filesystem::is_regular_file(std::filesystem::status(file, ec))) return foreign_json(file);
  const char* kind = std::filesystem::is_directory(status) ? "a folder" : "not a regular file";
  return quoted(file) + " is " + kind + ", so the file of that name cannot be written";
}

}  // namespace

std::optional<std::string> check_output_folder(const std::filesystem::path& folder,
                                               const std::vector<std::string>& file_names) {
  if (folder.empty()) return std::string("the folder name is empty");
  if (auto problem = ensure_folder(folder)) return problem;
  for (const auto& name : file_names)
    if (auto problem = name_is_free(folder / name)) return problem;
  // The reports are written as a temp file beside their final name, then renamed: probe that.
  const auto probe = folder / (".kwb-write-test." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create files in " + quoted(folder) + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

std::optional<std::string> check_output_file(const std::filesystem::path& file) {
  if (file.empty()) return std::string("the file name is empty");
  if (file.filename().empty() || file.filename() == "." || file.filename() == "..")
    return quoted(file) + " names a folder, not a file";
  const auto folder = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  if (auto problem = ensure_folder(folder)) return problem;
  if (auto problem = name_is_free(file)) return problem;
  std::error_code ec;
  const bool existed = std::filesystem::exists(file, ec);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write " + quoted(file) + ": " + std::strerror(errno);
  ::close(fd);
  if (!existed) ::unlink(file.c_str());  // the probe leaves nothing behind when later work fails
  return std::nullopt;
}

}  // namespace kwb
