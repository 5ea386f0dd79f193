// Append-only JSON Lines journal of case records (its reader: harness/record/journal_reader.cpp).
#include "harness/record/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "harness/record/atomic_file.hpp"
#include "harness/record/record_json.hpp"
#include "harness/record/report.hpp"

namespace kwb {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
}

// Cuts the file back to just after its last newline when it does not end with one (a torn line).
void drop_torn_tail(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) == 0)
    return;
  const std::string text = read_text_file(path);
  if (text.back() == '\n') return;
  const auto last_newline = text.rfind('\n');
  const std::uintmax_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  // A whole line that lost only its newline is one the reader accepts (and a resume counts as
  // recorded): end it instead of cutting it.
  if (nlohmann::ordered_json::accept(std::string_view(text).substr(keep))) {
    std::FILE* f = std::fopen(path.c_str(), "ab");
    if (!f || std::fputc('\n', f) == EOF || std::fclose(f) != 0) fail(path, "cannot end the last line", errno);
    return;
  }
  std::filesystem::resize_file(path, keep, ec);
  if (ec) fail(path, "cannot cut torn last line", ec.value());
}

}  // namespace

Journal::Journal(const std::filesystem::path& path) : path_(path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) fail(path.parent_path(), "cannot create folder", ec.value());
  }
  drop_torn_tail(path);
  file_.reset(std::fopen(path.c_str(), "ab"));
  if (!file_) fail(path, "cannot open journal", errno);
}

void Journal::append(const CaseRecord& record) {
  write_line(dump_json(to_json(record)) + "\n");  // compact dump has no newlines
}

void Journal::write_header(const JournalHeader& header) {
  nlohmann::ordered_json j;
  j["schema"] = kJournalSchema;
  j["plan_flags"] = header.plan_flags;
  j["plan"] = header.plan;
  j["run"] = to_json(header.run);
  write_line(dump_json(j) + "\n");
}

void Journal::write_line(const std::string& line) {
  std::FILE* f = file_.get();
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), f) != line.size() || std::fflush(f) != 0 ||
      ::fsync(::fileno(f)) != 0)
    fail(path_, "cannot append to journal", errno != 0 ? errno : EIO);
}

}  // namespace kwb
