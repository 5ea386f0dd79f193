// The record codec keeps a choice axis a JSON string, an integer axis a number, and the tunables;
// reading refuses a shape value of the wrong JSON type. CSV shows both as columns.
#include "harness/record/record_json.hpp"

#include <gtest/gtest.h>

#include <random>

#include "harness/record/csv_report.hpp"
#include "harness/record/json_report.hpp"

namespace kwb {
namespace {

CaseRecord choice_record(std::int64_t seq, std::int64_t block) {
  CaseRecord c;
  c.index = 3;
  c.op = "test_seq_sum";
  c.variant = "test_atomic_scatter";
  c.shape = Shape{{{"batch", 2}, {"seq", seq}, {"layout", "bhsd"}, {"causal", "1"}}};
  c.tunables = {{"block", block}, {"unroll", 4}};
  c.disposition = Disposition::skipped;
  c.reason = "no GPU";
  c.nvtx_range = "test_seq_sum:test_atomic_scatter:fp32:2x" + std::to_string(seq) +
                 ",layout=bhsd,causal=1:block=" + std::to_string(block) + ",unroll=4";
  return c;
}

TEST(RecordJson, ChoiceIsAStringIntegerANumberAndBothRoundTripWithTunables) {
  std::mt19937_64 rng(7);
  const std::int64_t seq = 1 + static_cast<std::int64_t>(rng() % 4096);
  const std::int64_t block = 32 * (1 + static_cast<std::int64_t>(rng() % 32));
  const CaseRecord c = choice_record(seq, block);
  const auto j = to_json(c);
  EXPECT_TRUE(j["shape"]["layout"].is_string());
  EXPECT_TRUE(j["shape"]["causal"].is_string());
  EXPECT_TRUE(j["shape"]["seq"].is_number_integer());
  EXPECT_EQ(j["tunables"]["block"], block);
  const CaseRecord back = case_from_json(j);
  EXPECT_EQ(back.shape, c.shape);
  EXPECT_EQ(back.tunables, c.tunables);
  EXPECT_EQ(back.nvtx_range, c.nvtx_range);
  EXPECT_EQ(back.shape.choice("layout"), "bhsd");
  EXPECT_EQ(back.shape.at("seq"), seq);
}

TEST(RecordJson, MissingTunablesOrAWrongTunableTypeIsRefused) {
  auto j = to_json(choice_record(64, 128));
  auto without = j;
  without.erase("tunables");
  EXPECT_ANY_THROW(case_from_json(without));
  j["tunables"]["block"] = "big";
  EXPECT_ANY_THROW(case_from_json(j));
}

TEST(RecordJson, UsesAndMathRoundTripAndAreEmptyInAReportWrittenBeforeThem) {
  CaseRecord c = choice_record(64, 128);
  c.uses = {"cuBLASLt"};
  c.math = "tf32";
  c.derived = Derived{};
  c.derived->speedup_vs_baseline = 2.5;
  c.derived->baseline_variant = "baseline_eager";
  c.derived->baseline_math = "fp32";
  auto j = to_json(c);
  EXPECT_EQ(j["uses"], nlohmann::ordered_json::array({"cuBLASLt"}));
  EXPECT_EQ(j["math"], "tf32");
  EXPECT_EQ(j["derived"]["baseline_math"], "fp32");
  const CaseRecord back = case_from_json(j);
  EXPECT_EQ(back.uses, c.uses);
  EXPECT_EQ(back.math, "tf32");
  EXPECT_EQ(back.derived->baseline_math, "fp32");
  // An older report: none of the three keys. Read as unknown, not refused.
  j.erase("uses");
  j.erase("math");
  j["derived"].erase("baseline_math");
  const CaseRecord old = case_from_json(j);
  EXPECT_TRUE(old.uses.empty());
  EXPECT_EQ(old.math, "");
  EXPECT_EQ(old.derived->baseline_math, "");
  // Present but of the wrong type: refused, naming the key.
  j["uses"] = "cuBLASLt";
  try {
    case_from_json(j);
    ADD_FAILURE() << "a string where the uses list belongs was read";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("uses"), std::string::npos) << e.what();
  }
}

TEST(RecordJson, OracleSourceRoundTripsAndIsAbsentWhenUnknown) {
  CaseRecord c = choice_record(64, 128);
  c.disposition = Disposition::passed;
  c.verify = VerifyResult{};
  c.verify->passed = true;
  c.verify->oracle_source = "cache";
  auto j = to_json(c);
  EXPECT_EQ(j["verify"]["oracle_source"], "cache");
  EXPECT_EQ(case_from_json(j).verify->oracle_source, "cache");
  // A report written before the oracle cache: no key, read as unknown.
  j["verify"].erase("oracle_source");
  EXPECT_EQ(case_from_json(j).verify->oracle_source, "");
  c.verify->oracle_source.clear();
  EXPECT_FALSE(to_json(c)["verify"].contains("oracle_source"));
}

TEST(CsvReport, ChoiceCellsAreNamesAndTunablesHaveTheirOwnColumns) {
  Report report;
  report.cases = {choice_record(64, 256)};
  const auto rows = parse_csv(to_csv(report));
  ASSERT_EQ(rows.size(), 2u);
  auto cell = [&](const std::string& column) {
    for (std::size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == column) return rows[1][i];
    ADD_FAILURE() << "no column " << column;
    return std::string();
  };
  EXPECT_EQ(cell("axis_layout"), "bhsd");
  EXPECT_EQ(cell("axis_causal"), "1");
  EXPECT_EQ(cell("axis_seq"), "64");
  EXPECT_EQ(cell("tunable_block"), "256");
  EXPECT_EQ(cell("tunable_unroll"), "4");
  EXPECT_EQ(cell("shape"), "2x64,layout=bhsd,causal=1");
}

}  // namespace
}  // namespace kwb
