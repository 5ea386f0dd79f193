// The house's include rules, written as a table, and the check that reads a tree against it.
//
// Every source file belongs to one part of the tree, named by its path (harness/worker/verify/x.cpp
// belongs to harness/worker). A part may include its own files and those of the parts its row
// lists, nothing else. The table reads from the bottom up:
//
//   harness/catalogue   types, registry, case identity, CaseRequest: includes nothing of ours
//   harness/record      Record, Report, their one codec, journal, report files: the vocabulary
//                       every later stage writes into
//   harness/plan        flags, suites and tuning files -> cases
//   harness/worker      one case: prepare, verify, measure
//   harness/derive      work models and ceilings -> figures
//   harness/session     drives the stages: lanes, supervisor, resume
//   reference, kernels  the catalogue's ops and variants (on harness/catalogue alone); the
//                       test-only ops of reference/testing may use the real ones, never the reverse
//   reports             what reads records: review, compare, select, merge, history, tune
//   cli, gui            the two front ends, beside each other (neither includes the other)
//
// Tests may include anything. kernels/testing holds the planted-fault variants that aim at the
// harness's own checks (a NaN outside the verified rows), so it may also see the worker.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kwb::layering {

// The parts, most specific prefix first, each with the parts it may include (itself implied).
struct Part {
  std::string prefix;
  std::vector<std::string> may_include;
};

inline const std::vector<Part>& house_rules() {
  static const std::vector<Part> rules = {
      {"harness/catalogue", {}},
      {"harness/record", {"harness/catalogue"}},
      {"harness/plan", {"harness/catalogue", "harness/record"}},
      {"harness/worker", {"harness/catalogue", "harness/record", "harness/plan"}},
      {"harness/derive", {"harness/catalogue", "harness/record", "harness/plan", "harness/worker"}},
      {"harness/session",
       {"harness/catalogue", "harness/record", "harness/plan", "harness/worker", "harness/derive"}},
      {"reference/testing", {"harness/catalogue", "reference"}},
      {"reference", {"harness/catalogue"}},
      {"kernels/testing", {"harness/catalogue", "reference", "reference/testing", "kernels", "harness/worker"}},
      {"kernels", {"harness/catalogue", "reference"}},
      {"reports",
       {"harness/catalogue", "harness/record", "harness/plan", "harness/worker", "harness/derive",
        "harness/session"}},
      {"cli",
       {"harness/catalogue", "harness/record", "harness/plan", "harness/worker", "harness/derive",
        "harness/session", "reports"}},
      {"gui",
       {"harness/catalogue", "harness/record", "harness/plan", "harness/worker", "harness/derive",
        "harness/session", "reports"}},
  };
  return rules;
}

// The part a repository path belongs to: the longest matching prefix, "" for none (tests, docs).
inline std::string part_of(const std::string& path) {
  std::string best;
  for (const Part& p : house_rules())
    if ((path == p.prefix || path.rfind(p.prefix + "/", 0) == 0) && p.prefix.size() > best.size())
      best = p.prefix;
  return best;
}

struct SourceFile {
  std::string path;  // relative to the repository root
  std::string text;
};

struct Violation {
  std::string file;
  int line = 0;
  std::string include;
  std::string why;
};

// Every `#include "..."` of each file checked against the table. Includes that name no part of
// ours (system and package headers) are not the table's business.
inline std::vector<Violation> check_includes(const std::vector<SourceFile>& files) {
  // Quoted and angle-bracket includes alike: <harness/...> must not slip past the table.
  static const std::regex include_line(R"(^\s*#\s*include\s*["<]([^">]+)[">])");
  std::map<std::string, const Part*> by_prefix;
  for (const Part& p : house_rules()) by_prefix[p.prefix] = &p;
  std::vector<Violation> out;
  for (const SourceFile& f : files) {
    const std::string from = part_of(f.path);
    if (from.empty()) {
      // A stage or report folder the table does not know would escape every rule.
      if (f.path.rfind("harness/", 0) == 0 || f.path.rfind("reports/", 0) == 0)
        out.push_back({f.path, 0, "", "no row of the table covers this folder: add one (tests/support/include_layering.hpp)"});
      continue;
    }
    std::istringstream lines(f.text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string target = m[1];
      if (target.rfind("./", 0) == 0 || target.rfind("../", 0) == 0) {
        out.push_back({f.path, number, target, "a relative include hides which part it reaches: write it from the repository root"});
        continue;
      }
      const std::string to = part_of(target);
      if (to.empty() && target.rfind("tests/", 0) != 0) continue;
      const auto& allowed = by_prefix.at(from)->may_include;
      const bool ok = to == from || std::find(allowed.begin(), allowed.end(), to) != allowed.end();
      if (!ok)
        out.push_back({f.path, number, target,
                       from + " may not include " + (to.empty() ? std::string("tests") : to) +
                           " (tests/support/include_layering.hpp lists what it may include)"});
    }
  }
  return out;
}

// The tree's C++ and CUDA sources under `root`, paths relative to it (build folders skipped).
inline std::vector<SourceFile> read_tree(const std::filesystem::path& root) {
  static const std::set<std::string> kinds = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".in"};
  std::vector<SourceFile> files;
  for (auto it = std::filesystem::recursive_directory_iterator(root);
       it != std::filesystem::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name.front() == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !kinds.count(it->path().extension().string())) continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({std::filesystem::relative(it->path(), root).generic_string(), text.str()});
  }
  return files;
}

}  // namespace kwb::layering
