// Opens one report file for the app: the report, or a sentence saying why not.
//
// The reading itself is the tool's own (harness/record/json_report.hpp: strict, schema-checked, errors
// naming the JSON path); this adds what a person needs at a glance: an empty file, a missing
// file and a report of a newer schema each get their own message, and nothing ever throws out
// of here, so no file can take the app down.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "harness/record/report.hpp"

namespace kwb::gui {

struct LoadedReport {
  std::filesystem::path path;
  std::string name;  // what the windows call it: the file's parent folder and name
  Report report;
};

struct LoadOutcome {
  std::optional<LoadedReport> loaded;  // absent when the file cannot be used
  std::string error;                   // why not; empty when loaded
  std::string note;                    // loaded, but worth saying ("holds no cases")
};

LoadOutcome load_report(const std::filesystem::path& path);

}  // namespace kwb::gui
