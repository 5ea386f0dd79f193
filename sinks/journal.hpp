// The case journal: one JSON line per finished case, flushed as it is written, so a run that is
// killed still leaves every completed case on disk (and a resumed run knows what to skip).
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "record/record.hpp"

namespace kwb {

class Journal {
 public:
  // Opens `path` for appending, creating missing folders. A torn last line left by a run killed
  // mid-write is cut off first, so that the next record does not glue onto it and turn it into a
  // garbled line in the middle. Throws std::runtime_error naming the path.
  explicit Journal(const std::filesystem::path& path);

  // One compact JSON line (same object as a "cases" entry of the JSON report), then fflush and
  // fsync: once per case, so the cost does not matter and the line survives a crash.
  void append(const CaseRecord& record);

  const std::filesystem::path& path() const { return path_; }

 private:
  struct CloseFile {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, CloseFile> file_;
};

// Every record of a JSON Lines journal, in file order; blank lines are ignored.
// A last line that does not parse (a run killed mid-write) is skipped, and a warning saying so is
// added to `warnings` when given. Any other bad line throws ReportError naming the file and line.
std::vector<CaseRecord> read_journal(const std::filesystem::path& path,
                                     std::vector<std::string>* warnings = nullptr);

}  // namespace kwb
