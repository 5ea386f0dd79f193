// A seeded fuzzer over the real `kwb` binary: a few hundred argument vectors built from the real
// verbs and flags with hostile values (empty, huge, negative, unicode, /proc paths, repeats,
// unknown flags). None may crash (no signal), hang, or exit outside {0, 1, 2, 3}, and an exit 2
// must say why on stderr. On a machine without a GPU every run that passes validation exits 3
// quickly, so the whole test takes seconds.
//
// Replay a failure with the seed it prints: KWB_FUZZ_SEED=<seed> (and KWB_FUZZ_RUNS=<n> for more).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/process_run.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using Outcome = test::ProcessOutcome;

// Values a hostile user (or a broken script) would pass. Absolute paths are ones that cannot be
// written (a run must never write outside its temp working directory).
const std::vector<std::string> kHostile = {
    "", " ", "-1", "-0", "0", "1", "2", "-2147483649", "2147483648", "99999999999999999999",
    "18446744073709551615", "18446744073709551616", "9223372036854775807", "1e308", "1e999", "-1e-9",
    "nan", "inf", "-inf", "0x10", "1.5", "ñandú", "✓🚀", "\xff\xfe", "a b", "'", "\"", "\\", "$HOME",
    "/proc/self", "/proc/self/x", "/dev/null", "/dev/null/x", "..", ".", "--", "-", "--op", "=", ",",
    ",,,", std::string(3000, 'x')};

const std::vector<std::string> kOps = {"rmsnorm_fwd", "rmsnrom_fwd", "RMSNORM_FWD", "rmsnorm_fwd,rmsnorm_fwd"};
const std::vector<std::string> kVariants = {"fused_v2_vec16", "baseline_eager_8_launches", "fused_v1_row_per_block",
                                            "test_hang", "test_fault_illegal_address", "fused_v9"};
const std::vector<std::string> kDtypes = {"bf16", "fp16", "fp32", "fp8", "bf16,bf16", "int4"};
const std::vector<std::string> kAxes = {
    "rows=1024", "cols=512,4100", "cols=1024:16384:x2", "rows=1:4096:+1", "cols=1:4096:+1", "rows=1024:8192:+1024",
    "rows=16k", "cols=2m", "rows=9223372036854775807", "cols=4000000000000", "rows=0", "cols=-4", "rows=1:0",
    "cols=1024:x2", "colz=4", "rows", "=4", "rows=", "rows=1:4096:x1", "rows=5:5", "cols=1e3", "rows=1,1,1"};
const std::vector<std::string> kOutPaths = {"out", "res ults", "deep/er/out", "ñ", "worker.log_dir"};
const std::vector<std::string> kSuites = {std::string(KWB_SOURCE_DIR) + "/suites/smoke.yaml",
                                          std::string(KWB_SOURCE_DIR) + "/suites/nightly.yaml",
                                          std::string(KWB_SOURCE_DIR) + "/suites", "no-such.yaml", "/dev/null",
                                          "/proc/self/status"};

struct Flag {
  std::string name;
  const std::vector<std::string>* good;  // null: a flag without a value
};

class Fuzzer {
 public:
  explicit Fuzzer(std::uint64_t seed) : rng_(seed) {}

