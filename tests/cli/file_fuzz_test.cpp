// A seeded fuzzer over the files kwb reads and writes, through the real binary: mutations of the
// committed sample reports, a selection, a suite, a journal, a tuning file and a history store
// (truncated, bytes flipped, numbers made hostile, values of the wrong type, keys dropped, nesting
// deep enough to crash a recursive reader, NUL bytes, long values), special files in their place
// (a folder, a FIFO, /dev/zero, a link loop, an empty file) and hostile output paths (a link to a
// device, a folder, a path under a file, an existing file of another kind). Every reading verb
// meets them: compare, report, select, merge, history add/show, run --suite/--tuning/--resume.
//
// What must hold for every run: no signal, no hang (10 s), at most a bounded address space
// (2 GiB), an exit code the verb documents, and an exit 2 that says why on stderr in a few lines:
// no message may echo a long value whole. A link planted at an output path is still a link after
// the run (an output is never written through a link or over a device).
//
// Replay a failure with the seed it prints: KWB_FUZZ_SEED=<seed> (and KWB_FUZZ_RUNS=<n> for more).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/process_run.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace file_fuzz {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}


// The valid inputs every mutation starts from, made once in `dir`.
struct Originals {
  fs::path report, other_report, selection, suite, tuning, journal_dir, history;

  explicit Originals(const fs::path& dir) {
    const fs::path samples = fs::path(KWB_SOURCE_DIR) / "samples";
    report = dir / "report.json";
    fs::copy_file(samples / "h100-linear-ladder" / "report.json", report);
    other_report = dir / "other.json";
    fs::copy_file(samples / "h100-linear-ladder" / "report.json", other_report);
    selection = dir / "selection.json";
    fs::copy_file(samples / "h100-roofline-review" / "selection.json", selection);
    suite = dir / "suite.yaml";
    fs::copy_file(fs::path(KWB_SOURCE_DIR) / "suites" / "smoke.yaml", suite);
    tuning = dir / "tune.json";
    write_text(tuning,
               R"({"schema": "kwb.tune/1", "op": "rmsnorm_bwd", "variant": "fused_v2_cp_async_row_groups",)"
               R"( "device": "NVIDIA H100 80GB HBM3", "shapes": [{"dtype": "bf16", "shape": {"rows": 16384,)"
               R"( "cols": 4096}, "shape_compact": "16384x4096", "best": {"tunables": {"vectors_per_thread": 2,)"
               R"( "cta_threads": 512, "stages": 2}, "median_us": 100.0}}]})");
    // A journal as `kwb run` leaves it when cut short: `kwb run --resume --no-measure` reads it.
    journal_dir = dir / "journal-run";
    history = dir / "history.sqlite";
    const fs::path cwd = dir / "setup";
    fs::create_directories(cwd);
    const auto listed = test::run_process({KWB_CLI_PATH, "history", "add", "--db", history.string(), report.string()},
                                          cwd, 60);
    history_ok = listed.exit_code == 0 || listed.err.find("SQLite") != std::string::npos;
    if (listed.exit_code != 0) history.clear();  // built without SQLite: no store to mutate
  }
  bool history_ok = false;
};

