// Shared by the app's tests: the committed sample report, and small report files written on
// purpose (malformed, empty, of a newer schema).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/record/report.hpp"

namespace kwb::test {

inline const std::filesystem::path kSampleReport =
    KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json";

inline std::filesystem::path write_file(const std::filesystem::path& path,
                                        const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// A schema this build does not know yet: one past the one it writes ("kwb.report/4" while it
// writes /3), so the tests of a refused newer report follow the schema as it moves.
inline std::string newer_schema() {
  const std::string current = kReportSchema;
  const auto slash = current.rfind('/');
  return current.substr(0, slash + 1) + std::to_string(std::stoi(current.substr(slash + 1)) + 1);
}

// The sample report's text with its schema replaced: a report of a version this build predates.
inline std::string sample_with_schema(const std::string& schema) {
  std::ifstream in(kSampleReport);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"kwb.report/2\"";
  text.replace(text.find(from), from.size(), "\"" + schema + "\"");
  return text;
}

}  // namespace kwb::test
