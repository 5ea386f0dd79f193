// Reading a journal back: its header (absent in journals of older versions) and its records.
//
// A last line that does not parse (a run killed mid-write) is skipped with a warning; any other
// bad line throws ReportError naming file:line. A header of another schema is refused.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/journal.hpp"

namespace kwb {

struct JournalContents {
  std::optional<JournalHeader> header;  // none: an older journal, or its header line was torn
  std::vector<CaseRecord> records;      // in file order
  std::vector<std::string> warnings;    // e.g. the skipped torn last line
};

JournalContents read_journal_contents(const std::filesystem::path& path);

// The records alone (the header, when there is one, is skipped).
std::vector<CaseRecord> read_journal(const std::filesystem::path& path,
                                     std::vector<std::string>* warnings = nullptr);

}  // namespace kwb