// One mutation of a text file; `rng` chooses which and where.
class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <class T>
  const T& any(const std::vector<T>& v) { return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))]; }

  // What was done, for the failure message, and the mutated text.
  std::pair<std::string, std::string> mutate(const std::string& text) {
    if (text.empty()) return {"empty", text};
    const std::size_t at = static_cast<std::size_t>(pick(static_cast<int>(text.size())));
    switch (pick(9)) {
      case 0: return {"truncated at " + std::to_string(at), text.substr(0, at)};
      case 1: {
        std::string t = text;
        for (int i = 0, n = 1 + pick(8); i < n; ++i) t[static_cast<std::size_t>(pick(int(t.size())))] ^= char(1 << pick(8));
        return {"bytes flipped near " + std::to_string(at), t};
      }
      case 2: return replace_token(text, at, is_number_char, any(kHostileNumbers), "number");
      case 3: return replace_after_colon(text, at, any(kWrongTypes), "value of another type");
      case 4: return replace_after_colon(text, at, deep(any(kDepths)), "deeply nested value");
      case 5: {
        std::string t = text;
        t.insert(at, 1, '\0');
        return {"NUL byte at " + std::to_string(at), t};
      }
      case 6: {
        if (pick(2)) return replace_after_colon(text, at, "\"" + std::string(100000, 'x') + "\"", "100 KB string");
        // A key of 100 KB: the text before the next colon, from the last quote or line start.
        const std::size_t colon = text.find(':', at);
        if (colon == std::string::npos) return {"unchanged", text};
        const std::size_t start = text.find_last_of("\n{,", colon) + 1;
        return {"100 KB key at byte " + std::to_string(start),
                text.substr(0, start) + " \"" + std::string(100000, 'k') + "\"" + text.substr(colon)};
      }
      case 7: {
        const std::size_t end = std::min(text.size(), at + 1 + static_cast<std::size_t>(pick(400)));
        return {"bytes " + std::to_string(at) + ".." + std::to_string(end) + " removed",
                text.substr(0, at) + text.substr(end)};
      }
      default: {
        const std::size_t line = text.find('\n', at);
        if (line == std::string::npos) return {"appended garbage", text + "\n{\"x\": ]\n"};
        return {"line duplicated at " + std::to_string(line),
                text.substr(0, line + 1) + text.substr(text.rfind('\n', line ? line - 1 : 0) + 1)};
      }
    }
  }

 private:
  static bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == '+'; }

  std::pair<std::string, std::string> replace_token(const std::string& text, std::size_t at, bool (*in)(char),
                                                    const std::string& with, const std::string& what) {
    std::size_t b = text.find_first_of("0123456789", at);
    if (b == std::string::npos) return {"unchanged", text};
    std::size_t e = b;
    while (b > 0 && in(text[b - 1])) --b;
    while (e < text.size() && in(text[e])) ++e;
    return {what + " " + text.substr(b, e - b) + " -> " + with.substr(0, 40), text.substr(0, b) + with + text.substr(e)};
  }

  std::pair<std::string, std::string> replace_after_colon(const std::string& text, std::size_t at,
                                                          const std::string& with, const std::string& what) {
    std::size_t colon = text.find(": ", at);
    if (colon == std::string::npos) colon = text.find(':', at);
    if (colon == std::string::npos) return {"unchanged", text};
    std::size_t b = colon + 1;
    while (b < text.size() && text[b] == ' ') ++b;
    // The value ends at the next comma, newline or closing bracket (a nested value loses its
    // tail, which is just another malformed input).
    const std::size_t e = std::min(text.find_first_of(",\n}]", b), text.size());
    return {what + " at byte " + std::to_string(b), text.substr(0, b) + with + text.substr(e)};
  }

  static std::string deep(int levels) {
    return std::string(static_cast<std::size_t>(levels), '[') + std::string(static_cast<std::size_t>(levels), ']');
  }

  std::mt19937_64 rng_;
  const std::vector<std::string> kHostileNumbers = {
      "1e400", "-1e400", "1e18", "-1", "-0", "18446744073709551616", "-9223372036854775809", "4294967296",
      "NaN", "Infinity", "1e-400", "0.0000000001", "9007199254740993", "2147483648", "00", "1.", "0x10"};
  const std::vector<std::string> kWrongTypes = {"[]", "{}", "null", "true", "\"x\"", "0", "-1", "\"\"", "[1, 2]",
                                                "{\"a\": 1}", "\"\xff\xfe\"", "\"\\u0000\""};
  const std::vector<int> kDepths = {300, 5000, 150000};
};

// One fuzzed run: the verb's argument vector, the exits it documents, and the file under test.
struct FuzzCase {
  std::vector<std::string> argv;
  std::vector<int> allowed_exits;
  std::string what;        // the mutation or special file
  fs::path input;          // the file (or folder) the run was given
  fs::path planted_link;   // an output path that is a link and must stay one
};

bool allowed(const FuzzCase& c, int exit_code) {
  for (int e : c.allowed_exits)
    if (e == exit_code) return true;
  return false;
}

// The longest run of one repeated byte in `text`: a message that echoes a 100 KB value shows it.
std::size_t longest_repeat(const std::string& text) {
  std::size_t best = 0, run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    run = i > 0 && text[i] == text[i - 1] ? run + 1 : 1;
    best = std::max(best, run);
  }
  return best;
}

class FileFuzzer {
 public:
  FileFuzzer(std::uint64_t seed, const Originals& originals, const fs::path& dir)
      : m_(seed), o_(originals), dir_(dir) {}

