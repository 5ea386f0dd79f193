// The journal's tolerant-at-the-tail reader.
#include "harness/record/journal_reader.hpp"

#include <string_view>

#include <fmt/format.h>

#include "harness/catalogue/excerpt.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"

namespace kwb {
namespace {

JournalHeader header_from_json(const nlohmann::ordered_json& j) {
  JournalHeader h;
  const auto& flags = j.at("plan_flags");
  if (!flags.is_object()) throw ReportError("plan_flags: expected an object");
  h.plan_flags = flags;
  const auto& plan = j.at("plan");
  if (!plan.is_array()) throw ReportError("plan: expected an array of case identities");
  for (const auto& id : plan) {
    if (!id.is_string()) throw ReportError("plan: expected an array of case identities");
    h.plan.push_back(id.get<std::string>());
  }
  h.run = run_info_from_json(json_read::Node(j.at("run"), "run"));  // errors name run.KEY
  return h;
}

}  // namespace

JournalContents read_journal_contents(const std::filesystem::path& path) {
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

  JournalContents contents;
  contents.records.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& line = lines[i];
    const std::string where = fmt::format("{}:{}", path.string(), line.number);
    std::string error;
    try {
      check_json_text(line.text, where);
      const auto j = nlohmann::ordered_json::parse(line.text);
      if (j.is_object() && j.contains("schema")) {  // a header: only the first line may be one
        const auto schema = j["schema"].is_string() ? j["schema"].get<std::string>() : "?";
        if (schema != kJournalSchema)
          throw ReportError(fmt::format("{}: journal schema '{}' is not {}; it was written by another "
                                        "version of kwb", where, excerpt(schema), kJournalSchema));
        if (i != 0) throw ReportError(fmt::format("{}: a journal header after the first line", where));
        contents.header = header_from_json(j);
      } else {
        contents.records.push_back(case_from_json(j));
      }
      continue;
    } catch (const nlohmann::ordered_json::exception& e) {  // not JSON, or a missing key
      error = json_library_message(e.what());
    } catch (const ReportError& e) {  // JSON, but not a record or header
      error = e.what();
      if (error.starts_with(path.string())) throw;  // already says where
    }
    if (i + 1 < lines.size()) throw ReportError(fmt::format("{}: {}", where, error));
    contents.warnings.push_back(fmt::format(
        "{}: skipped the last line, which is incomplete or garbled (a run killed while "
        "writing it?): {}",
        where, error));
  }
  return contents;
}

std::vector<CaseRecord> read_journal(const std::filesystem::path& path, std::vector<std::string>* warnings) {
  JournalContents contents = read_journal_contents(path);
  if (warnings) warnings->insert(warnings->end(), contents.warnings.begin(), contents.warnings.end());
  return std::move(contents.records);
}

}  // namespace kwb
