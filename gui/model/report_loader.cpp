// Report file -> LoadOutcome, with messages worded for the app's status panel.
#include "gui/model/report_loader.hpp"

#include "harness/record/json_report.hpp"

#include <fmt/format.h>

#include <system_error>

namespace kwb::gui {

namespace {

std::string display_name(const std::filesystem::path& path) {
  const auto parent = path.parent_path().filename();
  return parent.empty() ? path.filename().string() : (parent / path.filename()).string();
}

}  // namespace

LoadOutcome load_report(const std::filesystem::path& path) {
  LoadOutcome out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    out.error = fmt::format("{}: no such file", path.string());
    return out;
  }
  if (std::filesystem::is_directory(path, ec)) {
    out.error = fmt::format("{}: is a folder; open the report.json inside it", path.string());
    return out;
  }
  if (std::filesystem::file_size(path, ec) == 0 && !ec) {
    out.error = fmt::format(
        "{}: the file is empty, no report in it (a run stopped before writing it?)", path.string());
    return out;
  }
  try {
    LoadedReport loaded{path, display_name(path), read_report_json(path)};
    if (loaded.report.cases.empty())
      out.note = fmt::format("{}: the report holds no cases", path.string());
    out.loaded = std::move(loaded);
  } catch (const std::exception& e) {
    out.error = e.what();
    // The codec's words are exact but terse; say what to do about the usual one.
    if (out.error.find("unsupported report schema") != std::string::npos)
      out.error += fmt::format(
          " (written by a newer or older kwb: open it with the kwb that wrote it, "
          "or re-run the suite with this one)");
  }
  return out;
}

}  // namespace kwb::gui
