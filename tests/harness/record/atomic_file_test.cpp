// atomic_write_file replaces a file whole, creates its folder, leaves no temp file, and says
// which path failed and why.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using test::TempDir;

std::vector<std::string> names_in(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    names.push_back(entry.path().filename().string());
  return names;
}

TEST(AtomicWriteFile, ReplacesExistingContentAndLeavesNoTempFile) {
  TempDir dir;
  const auto path = dir / "report.json";
  std::ofstream(path) << "old content that is longer than the new one\n";
  atomic_write_file(path, "new");
  EXPECT_EQ(read_text_file(path), "new");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(AtomicWriteFile, CreatesParentFolders) {
  TempDir dir;
  const auto path = dir / "x/y/z.csv";
  atomic_write_file(path, "a,b\n");
  EXPECT_EQ(read_text_file(path), "a,b\n");
  EXPECT_EQ(names_in(dir / "x/y"), std::vector<std::string>{"z.csv"});
}

TEST(AtomicWriteFile, EmptyContentGivesAnEmptyFile) {
  TempDir dir;
  const auto path = dir / "empty";
  atomic_write_file(path, "");
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(AtomicWriteFile, FailureNamesThePathAndTheReason) {
  TempDir dir;
  std::ofstream(dir / "plain_file") << "x";
  const auto path = dir / "plain_file/report.json";  // parent is a file, not a folder
  try {
    atomic_write_file(path, "data");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((dir / "plain_file").string()), std::string::npos) << message;
    EXPECT_NE(message.find("Not a directory"), std::string::npos) << message;
  }
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"plain_file"});
}

}  // namespace
}  // namespace kwb
