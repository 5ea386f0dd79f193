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
#include "harness/record/output_paths.hpp"
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

// The JSON library quotes the token it last read; a 100 KB string must not come back whole.
TEST(JsonLibraryMessage, DropsTheIdAndCutsEachQuotedTokenToAnExcerpt) {
  const std::string token(100000, 'x');
  const std::string what = "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while "
                           "parsing value - invalid string: missing closing quote; last read: '\"" + token + "'";
  const std::string message = json_library_message(what);
  EXPECT_TRUE(message.starts_with("parse error at line 1, column 9")) << message;
  EXPECT_LT(message.size(), 250u) << message;
  EXPECT_NE(message.find("(100001 bytes)"), std::string::npos) << message;
  EXPECT_EQ(json_library_message("[json.exception.type_error.302] type must be string, but is number"),
            "type must be string, but is number");
  EXPECT_EQ(json_library_message("number overflow parsing '1e400'"), "number overflow parsing '1e400'");
}

TEST(JsonLibraryMessage, AReportWithALongBadTokenIsRefusedInAFewLines) {
  test::TempDir dir;
  const auto path = dir.path() / "r.json";
  write_file(path, "{\"schema\": \"" + std::string(300000, 'y') + "\n\"}");  // a raw newline inside a string
  try {
    (void)read_report_json(path);
    ADD_FAILURE() << "read";
  } catch (const ReportError& e) {
    const std::string message = e.what();
    EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  }
}

// The reports' folder (run, merge) and single JSON outputs share the check: a .json name taken
// by a file kwb did not write is refused and left; kwb's own files, empty files and other kinds
// of output (.csv, .md) are replaced.
TEST(OutputPaths, AJsonNameTakenByAFileKwbDidNotWriteIsRefused) {
  test::TempDir dir;
  write_file(dir.path() / "report.json", "plain notes");
  const auto refused = check_output_folder(dir.path(), {"report.json", "report.csv"});
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("is not a file kwb wrote"), std::string::npos) << *refused;
  EXPECT_EQ(read_text_file(dir.path() / "report.json"), "plain notes");
  write_file(dir.path() / "report.json", "{\n  \"schema\": \"kwb.report/3\",\n  \"run\": {}}");
  EXPECT_EQ(check_output_folder(dir.path(), {"report.json", "report.csv"}), std::nullopt);
  write_file(dir.path() / "report.json", "{\"schema\":\"other.tool/1\"}");
  EXPECT_TRUE(check_output_file(dir.path() / "report.json").has_value());
  write_file(dir.path() / "empty.json", "  \n");
  EXPECT_EQ(check_output_file(dir.path() / "empty.json"), std::nullopt);
  write_file(dir.path() / "padded.json", std::string(5000, ' ') + "notes");
  EXPECT_TRUE(check_output_file(dir.path() / "padded.json").has_value()) << "blank for 4 KB, then text";
  write_file(dir.path() / "notes.md", "plain notes");
  EXPECT_EQ(check_output_file(dir.path() / "notes.md"), std::nullopt);
}

}  // namespace
}  // namespace kwb

