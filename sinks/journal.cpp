// Append-only JSON Lines journal of case records, and its tolerant-at-the-tail reader.
#include "sinks/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "sinks/atomic_file.hpp"
#include "sinks/json_report.hpp"

namespace kwb {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
}

// Cuts the file back to just after its last newline when it does not end with one.
void drop_torn_tail(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) == 0)
    return;
  const std::string text = read_text_file(path);
  if (text.back() == '\n') return;
  const auto last_newline = text.rfind('\n');
  const std::uintmax_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  std::filesystem::resize_file(path, keep, ec);
  if (ec) fail(path, "cannot cut torn last line", ec.value());
}

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string without_exception_id(std::string_view what) {
  if (auto pos = what.find("] "); what.starts_with("[json.exception") && pos != what.npos)
    what.remove_prefix(pos + 2);
  return std::string(what);
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
  const std::string line = dump_json(to_json(record)) + "\n";  // compact dump has no newlines
  std::FILE* f = file_.get();
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), f) != line.size() || std::fflush(f) != 0 ||
      ::fsync(::fileno(f)) != 0)
    fail(path_, "cannot append to journal", errno != 0 ? errno : EIO);
}

std::vector<CaseRecord> read_journal(const std::filesystem::path& path,
                                     std::vector<std::string>* warnings) {
  const std::string text = read_text_file(path);

  // Split into (line number, text) first so that we know which non-blank line is the last.
  struct Line {
    std::size_t number;
    std::string_view text;
  };
  std::vector<Line> lines;
  std::string_view rest = text;
  for (std::size_t number = 1; !rest.empty(); ++number) {
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back({number, line});
  }

  std::vector<CaseRecord> records;
  records.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& line = lines[i];
    std::string error;
    try {
      records.push_back(case_from_json(nlohmann::ordered_json::parse(line.text)));
      continue;
    } catch (const nlohmann::ordered_json::exception& e) {  // not JSON
      error = without_exception_id(e.what());
    } catch (const ReportError& e) {  // JSON, but not a case record
      error = e.what();
    }
    const std::string where = fmt::format("{}:{}", path.string(), line.number);
    if (i + 1 < lines.size()) throw ReportError(fmt::format("{}: {}", where, error));
    if (warnings)
      warnings->push_back(fmt::format(
          "{}: skipped the last line, which is incomplete or garbled (a run killed while "
          "writing it?): {}",
          where, error));
  }
  return records;
}

}  // namespace kwb
