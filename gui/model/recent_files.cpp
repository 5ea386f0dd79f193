// Recent files list (see recent_files.hpp).
#include "gui/model/recent_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace kwb::gui {

std::filesystem::path recent_files_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "kwb" / "recent";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config" / "kwb" / "recent";
  return {};
}

std::vector<std::string> read_recent_files(const std::filesystem::path& list) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::ifstream in(list);
  for (std::string line; std::getline(in, line) && out.size() < kRecentFilesKept;)
    if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  return out;
}

bool remember_recent_file(const std::filesystem::path& list, const std::filesystem::path& opened) {
  if (list.empty()) return false;
  std::error_code ec;
  const std::string path = std::filesystem::absolute(opened, ec).lexically_normal().string();
  std::vector<std::string> files = read_recent_files(list);
  files.erase(std::remove(files.begin(), files.end(), path), files.end());
  files.insert(files.begin(), path);
  if (files.size() > kRecentFilesKept) files.resize(kRecentFilesKept);
  std::filesystem::create_directories(list.parent_path(), ec);
  std::ofstream out(list, std::ios::trunc);
  for (const auto& f : files) out << f << '\n';
  return static_cast<bool>(out);
}

std::optional<float> read_text_scale(const std::filesystem::path& file) {
  std::ifstream in(file);
  float scale = 0;
  if (!(in >> scale) || !(scale >= 0.5f && scale <= 4.0f)) return std::nullopt;
  return scale;
}

void write_text_scale(const std::filesystem::path& file, float scale) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream(file) << scale << "\n";  // a failed write only loses the choice
}

}  // namespace kwb::gui
