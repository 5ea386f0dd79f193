// Input files read safely: a directory, a FIFO or a device is refused before any read (nothing
// blocks, nothing reads without end), a file over the size limit is refused, JSON nested deeper
// than kMaxJsonDepth is refused before a parser builds it (a deep document crashed every reader),
// and a number beyond double is an ordinary error naming the file.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_node.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

// The ReportError message reading `path` gives, or nullopt when it reads.
std::optional<std::string> read_error(const std::filesystem::path& path) {
  try {
    read_report_json(path);
  } catch (const ReportError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void write_file(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string deep_json(int depth) {  // the repro: a key after the deep value
  return "{\"a\":" + std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']') +
         ",\"b\":0}";
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() { saved_ ? ::setenv(name_, saved_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

TEST(InputFile, ADirectoryIsRefusedAsOne) {
  test::TempDir dir;
  const auto error = read_error(dir.path());
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("is a directory"), std::string::npos) << *error;
}

TEST(InputFile, AFifoOrADeviceIsRefusedWithoutReading) {
  test::TempDir dir;
  const auto fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto error = read_error(fifo);  // would block forever if opened for reading
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("is not a regular file"), std::string::npos) << *error;
  const auto zero = read_error("/dev/zero");  // would read without end
  ASSERT_TRUE(zero);
  EXPECT_NE(zero->find("/dev/zero: is not a regular file"), std::string::npos) << *zero;
}

TEST(InputFile, AFileOverTheSizeLimitIsRefusedAndTheLimitCanBeRaised) {
  test::TempDir dir;
  const auto path = dir.path() / "big.json";
  write_file(path, std::string(100, ' ') + "{}");
  {
    ScopedEnv limit("KWB_MAX_INPUT_BYTES", "64");
    const auto error = read_error(path);
    ASSERT_TRUE(error);
    EXPECT_NE(error->find("102 bytes, over the 64-byte limit"), std::string::npos) << *error;
    EXPECT_NE(error->find("KWB_MAX_INPUT_BYTES"), std::string::npos) << *error;
  }
  {
    ScopedEnv limit("KWB_MAX_INPUT_BYTES", "1000");
    EXPECT_EQ(read_text_file(path).size(), 102u);
  }
  ScopedEnv bad("KWB_MAX_INPUT_BYTES", "lots");
  EXPECT_THROW(read_text_file(path), ReportError);
}

TEST(InputFile, DeepNestingIsRefusedBeforeAnyParserBuildsIt) {
  test::TempDir dir;
  const auto path = dir.path() / "deep.json";
  write_file(path, deep_json(200000));
  const auto error = read_error(path);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("nested deeper than 256 levels"), std::string::npos) << *error;
  EXPECT_NE(error->find(path.string()), std::string::npos) << *error;
}

TEST(InputFile, DepthCountsArraysAndObjectsButNotBracketsInStrings) {
  EXPECT_NO_THROW(check_json_text(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "f"));
  EXPECT_THROW(check_json_text(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']'), "f"),
               ReportError);
  const std::string brackets_in_a_string = "{\"a\":\"" + std::string(1000, '[') + "\\\"{{\"}";
  EXPECT_NO_THROW(check_json_text(brackets_in_a_string, "f"));
  // Siblings do not add up: depth is nesting, not count.
  std::string siblings = "[";
  for (int i = 0; i < 1000; ++i) siblings += "[],";
  EXPECT_NO_THROW(check_json_text(siblings + "[]]", "f"));
}

// The parser stops at a NUL as at the end of the text: what follows it would go unread.
TEST(InputFile, ANulByteAnywhereIsRefusedWithWhere) {
  const std::string report_then_garbage = std::string("{\"schema\":\"x\"}") + '\0' + "garbage";
  try {
    check_json_text(report_then_garbage, "r.json");
    ADD_FAILURE() << "a NUL byte passed";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: a NUL byte at byte 14"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_json_text(std::string("{\"a\":\"x") + '\0' + "\"}", "f"), ReportError) << "in a string too";
  EXPECT_NO_THROW(check_json_text("{\"a\":\"\\u0000\"}", "f")) << "the escaped form is JSON";
}

TEST(InputFile, ANumberBeyondDoubleNamesTheFile) {
  test::TempDir dir;
  const auto path = dir.path() / "huge.json";
  write_file(path, "{\"schema\": \"kwb.report/1\", \"x\": 1e400}");
  const auto error = read_error(path);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find(path.string()), std::string::npos) << *error;
  EXPECT_NE(error->find("invalid JSON"), std::string::npos) << *error;
}

// The verbs that read reports exit 2 on each, with the file's name, and do not crash or hang.
TEST(InputFileCli, ReadingVerbsRefuseADeepFileAFifoAndADirectoryWithExitTwo) {
  test::TempDir dir;
  const auto deep = dir.path() / "deep.json";
  write_file(deep, deep_json(200000));
  const auto fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string kwb = test::shell_quote(KWB_CLI_PATH);
  for (const auto& input : {deep, fifo, dir.path()}) {
    for (const std::string verb : {"select ", "report "}) {
      const auto r = test::run_command("timeout 20 " + kwb + " " + verb + test::shell_quote(input.string()) +
                                       " --md " + test::shell_quote((dir.path() / "out.md").string()));
      EXPECT_EQ(r.exit_code, 2) << verb << input << ": " << r.output;
      EXPECT_NE(r.output.find(input.string()), std::string::npos) << verb << input << ": " << r.output;
    }
  }
}

}  // namespace
}  // namespace kwb
