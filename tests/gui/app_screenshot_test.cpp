// The real kwb-gui under Xvfb (Mesa's software OpenGL): for every view it opens the committed
// H100 sample, draws a few frames at 1600x1000 and writes a PNG, which is decoded to check it is
// a real picture: the window's size, many colours, not one flat fill. And a report it cannot
// open (malformed, empty, newer schema) gives the message, with exit 0 for a screenshot run.
//
// A report whose cases carry hardware counters (tests/gui/counters_report.hpp) is rendered the
// same way: the case detail with its Counters panel, the roofline with the measured points, the
// compare view with two variants' counters side by side; the panel's verdict colours and the
// roofline's flag rings are looked for in the pixels. Set KWB_GUI_SCREENSHOTS=DIR to keep those
// PNGs (and the report) in DIR.
//
// Without xvfb-run (Debian package xvfb) the screenshot tests are SKIPPED with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "tests/gui/counters_report.hpp"
#include "tests/gui/gui_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>

namespace kwb {
namespace {

using test::shell_quote;

constexpr int kWidth = 1600, kHeight = 1000;

bool have_xvfb() { return test::run_command("command -v xvfb-run").exit_code == 0; }

// kwb-gui under a fresh virtual X server big enough for the window.
test::CommandResult run_gui(const std::string& args) {
  return test::run_command("timeout 120 xvfb-run -a -s '-screen 0 1920x1200x24' " +
                           shell_quote(KWB_GUI_PATH) + " " + args);
}

struct PngStats {
  int width = 0, height = 0;
  long colours = 0;
  double dominant_share = 1;
  std::map<unsigned, long> pixels_of;  // 0xRRGGBB -> how many pixels have it
  long count(unsigned rgb) const {
    auto it = pixels_of.find(rgb);
    return it == pixels_of.end() ? 0 : it->second;
  }
};

PngStats png_stats(const std::filesystem::path& png) {
  PngStats st;
  int channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &st.width, &st.height, &channels, 3);
  if (!pixels) return st;
  std::map<unsigned, long>& colours = st.pixels_of;
  const long n = static_cast<long>(st.width) * st.height;
  for (long i = 0; i < n; ++i)
    ++colours[(pixels[3 * i] << 16) | (pixels[3 * i + 1] << 8) | pixels[3 * i + 2]];
  stbi_image_free(pixels);
  st.colours = static_cast<long>(colours.size());
  long dominant = 0;
  for (const auto& [rgb, count] : colours) dominant = std::max(dominant, count);
  st.dominant_share = static_cast<double>(dominant) / static_cast<double>(n);
  return st;
}

class GuiScreenshot : public ::testing::TestWithParam<const char*> {};

TEST_P(GuiScreenshot, SampleReportRendersTheView) {
  if (!have_xvfb())
    GTEST_SKIP() << "no xvfb-run on the PATH (Debian package xvfb): cannot render headless";
  // 1. Prepare: the sample report (twice for compare, which needs two).
  const std::string view = GetParam();
  test::TempDir dir;
  const auto png = dir / (view + ".png");
  std::string reports = shell_quote(test::kSampleReport.string());
  if (view == "compare") reports += " " + reports;
  // 2. Run.
  const auto r = run_gui(reports + " --view " + view + " --size " + std::to_string(kWidth) + "x" +
                         std::to_string(kHeight) + " --screenshot " + shell_quote(png.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << r.output;
  // 3. Verify: the window's size, a drawn picture rather than a blank.
  const PngStats st = png_stats(png);
  EXPECT_EQ(st.width, kWidth);
  EXPECT_EQ(st.height, kHeight);
  // The live run window alone (no report, no charts) draws fewer colours than a view of a report.
  EXPECT_GT(st.colours, view == "live" ? 24 : 64) << "too few colours for text, tables and charts";
  EXPECT_LT(st.dominant_share, 0.9)
      << "one colour covers " << 100 * st.dominant_share << "% of the window";
}

INSTANTIATE_TEST_SUITE_P(EveryView, GuiScreenshot,
                         ::testing::Values("table", "roofline", "sweep", "detail", "compare", "live"));

// Two runs on different GPUs: the compare view says so in a banner of its own colour, not in grey.
TEST(GuiCompare, EnvironmentDifferencesAreABanner) {
  if (!have_xvfb())
    GTEST_SKIP() << "no xvfb-run on the PATH (Debian package xvfb): cannot render headless";
  test::TempDir dir;
  const std::string samples = KWB_SOURCE_DIR "/samples/";
  auto shot = [&](const std::string& reports, const std::string& name) {
    const auto png = dir / name;
    const auto r = run_gui(reports + " --view compare --size 1280x720 --screenshot " + shell_quote(png.string()));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return png_stats(png);
  };
  constexpr unsigned kBanner = 0xffecc8;  // IM_COL32(255, 236, 200)
  const PngStats differ = shot(shell_quote(samples + "h100-compare/base.json") + " " +
                                   shell_quote(samples + "h200x2-devices/report.json"),
                               "differ.png");
  const PngStats same = shot(shell_quote(samples + "h100-compare/base.json") + " " +
                                 shell_quote(samples + "h100-compare/aa.json"),
                             "same.png");
  EXPECT_GT(differ.count(kBanner), 5000) << "no banner for an H100 against an H200";
  EXPECT_EQ(same.count(kBanner), 0) << "a banner where nothing differs";
}

// View > Text size (here --scale): the font is rasterised at the size asked, so the same view at
// twice the size covers more pixels in the text colour (not four times: fewer rows fit; measured
// 1.47x, and 1.0x were the size ignored).
TEST(GuiTextSize, ScaleTwoDrawsLargerText) {
  if (!have_xvfb())
    GTEST_SKIP() << "no xvfb-run on the PATH (Debian package xvfb): cannot render headless";
  test::TempDir dir;
  auto text_pixels = [&](const std::string& scale) {
    const auto png = dir / ("detail-" + scale + ".png");
    const auto r = run_gui(shell_quote(test::kSampleReport.string()) + " --view table --scale " + scale +
                           " --size 1280x720 --screenshot " + shell_quote(png.string()));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return png_stats(png).count(0x000000);
  };
  const long one = text_pixels("1"), two = text_pixels("2");
  EXPECT_GT(one, 1000);
  EXPECT_GT(two, 1.3 * static_cast<double>(one)) << "scale 1: " << one << " text pixels, scale 2: " << two;
}

// Colours the counters draw in and nothing else in these views does (gui/widgets: the verdicts;
// gui/windows/roofline_window.cpp: the flag ring). ImGui's default font is a bitmap font, so text
// keeps its exact colour.
constexpr unsigned kVerdictGood = 0x288c3c;  // IM_COL32(40, 140, 60)
constexpr unsigned kFlagRing = 0xd21e1e;     // IM_COL32(210, 30, 30)

class GuiCountersScreenshot : public ::testing::TestWithParam<const char*> {};

TEST_P(GuiCountersScreenshot, CountersReportRendersTheView) {
  if (!have_xvfb())
    GTEST_SKIP() << "no xvfb-run on the PATH (Debian package xvfb): cannot render headless";
  // 1. Prepare: the synthetic counters report, and the sample (no counters) to set it against.
  const std::string view = GetParam();
  test::TempDir dir;
  const auto report = test::write_counters_report(dir.path());
  const auto png = dir / ("counters-" + view + ".png"), plain = dir / ("plain-" + view + ".png");
  const std::string size = " --size " + std::to_string(kWidth) + "x" + std::to_string(kHeight);
  // 2. Run: one report (compare sets two variants of it side by side).
  const auto r = run_gui(shell_quote(report.string()) + " --view " + view + size +
                         " --screenshot " + shell_quote(png.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << r.output;
  const auto p = run_gui(shell_quote(test::kSampleReport.string()) + " --view " + view + size +
                         " --screenshot " + shell_quote(plain.string()));
  ASSERT_EQ(p.exit_code, 0) << p.output;
  if (const char* keep = std::getenv("KWB_GUI_SCREENSHOTS")) {
    std::filesystem::create_directories(keep);
    std::filesystem::copy_file(png, std::filesystem::path(keep) / png.filename(),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(report, std::filesystem::path(keep) / report.filename(),
                               std::filesystem::copy_options::overwrite_existing);
  }
  // 3. Verify: a real picture, and what only the counters draw.
  const PngStats st = png_stats(png), without = png_stats(plain);
  EXPECT_EQ(st.width, kWidth);
  EXPECT_EQ(st.height, kHeight);
  // The live run window alone (no report, no charts) draws fewer colours than a view of a report.
  EXPECT_GT(st.colours, view == "live" ? 24 : 64) << "too few colours for text, tables and charts";
  EXPECT_LT(st.dominant_share, 0.9);
  if (view == std::string("detail")) {  // the Counters panel's figures, judged good in green
    EXPECT_GT(st.count(kVerdictGood), 20) << "no verdict colour: is the Counters panel drawn?";
    EXPECT_EQ(without.count(kVerdictGood), 0);
  }
  if (view == std::string("roofline")) {  // measured points, the flagged ones ringed
    EXPECT_GT(st.count(kFlagRing), 20) << "no flag ring: are the measured points drawn?";
    EXPECT_EQ(without.count(kFlagRing), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(CountersViews, GuiCountersScreenshot,
                         ::testing::Values("detail", "roofline", "compare"));

TEST(GuiCounters, CheckCountsTheCasesWithCounters) {
  test::TempDir dir;
  const auto report = test::write_counters_report(dir.path());
  const auto r =
      test::run_command(shell_quote(KWB_GUI_PATH) + " --check " + shell_quote(report.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(7 cases, 5 with hardware counters)"), std::string::npos) << r.output;
}

TEST(GuiBadReports, ScreenshotRunSaysWhyAndExitsZero) {
  if (!have_xvfb())
    GTEST_SKIP() << "no xvfb-run on the PATH (Debian package xvfb): cannot render headless";
  test::TempDir dir;
  const auto empty = test::write_file(dir / "empty.json", "");
  const auto png = dir / "shot.png";
  const auto r = run_gui(shell_quote(empty.string()) + " --view table --screenshot " +
                         shell_quote(png.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(png));
  EXPECT_NE(r.output.find("the file is empty"), std::string::npos) << r.output;
}

TEST(GuiBadReports, CheckPrintsTheMessageForEachKindOfBadFile) {
  // 1. Prepare: one file of each kind the app must refuse readably.
  test::TempDir dir;
  const auto empty = test::write_file(dir / "empty.json", "");
  const auto broken =
      test::write_file(dir / "broken.json", "{\"schema\": \"kwb.report/2\", \"cases\": [");
  const auto newer =
      test::write_file(dir / "newer.json", test::sample_with_schema(test::newer_schema()));
  // 2. Run: --check needs no display.
  const auto r =
      test::run_command(shell_quote(KWB_GUI_PATH) + " --check " + shell_quote(empty.string()) +
                        " " + shell_quote(broken.string()) + " " + shell_quote(newer.string()) +
                        " " + shell_quote(test::kSampleReport.string()));
  // 3. Verify: each named with its reason, the good one opened, exit 2 for the failures.
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("error: " + empty.string() + ": the file is empty"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("error: " + broken.string() + ": invalid JSON"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(test::newer_schema()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(127 cases)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kwb
