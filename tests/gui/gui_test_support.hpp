// Shared by the app's tests: the committed sample report, and small report files written on
// purpose (malformed, empty, of a newer schema).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace kwb::test {

inline const std::filesystem::path kSampleReport =
    KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json";

inline std::filesystem::path write_file(const std::filesystem::path& path,
                                        const std::string& text) {
  std::ofstream(path) << text;
  return path;
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
