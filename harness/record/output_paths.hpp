// Checks that output locations can be written, made before anything runs.
//
// A run that measured for an hour must not die on its first write because --out names a folder
// that cannot hold files (/proc/self), a report name is taken by a folder, or the working
// directory is read-only. The messages say what is wrong with which path; the caller adds the
// flag that chose it and how to pick another.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kwb {

// nullopt when `folder` exists or could be created, files can be created in it, and none of
// `file_names` in it is taken by something other than a regular file, or, for a .json name, by a
// non-empty file kwb did not write (one without its "schema": "kwb...." key); else what is wrong.
// Creates the folder (and its parents) when missing.
std::optional<std::string> check_output_folder(const std::filesystem::path& folder,
                                               const std::vector<std::string>& file_names);

// Same for one file: a non-empty path, its folder usable, no folder, link or special file under
// the name (nor, for .json, a file kwb did not write), the file itself appendable (probed by creating it, then removed again when it did not
// exist, so that a run refused later leaves nothing behind).
std::optional<std::string> check_output_file(const std::filesystem::path& file);

}  // namespace kwb
