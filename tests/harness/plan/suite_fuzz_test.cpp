// Seeded mutations of the shipped suites (characters YAML cares about inserted, deleted or
// swapped; lines repeated or dropped) through parse, plan and thresholds: every outcome is a plan
// or a located refusal (SuiteError / PlanError), never another exception or a crash.
//
// Replay a failure with the seed and round it prints.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "harness/plan/suite_plan.hpp"

namespace kwb {
namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string mutated(std::string text, std::mt19937& rng) {
  static const std::string kSignificant = ":-[]{},#&*!|>'\"%@` \t\n0123456789x+";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits && !text.empty(); ++i) {
    const std::size_t at = rng() % text.size();
    switch (rng() % 5) {
      case 0: text.erase(at, 1 + rng() % 8); break;
      case 1: text.insert(at, 1, kSignificant[rng() % kSignificant.size()]); break;
      case 2: std::swap(text[at], text[rng() % text.size()]); break;
      case 3: {  // repeat the line holding `at`
        const std::size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
        text.insert(begin, line);
        break;
      }
      default: text.resize(at); break;  // cut short
    }
  }
  return text;
}

TEST(SuiteFuzz, MutatedSuitesArePlannedOrRefusedWithALocation) {
  const unsigned seed = std::getenv("KWB_FUZZ_SEED") ? static_cast<unsigned>(std::stoul(std::getenv("KWB_FUZZ_SEED"))) : 1122u;
  std::mt19937 rng(seed);
  std::vector<std::string> originals;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KWB_SOURCE_DIR) / "suites"))
    if (e.path().extension() == ".yaml") originals.push_back(file_text(e.path()));
  ASSERT_FALSE(originals.empty());
  int planned = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string text = mutated(originals[rng() % originals.size()], rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", round " + std::to_string(round) + ":\n" + text);
    try {
      const SuiteFile s = parse_suite(text, "fuzz.yaml");
      plan_suite(s, Registry::instance());
      suite_info(s, Registry::instance());
      ++planned;
    } catch (const SuiteError& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.yaml", 0), 0u) << e.what();
      EXPECT_GE(e.at.line, 1) << e.what();
    } catch (const PlanError&) {
      ++refused;  // the whole suite over --max-cases: a plan-level message
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what();
    }
  }
  EXPECT_GT(refused, 0);  // the mutations do reach the error paths
  EXPECT_GT(planned, 0);  // and some (inside comments, say) leave a valid suite
}

}  // namespace
}  // namespace kwb
