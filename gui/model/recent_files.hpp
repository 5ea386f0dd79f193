// The recently opened reports: a small text file, one absolute path a line, newest first, at
// $XDG_CONFIG_HOME/kwb/recent (else ~/.config/kwb/recent). A missing or unreadable file is an
// empty list; failing to write it never stops the app.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kwb::gui {

inline constexpr std::size_t kRecentFilesKept = 12;

std::filesystem::path recent_files_path();  // empty when neither variable is set
std::vector<std::string> read_recent_files(const std::filesystem::path& list);
// Puts `opened` first (once), keeps kRecentFilesKept, writes the list; false if it could not.
bool remember_recent_file(const std::filesystem::path& list, const std::filesystem::path& opened);

// The app's text size (View > Text size), one number in a file beside the recent list; a missing
// or unreadable file, or a number outside 0.5-4, is no saved size.
std::optional<float> read_text_scale(const std::filesystem::path& file);
void write_text_scale(const std::filesystem::path& file, float scale);

}  // namespace kwb::gui