  // Makes the inputs of run `i` under dir_/i and says how to run it.
  FuzzCase next(std::size_t i) {
    const fs::path here = dir_ / std::to_string(i);
    fs::create_directories(here);
    FuzzCase c;
    const int kind = m_.pick(100);
    if (kind < 8) return special_input(c, here);
    if (kind < 16) return hostile_output(c, here);
    const std::string cli = KWB_CLI_PATH;
    switch (m_.pick(o_.history.empty() ? 9 : 11)) {
      case 0: c.input = mutated(o_.report, here / "base.json", c);
        c.argv = {cli, "compare", c.input, o_.other_report};
        c.allowed_exits = {0, 1, 2};
        break;
      case 1: c.input = mutated(o_.report, here / "new.json", c);
        c.argv = {cli, "compare", o_.report, c.input, "--md", (here / "cmp.md").string()};
        c.allowed_exits = {0, 1, 2};
        break;
      case 2: c.input = mutated(o_.report, here / "report.json", c);
        c.argv = {cli, "report", c.input, "--md", (here / "r.md").string(), "--html", (here / "r.html").string()};
        c.allowed_exits = {0, 2};
        break;
      case 3: c.input = mutated(o_.report, here / "report.json", c);
        c.argv = {cli, "select", c.input, "--out", (here / "sel.json").string()};
        c.allowed_exits = {0, 1, 2};
        break;
      case 4: c.input = mutated(o_.report, here / "shard.json", c);
        c.argv = {cli, "merge", c.input, o_.report, "--out", (here / "merged").string()};
        c.allowed_exits = {0, 1, 2};
        break;
      case 5: c.input = mutated(o_.suite, here / "suite.yaml", c);
        c.argv = {cli, "run", "--suite", c.input, "--list-cases"};
        c.allowed_exits = {0, 2};
        break;
      case 6: c.input = mutated(o_.tuning, here / "tune.json", c);
        c.argv = {cli, "run", "--op", "rmsnorm_bwd", "--tuning", c.input, "--list-cases"};
        c.allowed_exits = {0, 2, 3};
        break;
      case 7: {
        // A journal: the reports' header line and records, as a cut-short run leaves them.
        const fs::path out = here / "out";
        fs::create_directories(out);
        c.input = mutated_text(journal_text(), out / "journal.jsonl", c);
        c.argv = {cli, "run", "--resume", out.string(), "--no-measure"};
        c.allowed_exits = {0, 1, 2};
        break;
      }
      case 8: c.input = mutated(o_.selection, here / "selection.json", c);
        c.argv = {cli, "report", c.input, "--md", (here / "r.md").string()};  // not a report: refused
        c.allowed_exits = {2};
        break;
      case 9: {
        c.input = here / "history.sqlite";
        fs::copy_file(o_.history, c.input);
        auto [what, bytes] = m_.mutate(read_text(c.input));
        c.what = what;
        write_text(c.input, bytes);
        c.argv = {cli, "history", "show", "--db", c.input};
        c.allowed_exits = {0, 2};
        break;
      }
      default: c.input = mutated(o_.report, here / "report.json", c);
        c.argv = {cli, "history", "add", "--db", (here / "h.sqlite").string(), c.input};
        c.allowed_exits = {0, 2};
        break;
    }
    return c;
  }

 private:
  fs::path mutated(const fs::path& from, const fs::path& to, FuzzCase& c) {
    return mutated_text(read_text(from), to, c);
  }
  fs::path mutated_text(const std::string& text, const fs::path& to, FuzzCase& c) {
    auto [what, bytes] = m_.mutate(text);
    c.what = what;
    write_text(to, bytes);
    return to;
  }

  // A journal with no header is refused; one made from a report is refused for its schema. Both
  // reach the journal reader's checks, which is what is fuzzed here.
  std::string journal_text() {
    const std::string report = read_text(o_.report);
    return m_.pick(2) ? report.substr(0, std::min<std::size_t>(report.size(), 20000)) : std::string("{\"schema\": \"kwb.journal/1\"}\n");
  }

  // A special file where a report, suite, tuning file, journal or store is read.
  FuzzCase special_input(FuzzCase& c, const fs::path& here) {
    const std::string cli = KWB_CLI_PATH;
    fs::path input;
    switch (m_.pick(6)) {
      case 0: input = here / "folder.json"; fs::create_directories(input); c.what = "a folder"; break;
      case 1: input = here / "fifo.json"; mkfifo(input.c_str(), 0644); c.what = "a FIFO"; break;
      case 2: input = "/dev/zero"; c.what = "/dev/zero (endless)"; break;
      case 3: input = here / "loop.json"; fs::create_symlink(here / "loop.json", input); c.what = "a link loop"; break;
      case 4: input = here / "empty.json"; write_text(input, ""); c.what = "an empty file"; break;
      default: input = here / "missing.json"; c.what = "a missing file"; break;
    }
    c.input = input;
    c.allowed_exits = {2};
    switch (m_.pick(8)) {
      case 0: c.argv = {cli, "compare", input, o_.report}; break;
      case 1: c.argv = {cli, "report", input, "--md", (here / "r.md").string()}; break;
      case 2: c.argv = {cli, "select", input}; break;
      case 3: c.argv = {cli, "merge", input, o_.report, "--out", (here / "m").string()}; break;
      case 4: c.argv = {cli, "run", "--suite", input, "--list-cases"}; break;
      case 5: c.argv = {cli, "run", "--op", "rmsnorm_bwd", "--tuning", input, "--list-cases"}; break;
      case 6: c.argv = {cli, "history", "add", "--db", (here / "h.sqlite").string(), input}; break;
      default: c.argv = {cli, "history", "show", "--db", input}; break;
    }
    return c;
  }

