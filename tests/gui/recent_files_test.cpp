// gui/model/recent_files: newest first, no duplicates, a bounded list, XDG_CONFIG_HOME honoured.
#include "gui/model/recent_files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

TEST(GuiRecentFiles, NewestFirstWithoutDuplicatesAndBounded) {
  test::TempDir dir;
  const auto list = dir / "kwb" / "recent";
  EXPECT_TRUE(read_recent_files(list).empty());  // no file yet: an empty list
  ASSERT_TRUE(remember_recent_file(list, "/a/report.json"));
  ASSERT_TRUE(remember_recent_file(list, "/b/report.json"));
  ASSERT_TRUE(remember_recent_file(list, "/a/report.json"));
  EXPECT_EQ(read_recent_files(list),
            (std::vector<std::string>{"/a/report.json", "/b/report.json"}));
  for (int i = 0; i < 30; ++i) remember_recent_file(list, "/r" + std::to_string(i) + ".json");
  EXPECT_EQ(read_recent_files(list).size(), kRecentFilesKept);
  EXPECT_EQ(read_recent_files(list).front(), "/r29.json");
}

TEST(GuiRecentFiles, LivesUnderXdgConfigHome) {
  const char* old = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(recent_files_path(), std::filesystem::path("/tmp/xdg-test/kwb/recent"));
  if (old)
    setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CONFIG_HOME");
}

// View > Text size is kept as one number beside the recent list; nonsense is no saved size.
TEST(GuiTextScale, SavedAndReadBackAndNonsenseIsNone) {
  kwb::test::TempDir dir;
  const auto file = dir.path() / "kwb" / "text-scale";
  EXPECT_FALSE(read_text_scale(file).has_value()) << "no file: no saved size";
  write_text_scale(file, 1.75f);
  ASSERT_TRUE(read_text_scale(file).has_value());
  EXPECT_FLOAT_EQ(*read_text_scale(file), 1.75f);
  for (const char* bad : {"", "big", "0.1", "9", "nan"}) {
    std::ofstream(file) << bad;
    EXPECT_FALSE(read_text_scale(file).has_value()) << bad;
  }
}

}  // namespace
}  // namespace kwb::gui
