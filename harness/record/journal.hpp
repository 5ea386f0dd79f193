// The case journal: a header line (schema, the run's plan flags, the plan's case identities in
// order, the run info: device, ceilings), then one JSON line per finished case, each flushed and
// fsynced as it is written, so a run that is killed still leaves every completed case on disk
// and `kwb run --resume` knows what was planned and what to skip. Read it with
// harness/record/journal_reader.hpp.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/record.hpp"

namespace kwb {

inline constexpr const char* kJournalSchema = "kwb.journal/1";

// The first line of a journal. Journals of older versions have none (their records still read).
struct JournalHeader {
  // The plan-shaping flags the run was given ("preset": "quick", "op": ["rmsnorm"], ...): a
  // resume re-plans from them and refuses different ones.
  nlohmann::ordered_json plan_flags = nlohmann::ordered_json::object();
  std::vector<std::string> plan;  // every planned case identity, in plan order
  RunInfo run;                    // device, ceilings and settings the records were derived with
};

class Journal {
 public:
  // Opens `path` for appending, creating missing folders. A torn last line left by a run killed
  // mid-write is cut off first, so that the next record does not glue onto it and turn it into a
  // garbled line in the middle. Throws std::runtime_error naming the path.
  explicit Journal(const std::filesystem::path& path);

  // One compact JSON line (same object as a "cases" entry of the JSON report), then fflush and
  // fsync: once per case, so the cost does not matter and the line survives a crash.
  void append(const CaseRecord& record);

  // The header line; written once, first, by a fresh run (fsynced like a record).
  void write_header(const JournalHeader& header);

  const std::filesystem::path& path() const { return path_; }

 private:
  struct CloseFile {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  void write_line(const std::string& line);
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, CloseFile> file_;
};

// read_journal (the records alone) and the header are declared in harness/record/journal_reader.hpp.

}  // namespace kwb