  // A valid report and a hostile place to write: refused (exit 2), never written through.
  FuzzCase hostile_output(FuzzCase& c, const fs::path& here) {
    const std::string cli = KWB_CLI_PATH;
    fs::path out;
    switch (m_.pick(5)) {
      case 0: out = here / "to-null.md"; fs::create_symlink("/dev/null", out); c.planted_link = out;
        c.what = "an output that is a link to /dev/null"; break;
      case 1: out = here / "folder.md"; fs::create_directories(out); c.what = "an output that is a folder"; break;
      case 2: write_text(here / "file", "x"); out = here / "file" / "under.md"; c.what = "an output under a file"; break;
      case 3: out = "/proc/self/kwb.md"; c.what = "an output in /proc"; break;
      default: out = here / "dangling.md"; fs::create_symlink(here / "nowhere" / "x.md", out); c.planted_link = out;
        c.what = "an output that is a dangling link"; break;
    }
    c.input = out;
    c.allowed_exits = {2};
    switch (m_.pick(4)) {
      case 0: c.argv = {cli, "report", o_.report, "--md", out}; break;
      case 1: c.argv = {cli, "report", o_.report, "--html", out}; break;
      case 2: c.argv = {cli, "select", o_.report, "--md", out}; break;
      default: c.argv = {cli, "compare", o_.report, o_.other_report, "--md", out}; break;
    }
    return c;
  }

  Mutator m_;
  const Originals& o_;
  fs::path dir_;
};

TEST(FileFuzz, NoMutatedOrSpecialFileCrashesHangsOrExitsWithoutAShortReason) {
  const std::uint64_t seed = test::env_number("KWB_FUZZ_SEED", 20261126);
  const std::size_t runs = test::env_number("KWB_FUZZ_RUNS", 240);
  std::cout << "[ fuzz ] seed " << seed << ", " << runs << " runs (replay: KWB_FUZZ_SEED=" << seed << ")\n";
  test::TempDir dir;
  const Originals originals(dir.path());
  FileFuzzer fuzzer(seed, originals, dir.path());
  std::vector<FuzzCase> cases;
  for (std::size_t i = 0; i < runs; ++i) cases.push_back(fuzzer.next(i));

  const test::FuzzTally tally = test::run_fuzz_cases(cases.size(), [&](std::size_t i, const fs::path& cwd) {
    const FuzzCase& c = cases[i];
    const auto o = test::run_process(c.argv, cwd, 10, std::uint64_t{2} << 30);
    std::string problem = test::basic_problem(o, 10);
    if (problem.empty() && !allowed(c, o.exit_code)) problem = "exit code " + std::to_string(o.exit_code);
    if (problem.empty() && (o.err.size() > 4000 || longest_repeat(o.err) > 200))
      problem = "a message of " + std::to_string(o.err.size()) + " bytes (a long value echoed whole?)";
    if (problem.empty() && !c.planted_link.empty() && !fs::is_symlink(fs::symlink_status(c.planted_link)))
      problem = "the link at the output path was replaced";
    if (problem.empty()) return std::pair{o, std::string()};
    return std::pair{o, "run " + std::to_string(i) + " (" + c.what + "):" + test::shown_argv(c.argv) + " -> " +
                            problem + "; stderr: " + o.err.substr(0, 400)};
  });
  const int* exits = tally.exits;
  std::cout << "[ fuzz ] exits: 0 x" << exits[0] << ", 1 x" << exits[1] << ", 2 x" << exits[2] << ", 3 x" << exits[3]
            << "\n";
  for (const auto& f : tally.failures) ADD_FAILURE() << "seed " << seed << ", " << f;
  // The mutations must reach both sides: refusals, and inputs that still read.
  EXPECT_GT(exits[2], int(runs / 3)) << "seed " << seed;
  EXPECT_GT(exits[0] + exits[1], int(runs / 20)) << "seed " << seed;
}

}  // namespace file_fuzz
}  // namespace kwb
