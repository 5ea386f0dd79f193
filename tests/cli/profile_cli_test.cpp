// `kwb profile` end to end with the real binary, no GPU: the command it prints for a case of a
// report (mode, seed, metrics and kernels per launch from the record), for an identity alone and
// for a repro line; --import of the checked-in ncu CSV into the report (kwb's counters beside
// ncu's); --run with a stand-in ncu that records its arguments and prints the CSV, so that what
// runs is exactly what is printed; and every bad input refused with exit 2 and the report
// untouched.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/ncu_command.hpp"
#include "harness/record/shell_words.hpp"
#include "tests/support/command.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace profile_cli_test {
namespace {

using test::CommandResult;
using test::shell_quote;

const std::string kCsv = KWB_SOURCE_DIR "/tests/reports/profile/ncu_raw_cross_entropy.csv";
const std::string kCase = "cross_entropy:fused_v1_cluster_row_in_registers:bf16:8192x128256:max_threads=1024";

CommandResult kwb(const std::string& args) { return test::run_command(shell_quote(KWB_CLI_PATH) + " " + args); }

bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

// A report whose first case is the sample CSV's, with kwb's own counters of it: DRAM reads 0.5%
// under ncu's, writes 3% over (outside the agreement).
Report report_with_the_case() {
  Report r = test::rich_report();
  r.run.device->chip.clear();  // a report from before chips were recorded
  for (CaseRecord& c : r.cases) c.ncu_counters.reset();
  CaseRecord& c = r.cases[0];
  c.op = "cross_entropy";
  c.variant = "fused_v1_cluster_row_in_registers";
  c.dtype = DType::bf16;
  c.shape = Shape{{{"tokens", 8192}, {"vocab", 128256}}};
  c.tunables = {{"max_threads", 1024}};  // the variant's default
  c.nvtx_range = kCase;
  c.repro = "kwb run --op cross_entropy --variant fused_v1_cluster_row_in_registers --dtype bf16 --axis tokens=8192 "
            "--axis vocab=128256 --mode cold --preset default --seed 5";
  c.timing->kernels_per_sample = 3;
  CaseCounters own;
  own.source = "cupti";
  own.chip = "GH100";
  own.sets = {"memory"};
  own.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"};
  own.passes = 1;
  for (const char* name : {"count_valid_kernel", "xent_cluster_kernel", "mean_loss_kernel"}) own.kernels.push_back({name, {}, {}});
  own.kernels[1].values = {{"gpu__time_duration.sum", 1300000.0},
                           {"dram__bytes_read.sum", (33280.0 + 2101412352.0 + 32768.0) / 1.005},
                           {"dram__bytes_write.sum", 2099240960.0 / 1.03}};
  own.total = total_over_kernels(own.kernels);
  c.counters = own;
  r.cases[1].nvtx_range = "rmsnorm:fused_v2:fp16:4100x4096";
  return r;
}

struct Fixture {
  test::TempDir dir;
  std::filesystem::path report = dir / "report.json";
  Fixture() { write_report_json(report, report_with_the_case()); }
};

TEST(ProfileCli, PrintsTheCommandOfAReportsCaseWithItsModeSeedMetricsAndKernels) {
  Fixture f;
  const CommandResult r = kwb("profile " + kCase + " --report " + shell_quote(f.report.string()) + " --out " +
                              shell_quote((f.dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "--nvtx-include 'kwb@" + kCase + "/measure/' --launch-skip 3 --launch-count 3 --cache-control "
                     "all --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,"
                     "dram__bytes_write.sum --csv --page raw --print-units base"))
      << r.output;
  EXPECT_TRUE(has(r, "--axis tokens=8192 --axis vocab=128256 --axis max_threads=1024 --seed 5 --mode hot --preset quick "
                     "--timer events"))
      << "the recorded seed" << r.output;
  EXPECT_TRUE(has(r, "kernels per launch: 3, from the report's record of the case")) << r.output;
  EXPECT_TRUE(has(r, "metrics: the metrics kwb collected for the case in the report")) << r.output;
  EXPECT_TRUE(has(r, "Then import its figures: kwb profile --import")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(f.dir / "out")) << "printing runs nothing and writes nothing";
}

TEST(ProfileCli, AnIdentityAloneAndAReproLineQuotedOrAfterTwoDashes) {
  const CommandResult id = kwb("profile rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096");
  ASSERT_EQ(id.exit_code, 0) << id.output;
  EXPECT_TRUE(has(id, "--launch-skip 1 --launch-count 1 --cache-control all")) << id.output;
  EXPECT_TRUE(has(id, "--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,")) << id.output;
  EXPECT_TRUE(has(id, "metrics: the memory set (the default")) << id.output;
  EXPECT_TRUE(has(id, "kernels per launch: 1, from 1, the default: pass --kernels N")) << id.output;

  const std::string repro = "kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 "
                            "--axis cols=4096 --mode hot --preset default --seed 3";
  for (const std::string& args : {"profile " + shell_quote(repro) + " --kernels 2", "profile --kernels 2 -- " + repro}) {
    const CommandResult r = kwb(args);
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_TRUE(has(r, "'kwb@rmsnorm_fwd:fused_v2_vec16:bf16:2048x4096/measure/' --launch-skip 2 --launch-count 2 "
                       "--cache-control none"))
        << args << "\n" << r.output;
    EXPECT_TRUE(has(r, "--seed 3 --mode hot")) << r.output;
  }
}

TEST(ProfileCli, ImportsTheCsvIntoTheReportAndShowsKwbBesideNcu) {
  Fixture f;
  const CommandResult r = kwb("profile --import " + shell_quote(kCsv) + " --report " + shell_quote(f.report.string()) +
                              " --case " + kCase);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Report after = read_report_json(f.report);
  ASSERT_TRUE(after.cases[0].ncu_counters);
  const CaseCounters& ncu = *after.cases[0].ncu_counters;
  EXPECT_EQ(ncu.source, "ncu");
  EXPECT_EQ(ncu.chip, "") << "the rich sample's device names no chip";
  ASSERT_EQ(ncu.kernels.size(), 3u);
  EXPECT_EQ(ncu.total.at("dram__bytes_read.sum"), 33280.0 + 2101412352.0 + 32768.0);
  EXPECT_NE(ncu.note.find("made elsewhere"), std::string::npos) << ncu.note;
  EXPECT_NE(ncu.note.find("--cache-control all --clock-control none"), std::string::npos) << ncu.note;
  EXPECT_TRUE(after.cases[0].counters) << "kwb's own counters kept";
  EXPECT_FALSE(after.cases[1].ncu_counters);
  EXPECT_TRUE(has(r, "1.0050  ok")) << r.output;
  // DRAM bytes written are shown, not held to the agreement (kwb counts the write-back of lines
  // left dirty in the L2, ncu does not).
  EXPECT_TRUE(has(r, "1.0300  -")) << r.output;
  EXPECT_TRUE(has(r, "dram__bytes_write.sum: no value (\"n/a\" or text) for 1 of 3 kernels")) << r.output;
}

TEST(ProfileCli, RunRunsExactlyThePrintedCommandAndImportsItsCsv) {
  Fixture f;
  const auto fake = f.dir / "fake_ncu";
  const auto args_file = f.dir / "ncu_args.txt";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << shell_quote(args_file.string()) << "\ncat " << shell_quote(kCsv)
        << "\necho '==PROF== a message on stderr' >&2\n";
  }
  ::chmod(fake.c_str(), 0755);
  const std::string common = kCase + " --report " + shell_quote(f.report.string()) + " --ncu " +
                             shell_quote(fake.string()) + " --out " + shell_quote((f.dir / "out").string());
  // stdout alone: the printed command (the notes go to stderr)
  const CommandResult printed = test::run_command("(" + shell_quote(KWB_CLI_PATH) + " profile " + common + " 2>/dev/null)");
  ASSERT_EQ(printed.exit_code, 0) << printed.output;
  std::vector<std::string> expected = shell_split(printed.output);
  ASSERT_GE(expected.size(), 3u);
  ASSERT_EQ(expected[expected.size() - 2], ">") << printed.output;
  EXPECT_EQ(expected.back(), (f.dir / "out" / (ncu_file_stem(kCase) + ".csv")).string());
  expected.resize(expected.size() - 2);  // the redirection

  const CommandResult ran = kwb("profile " + common + " --run");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  std::vector<std::string> args;
  std::ifstream in(args_file);
  for (std::string line; std::getline(in, line);) args.push_back(line);
  ASSERT_FALSE(args.empty()) << "the stand-in ncu ran";
  args.insert(args.begin(), fake.string());
  EXPECT_EQ(args, expected);
  const Report after = read_report_json(f.report);
  ASSERT_TRUE(after.cases[0].ncu_counters);
  EXPECT_NE(after.cases[0].ncu_counters->note.find("--cache-control all"), std::string::npos);
  EXPECT_NE(after.cases[0].ncu_counters->note.find("imported from"), std::string::npos);
  EXPECT_TRUE(has(ran, "1.0300  -")) << ran.output;
}

// A stand-in ncu: prints `stdout_text`'s file (or nothing), a line on stderr, exits with `code`.
std::filesystem::path fake_ncu(const std::filesystem::path& dir, const std::string& csv, int code) {
  const auto path = dir / "fake_ncu";
  std::ofstream out(path);
  out << "#!/bin/sh\n" << (csv.empty() ? "" : "cat " + shell_quote(csv) + "\n")
      << "echo '==ERROR== the profiled process failed' >&2\nexit " << code << "\n";
  out.close();
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(ProfileCli, AFailedRunUnderNcuExitsOneWritingWhatCameBack) {
  Fixture f;
  const std::string args = "profile " + kCase + " --run --report " + shell_quote(f.report.string()) + " --out " +
                           shell_quote((f.dir / "out").string()) + " --ncu ";
  // Figures came back but ncu failed: written, exit 1.
  const CommandResult partial = kwb(args + shell_quote(fake_ncu(f.dir.path(), kCsv, 1).string()));
  EXPECT_EQ(partial.exit_code, 1) << partial.output;
  EXPECT_TRUE(has(partial, "ncu exited with 1")) << partial.output;
  EXPECT_TRUE(read_report_json(f.report).cases[0].ncu_counters) << "what came back is kept";

  // Nothing came back: exit 1, ncu's log shown, the report as it was.
  Fixture g;
  const std::string before = read_text_file(g.report);
  const CommandResult none = kwb("profile " + kCase + " --run --report " + shell_quote(g.report.string()) + " --out " +
                                 shell_quote((g.dir / "out").string()) + " --ncu " +
                                 shell_quote(fake_ncu(g.dir.path(), "", 3).string()));
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_TRUE(has(none, "ncu exited with 3 and its output")) << none.output;
  EXPECT_TRUE(has(none, "==ERROR== the profiled process failed")) << "the log's last lines" << none.output;
  EXPECT_EQ(read_text_file(g.report), before);
}

TEST(ProfileCli, RunWithoutNcuPrintsTheCommandToRunElsewhere) {
  Fixture f;
  const std::string before = read_text_file(f.report);
  const CommandResult r =
      test::run_command("PATH=/nonexistent " + shell_quote(KWB_CLI_PATH) + " profile " + kCase + " --run --report " +
                        shell_quote(f.report.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "there is no 'ncu' to run here")) << r.output;
  EXPECT_TRUE(has(r, "--nvtx-include 'kwb@" + kCase + "/measure/'")) << r.output;
  EXPECT_TRUE(has(r, "then import its CSV: kwb profile --import")) << r.output;
  EXPECT_EQ(read_text_file(f.report), before);
}

TEST(ProfileCli, BadInputExitsTwoAndLeavesTheReportAsItWas) {
  Fixture f;
  const std::string report = shell_quote(f.report.string());
  const std::string before = read_text_file(f.report);
  test::TempDir other;
  const auto empty_csv = other / "empty.csv";
  atomic_write_file(empty_csv, "==PROF== Connected\nno table here\n");
  struct Bad {
    std::string args, expect;
  };
  const std::vector<Bad> bad = {
      {"profile", "which case?"},
      {"profile rmsnorm_fwd:fused_v2_vec16", "is not a case identity"},
      {"profile rmsnrom_fwd:fused_v2_vec16:bf16:16384x4096", "did you mean 'rmsnorm_fwd'?"},
      {"profile rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096 --report " + report, "holds no case"},
      {"profile " + kCase + " --report " + shell_quote((other / "missing.json").string()), "missing.json"},
      {"profile --import " + shell_quote(kCsv) + " --case " + kCase, "--import needs --report"},
      {"profile --import " + shell_quote((other / "nope.csv").string()) + " --report " + report + " --case " + kCase,
       "nope.csv"},
      {"profile --import " + shell_quote(empty_csv.string()) + " --report " + report + " --case " + kCase,
       "no table of ncu's raw page"},
      {"profile --import " + shell_quote(kCsv) + " --report " + report + " --case " + kCase +
           " --metrics sm__inst_executed.sum",
       "none of the metrics asked for (sm__inst_executed.sum)"},
      {"profile --import " + shell_quote(kCsv) + " --report " + report + " --case " + kCase + " --counters memroy",
       "did you mean 'memory'"},
      {"profile " + kCase + " --kernels 0", "--kernels"},
      {"profile " + kCase + " --run --import " + shell_quote(kCsv) + " --report " + report, "give one"},
      {"profile " + kCase + " --case " + kCase, "give the case once"},
  };
  for (const Bad& b : bad) {
    const CommandResult r = kwb(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.args << "\n" << r.output;
    EXPECT_TRUE(has(r, b.expect)) << b.args << "\n" << r.output;
  }
  EXPECT_EQ(read_text_file(f.report), before) << "nothing in the report lost or changed";
}

}  // namespace
}  // namespace profile_cli_test
}  // namespace kwb
