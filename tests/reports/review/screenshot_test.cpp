// The review HTML as a browser draws it: the committed H100 roofline-review sample (the
// `roofline-review` suite measured on a GPU) is rendered by the real `kwb
// report`, screenshotted by headless Chromium, and the PNG decoded to check it is a real page:
// the window's size, many colours, not one flat fill, the roofline's points on screen.
//
// The PNG is decoded with stb_image (libstb-dev) when it was found at configure time, else by
// tests/reports/review/png_stats.py (python3, standard library). Without chromium, or without either
// decoder, the test is SKIPPED with the reason (ctest shows it as skipped), never passed:
// scripts/ensure_deps.sh installs chromium and libstb-dev with the test packages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

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

std::string find_program(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const auto r = test::run_command(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.output.empty()) return r.output.substr(0, r.output.find('\n'));
  }
  return "";
}

struct PngStats {
  int width = 0, height = 0;
  long colours = 0;          // distinct RGB values
  long dominant_pixels = 0;  // pixels of the commonest colour
  long near_first_op = 0;    // pixels within 30 per channel of #4e79a7, the first op's colour
};

// Which decoder this build can use; empty when none (the test is skipped then).
std::string png_decoder() {
#ifdef KWB_HAVE_STB_IMAGE
  return "stb_image";
#else
  return find_program({"python3"}).empty() ? "" : "python3";
#endif
}

std::optional<PngStats> png_stats(const std::filesystem::path& png, std::string& error) {
  PngStats st;
#ifdef KWB_HAVE_STB_IMAGE
  int channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &st.width, &st.height, &channels, 3);
  if (!pixels) {
    error = std::string("stb_image cannot read it: ") + stbi_failure_reason();
    return std::nullopt;
  }
  std::map<unsigned, long> colours;
  for (long i = 0; i < static_cast<long>(st.width) * st.height; ++i) {
    const int r = pixels[3 * i], g = pixels[3 * i + 1], b = pixels[3 * i + 2];
    ++colours[(r << 16) | (g << 8) | b];
    st.near_first_op += std::abs(r - 0x4e) <= 30 && std::abs(g - 0x79) <= 30 && std::abs(b - 0xa7) <= 30;
  }
  stbi_image_free(pixels);
  st.colours = static_cast<long>(colours.size());
  for (const auto& [rgb, n] : colours) st.dominant_pixels = std::max(st.dominant_pixels, n);
#else
  const auto r = test::run_command("python3 " + shell_quote(KWB_SOURCE_DIR "/tests/reports/review/png_stats.py") + " " +
                                   shell_quote(png.string()));
  std::istringstream in(r.output);
  if (r.exit_code != 0 || !(in >> st.width >> st.height >> st.colours >> st.dominant_pixels >> st.near_first_op)) {
    error = "png_stats.py failed (exit " + std::to_string(r.exit_code) + "): " + r.output;
    return std::nullopt;
  }
#endif
  return st;
}

TEST(ReviewScreenshot, SampleReportRendersInHeadlessChromium) {
  const std::string chromium = find_program({"chromium", "chromium-browser", "google-chrome"});
  if (chromium.empty()) GTEST_SKIP() << "no chromium on the PATH (Debian package chromium): cannot screenshot";
  if (png_decoder().empty())
    GTEST_SKIP() << "no PNG decoder: neither stb_image.h (libstb-dev) at configure time nor python3";
  // 1. Prepare: the HTML from the committed sample, through the real binary.
  test::TempDir dir;
  const auto html = dir / "review.html", png = dir / "shot.png";
  auto r = test::run_command(shell_quote(KWB_CLI_PATH) + " report " +
                             shell_quote(KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json") + " --html " +
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
  std::string error;
  const auto st = png_stats(png, error);
  ASSERT_TRUE(st.has_value()) << png_decoder() << ": " << error;
  EXPECT_EQ(st->width, kWidth);
  EXPECT_EQ(st->height, kHeight);
  const double dominant_share = static_cast<double>(st->dominant_pixels) / (static_cast<double>(kWidth) * kHeight);
  EXPECT_GT(st->colours, 200) << "too few colours for text, a chart and coloured points";
  EXPECT_LT(dominant_share, 0.95) << "one colour covers " << 100 * dominant_share << "% of the page";
  // The roofline's points and legend line in the first op's colour must be on screen.
  EXPECT_GT(st->near_first_op, 100) << "no roofline point drawn in the first op's colour #4e79a7";
}

}  // namespace
}  // namespace kwb
