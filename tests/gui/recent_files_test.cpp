// gui/model/recent_files: newest first, no duplicates, a bounded list, XDG_CONFIG_HOME honoured.
#include "gui/model/recent_files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

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

}  // namespace
}  // namespace kwb::gui
