// Reads the back buffer just drawn and writes it (or a part of it) as a PNG: the headless
// --screenshot run and the charts' "export PNG" both end here.
#pragma once

#include <filesystem>
#include <string>

namespace kwb::gui {

// The rectangle (top-left origin, pixels) of the current framebuffer of height `fb_height`;
// false with `error` set when the file cannot be written.
bool write_framebuffer_png(const std::filesystem::path& path, int x, int y, int width, int height,
                           int fb_height, std::string& error);

}  // namespace kwb::gui