  std::vector<std::string> next() {
    std::vector<std::string> args;
    const int verb = pick(100);
    if (verb < 55) {
      args.push_back("run");
      add_flags(args, run_flags_);
    } else if (verb < 70) {
      args.push_back("ceilings");
      add_flags(args, ceilings_flags_);
    } else if (verb < 82) {
      args.push_back("list");
      add_flags(args, list_flags_);
    } else if (verb < 90) {
      args.push_back(any(kHostile));  // an unknown verb, or none
    } else if (verb < 95) {
      args.push_back(pick(2) ? "--version" : "--help");
    } else {
      args.push_back(pick(2) ? "runn" : "ceiling");
      add_flags(args, run_flags_);
    }
    return args;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  const std::string& any(const std::vector<std::string>& v) { return v[pick(int(v.size()))]; }

  void add_flags(std::vector<std::string>& args, const std::vector<Flag>& flags) {
    const int count = pick(7);
    for (int i = 0; i < count; ++i) {
      const Flag& f = flags[pick(int(flags.size()))];
      if (pick(25) == 0) {  // an unknown flag
        args.push_back(pick(2) ? "--no-such-flag" : "-z");
        continue;
      }
      if (!f.good) {
        args.push_back(f.name);
        continue;
      }
      const std::string value = pick(3) == 0 ? any(kHostile) : any(*f.good);
      if (pick(4) == 0) {
        args.push_back(f.name + "=" + value);
      } else {
        args.push_back(f.name);
        if (pick(30) != 0) args.push_back(value);  // sometimes the value is missing
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string> modes_ = {"cold", "hot", "warm"};
  const std::vector<std::string> presets_ = {"quick", "default", "precise", "fast"};
  const std::vector<std::string> timers_ = {"auto", "cupti", "events", "nvtx"};
  const std::vector<std::string> numbers_ = {"0", "1", "7", "120", "0.5", "20000", "1000000", "1000001"};
  const std::vector<Flag> run_flags_ = {
      {"--op", &kOps}, {"-o", &kOps}, {"--variant", &kVariants}, {"-v", &kVariants}, {"--dtype", &kDtypes},
      {"-d", &kDtypes}, {"--axis", &kAxes}, {"-a", &kAxes}, {"--axis", &kAxes}, {"--mode", &modes_},
      {"--preset", &presets_}, {"--out", &kOutPaths}, {"--device", &numbers_}, {"--seed", &numbers_},
      {"--timer", &timers_}, {"--case-timeout", &numbers_}, {"--max-cases", &numbers_},
      {"--include-test-variants", nullptr}, {"--datasheet-ceilings", nullptr}, {"--suite", &kSuites},
      {"--list-cases", nullptr}};
  const std::vector<Flag> ceilings_flags_ = {
      {"--device", &numbers_}, {"--refresh", nullptr}, {"--log", &kOutPaths}};
  const std::vector<Flag> list_flags_ = {{"--op", &kOps}, {"--include-test-variants", nullptr}};
};


TEST(CliFuzz, NoArgumentVectorCrashesHangsOrExitsWithoutSayingWhy) {
  const std::uint64_t seed = test::env_number("KWB_FUZZ_SEED", 20261122);
  const std::size_t runs = test::env_number("KWB_FUZZ_RUNS", 300);
  std::cout << "[ fuzz ] seed " << seed << ", " << runs << " runs (replay: KWB_FUZZ_SEED=" << seed << ")\n";
  Fuzzer fuzzer(seed);
  std::vector<std::vector<std::string>> vectors;
  for (std::size_t i = 0; i < runs; ++i) vectors.push_back(fuzzer.next());

  const test::FuzzTally tally = test::run_fuzz_cases(vectors.size(), [&](std::size_t i, const std::filesystem::path& cwd) {
    std::vector<std::string> argv = {KWB_CLI_PATH};
    argv.insert(argv.end(), vectors[i].begin(), vectors[i].end());
    const Outcome o = test::run_process(argv, cwd, 20);
    std::string problem = test::basic_problem(o, 20);
    if (problem.empty() && (o.exit_code < 0 || o.exit_code > 3)) problem = "exit code " + std::to_string(o.exit_code);
    if (problem.empty()) return std::pair{o, std::string()};
    return std::pair{o, "run " + std::to_string(i) + ":" + test::shown_argv(vectors[i]) + " -> " + problem +
                            "; stderr: " + o.err.substr(0, 300)};
  });
  const int* exit_counts = tally.exits;
  std::cout << "[ fuzz ] exits: 0 x" << exit_counts[0] << ", 1 x" << exit_counts[1] << ", 2 x" << exit_counts[2]
            << ", 3 x" << exit_counts[3] << "\n";
  for (const auto& f : tally.failures) ADD_FAILURE() << "seed " << seed << ", " << f;
  // The vectors must reach both sides: refusals and runs that passed every check.
  EXPECT_GT(exit_counts[2], int(runs / 4)) << "seed " << seed;
  EXPECT_GT(exit_counts[0] + exit_counts[3], int(runs / 20)) << "seed " << seed;
}

}  // namespace
}  // namespace kwb
