// The review HTML as a browser draws it: the committed H100 sample is rendered by the real `kwb
// report`, screenshotted by headless Chromium, and the PNG decoded (stb_image, libstb-dev) to
// check it is a real page: the window's size, many colours, not one flat fill.
//
// Without chromium or stb_image.h the test is SKIPPED with the reason (ctest shows it as
// skipped), never passed: scripts/ensure_deps.sh installs both with the test packages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

#ifdef KWB_HAVE_STB_IMAGE
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>
#endif

namespace kwb {
namespace {

using test::shell_quote;

constexpr int kWidth = 1400, kHeight = 2000;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const auto r = test::run_command(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.output.empty()) return r.output.substr(0, r.output.find('\n'));
  }
  return "";
}

TEST(ReviewScreenshot, SampleReportRendersInHeadlessChromium) {
#ifndef KWB_HAVE_STB_IMAGE
  GTEST_SKIP() << "stb_image.h not found at configure time (Debian package libstb-dev): cannot decode the PNG";
#else
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on the PATH (Debian package chromium): cannot screenshot";
  // 1. Prepare: the HTML from the committed sample, through the real binary.
  test::TempDir dir;
  const auto html = dir / "review.html", png = dir / "shot.png";
  auto r = test::run_command(shell_quote(KWB_CLI_PATH) + " report " +
                             shell_quote(KWB_SOURCE_DIR "/samples/h100-smoke/report.json") + " --html " +
                             shell_quote(html.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 2. Run: --no-sandbox because CI runs as root; its own profile folder, so parallel tests and
  // a user's browser never share one.
  r = test::run_command("timeout 120 " + shell_quote(chromium) +
                        " --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=" +
                        shell_quote((dir / "profile").string()) + " --screenshot=" + shell_quote(png.string()) +
                        " --window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight) + " " +
                        shell_quote("file://" + html.string()));
  ASSERT_TRUE(std::filesystem::exists(png)) << "chromium wrote no screenshot (exit " << r.exit_code << "):\n" << r.output;
  // 3. Verify: the window's size, and a page rather than a blank or a single colour.
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(pixels, nullptr) << "not a PNG stb_image can read: " << stbi_failure_reason();
  EXPECT_EQ(w, kWidth);
  EXPECT_EQ(h, kHeight);
  std::map<unsigned, long> colours;
  for (long i = 0; i < static_cast<long>(w) * h; ++i)
    ++colours[(pixels[3 * i] << 16) | (pixels[3 * i + 1] << 8) | pixels[3 * i + 2]];
  stbi_image_free(pixels);
  long dominant = 0;
  for (const auto& [rgb, n] : colours) dominant = std::max(dominant, n);
  const double dominant_share = static_cast<double>(dominant) / (static_cast<double>(w) * h);
  EXPECT_GT(colours.size(), 200u) << "too few colours for text, a chart and coloured points";
  EXPECT_LT(dominant_share, 0.95) << "one colour covers " << 100 * dominant_share << "% of the page";
  // The roofline's op colour (the first palette entry, #4e79a7) must be on screen.
  EXPECT_GT(colours[0x4e79a7], 20) << "no roofline point drawn in the first op's colour";
#endif
}

}  // namespace
}  // namespace kwb
