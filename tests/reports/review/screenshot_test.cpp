// The review HTML as a browser draws it: the committed H100 roofline-review sample (the
// `roofline-review` suite measured on a GPU) is rendered by the real `kwb
// report`, screenshotted by headless Chromium, and the PNG decoded to check it is a real page:
// the window's size, many colours, not one flat fill, the roofline's points on screen. A second
// page, from a report whose cases carry hardware counters, must show its counters table (the
// highlight of a figure beyond its threshold is on screen).
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

#include "harness/record/json_report.hpp"
#include "tests/reports/review/review_test_support.hpp"
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
  long near_flag = 0;        // pixels within 4 per channel of #fde8c8, a flagged counter cell's fill
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
    st.near_flag += std::abs(r - 0xfd) <= 4 && std::abs(g - 0xe8) <= 4 && std::abs(b - 0xc8) <= 4;
  }
  stbi_image_free(pixels);
  st.colours = static_cast<long>(colours.size());
  for (const auto& [rgb, n] : colours) st.dominant_pixels = std::max(st.dominant_pixels, n);
#else
  const auto r = test::run_command("python3 " + shell_quote(KWB_SOURCE_DIR "/tests/reports/review/png_stats.py") + " " +
                                   shell_quote(png.string()));
  std::istringstream in(r.output);
  if (r.exit_code != 0 ||
      !(in >> st.width >> st.height >> st.colours >> st.dominant_pixels >> st.near_first_op >> st.near_flag)) {
    error = "png_stats.py failed (exit " + std::to_string(r.exit_code) + "): " + r.output;
    return std::nullopt;
  }
#endif
  return st;
}

// `kwb report REPORT --html`, then headless Chromium's screenshot of it at width x height; the PNG's
// statistics. Fails the test (returns nullopt) where either step fails.
std::optional<PngStats> render_and_screenshot(const std::string& chromium, const test::TempDir& dir,
                                              const std::string& report, int width, int height) {
  // 1. The HTML, through the real binary.
  const auto html = dir / "review.html", png = dir / "shot.png";
  auto r = test::run_command(shell_quote(KWB_CLI_PATH) + " report " + shell_quote(report) + " --html " +
                             shell_quote(html.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return std::nullopt;
  // 2. The screenshot: --no-sandbox because CI runs as root; its own profile folder, so parallel
  // tests and a user's browser never share one.
  r = test::run_command("timeout 120 " + shell_quote(chromium) +
                        " --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=" +
                        shell_quote((dir / "profile").string()) + " --screenshot=" + shell_quote(png.string()) +
                        " --window-size=" + std::to_string(width) + "," + std::to_string(height) + " " +
                        shell_quote("file://" + html.string()));
  EXPECT_TRUE(std::filesystem::exists(png)) << "chromium wrote no screenshot (exit " << r.exit_code << "):\n" << r.output;
  if (!std::filesystem::exists(png)) return std::nullopt;
  // 3. Its pixels.
  std::string error;
  auto st = png_stats(png, error);
  EXPECT_TRUE(st.has_value()) << png_decoder() << ": " << error;
  return st;
}

// A page rather than a blank or a single colour, at the window's size.
void expect_a_real_page(const PngStats& st, int width, int height) {
  EXPECT_EQ(st.width, width);
  EXPECT_EQ(st.height, height);
  const double dominant_share = static_cast<double>(st.dominant_pixels) / (static_cast<double>(width) * height);
  EXPECT_GT(st.colours, 200) << "too few colours for text, a chart and coloured points";
  EXPECT_LT(dominant_share, 0.95) << "one colour covers " << 100 * dominant_share << "% of the page";
}

// Why the screenshot cannot be taken here; empty when it can.
std::string missing_tools(std::string& chromium) {
  chromium = find_program({"chromium", "chromium-browser", "google-chrome"});
  if (chromium.empty()) return "no chromium on the PATH (Debian package chromium): cannot screenshot";
  if (png_decoder().empty()) return "no PNG decoder: neither stb_image.h (libstb-dev) at configure time nor python3";
  return "";
}

TEST(ReviewScreenshot, SampleReportRendersInHeadlessChromium) {
  std::string chromium;
  if (const std::string why = missing_tools(chromium); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  const auto st = render_and_screenshot(chromium, dir, KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json",
                                        kWidth, kHeight);
  ASSERT_TRUE(st.has_value());
  expect_a_real_page(*st, kWidth, kHeight);
  // The roofline's points and legend line in the first op's colour must be on screen.
  EXPECT_GT(st->near_first_op, 100) << "no roofline point drawn in the first op's colour #4e79a7";
  // A flagged counter cell fills over a thousand pixels; a few anti-aliased ones may come near it.
  EXPECT_LT(st->near_flag, 100) << "a report without counters has no counters table";
}

TEST(ReviewScreenshot, CountersTableAndMeasuredPointsRender) {
  std::string chromium;
  if (const std::string why = missing_tools(chromium); !why.empty()) GTEST_SKIP() << why;
  // 1. Prepare: a report of three ops whose fused cases carry counters, one of them moving 1.37
  // times its model with half of each load sector wasted (two flagged cells).
  test::TempDir dir;
  Report report{test::sample_run(), {}};
  for (std::int64_t cols : {1024, 4096}) {
    report.cases.push_back(test::make_case({.variant = "baseline_eager", .role = Role::baseline, .rows = 8192,
                                            .cols = cols, .median_us = cols / 50.0}));
    report.cases.push_back(test::make_case({.variant = "fused_v2", .rows = 8192, .cols = cols, .median_us = cols / 200.0}));
  }
  test::attach_counters(report.cases[1], {.traffic_ratio = 1.37, .useful_bytes = 16});
  test::attach_counters(report.cases[3], {.traffic_ratio = 1.01});
  report.cases.push_back(test::make_case({.op = "softmax_fwd", .variant = "fused_v1", .intensity = 1.2}));
  test::attach_counters(report.cases.back(), {});
  for (std::size_t i = 0; i < report.cases.size(); ++i) report.cases[i].index = static_cast<int>(i);
  write_report_json(dir / "report.json", report);
  // 2. Run: a window tall enough for the whole page, the counters section at its end included.
  constexpr int kTall = 4000;
  const auto st = render_and_screenshot(chromium, dir, (dir / "report.json").string(), kWidth, kTall);
  ASSERT_TRUE(st.has_value());
  // 3. Verify.
  expect_a_real_page(*st, kWidth, kTall);
  EXPECT_GT(st->near_first_op, 100) << "no roofline point drawn in the first op's colour #4e79a7";
  // Two flagged cells of some 60 x 20 pixels each, filled #fde8c8.
  EXPECT_GT(st->near_flag, 1000) << "the counters table's flagged cells are not on screen";
}

}  // namespace
}  // namespace kwb
