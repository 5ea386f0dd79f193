// Reading Nsight Compute's raw-page CSV: the checked-in sample (a three-kernel cross-entropy launch
// with ncu's and kwb's own lines around the table, a units row, thousands separators, quoted
// commas and "n/a"), seeded random tables written the way ncu writes them and read back exactly,
// and every malformed input refused with the line and what to do.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <random>

#include "harness/record/atomic_file.hpp"
#include "reports/profile/ncu_csv.hpp"

namespace kwb {
namespace {

const std::string kSampleCsv = KWB_SOURCE_DIR "/tests/reports/profile/ncu_raw_cross_entropy.csv";

std::string sample_text() { return read_text_file(kSampleCsv); }

// The message of the NcuCsvError `f` throws ("" when it throws none).
template <class F>
std::string csv_error(F&& f) {
  try {
    f();
  } catch (const NcuCsvError& e) {
    return e.what();
  }
  return "";
}

const std::string kHeader =
    R"("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC")";

TEST(NcuCsv, SplitsQuotedFieldsWithCommasAndDoubledQuotes) {
  EXPECT_EQ(split_csv_line(R"c("a","1,234","(1024, 1, 1)","say ""hi""",,plain)c"),
            (std::vector<std::string>{"a", "1,234", "(1024, 1, 1)", R"(say "hi")", "", "plain"}));
  EXPECT_EQ(split_csv_line("x\r"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(split_csv_line(""), (std::vector<std::string>{""}));
  EXPECT_NE(csv_error([] { split_csv_line(R"("a","open,b)"); }).find("not closed"), std::string::npos);
  EXPECT_NE(csv_error([] { split_csv_line(R"("a"b,"c")"); }).find("after a closing quote"), std::string::npos);
}

TEST(NcuCsv, ReadsTheCheckedInSampleAndSkipsWhatSurroundsTheTable) {
  const NcuRawTable t = parse_ncu_raw_csv(sample_text());
  ASSERT_EQ(t.kernels.size(), 3u) << "the ==PROF== lines and kwb's own table are not kernels";
  EXPECT_EQ(t.metrics, (std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum",
                                                 "gpu__time_duration.sum", "launch__func_cache_config",
                                                 "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
                                                 "sm__ops_path_tensor_src_bf16_dst_fp32.sum"}))
      << "the info columns (Kernel Name, Block Size...) are not metrics";
  EXPECT_EQ(t.units.at("dram__bytes_read.sum"), "byte");
  EXPECT_EQ(t.units.at("gpu__time_duration.sum"), "nsecond");
  EXPECT_EQ(t.units.at("lts__t_sector_hit_rate.pct"), "%");

  const NcuKernelRow& cluster = t.kernels[1];
  EXPECT_EQ(cluster.id, "1");
  EXPECT_EQ(cluster.line, 12);
  EXPECT_NE(cluster.name.find("xent_cluster_kernel<__nv_bfloat16, 4>"), std::string::npos) << cluster.name;
  EXPECT_EQ(cluster.values.at("dram__bytes_read.sum"), 2101412352.0) << "thousands separators dropped";
  EXPECT_EQ(cluster.values.at("dram__bytes_write.sum"), 2099240960.0);
  EXPECT_EQ(cluster.values.at("gpu__time_duration.sum"), 1312544.0);
  EXPECT_DOUBLE_EQ(cluster.values.at("lts__t_sector_hit_rate.pct"), 0.41);
  EXPECT_EQ(cluster.text.at("launch__func_cache_config"), "CachePreferNone") << "text stays text";
  EXPECT_EQ(t.kernels[0].not_available, (std::vector<std::string>{"lts__t_sector_hit_rate.pct"}));
  EXPECT_EQ(t.kernels[2].not_available, (std::vector<std::string>{"dram__bytes_write.sum"}));
  EXPECT_FALSE(t.kernels[2].values.count("dram__bytes_write.sum")) << "n/a is no value, never 0";
}

TEST(NcuCsv, CountersOfTheSampleSumCountsAndWeighRatesByDuration) {
  std::vector<std::string> warnings;
  const std::vector<std::string> wanted = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                           "lts__t_sector_hit_rate.pct", "l1tex__t_bytes.sum"};
  const CaseCounters c = counters_from_ncu_table(parse_ncu_raw_csv(sample_text()), wanted, &warnings);
  EXPECT_EQ(c.source, "ncu");
  EXPECT_EQ(c.metrics, (std::vector<std::string>{"gpu__time_duration.sum", "dram__bytes_read.sum",
                                                 "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct"}))
      << "asked-for order, the one the table lacks left out";
  ASSERT_EQ(c.kernels.size(), 3u);
  EXPECT_EQ(c.kernels[0].name, "void kwb::xent::count_valid_kernel(const int *, long, long, int *)");
  EXPECT_FALSE(c.kernels[0].values.count("launch__func_cache_config")) << "only the metrics asked for";
  EXPECT_EQ(c.total.at("dram__bytes_read.sum"), 33280.0 + 2101412352.0 + 32768.0);
  EXPECT_EQ(c.total.at("dram__bytes_write.sum"), 0.0 + 2099240960.0) << "the n/a kernel adds nothing";
  EXPECT_EQ(c.total.at("gpu__time_duration.sum"), 3072.0 + 1312544.0 + 2816.0);
  EXPECT_DOUBLE_EQ(c.total.at("lts__t_sector_hit_rate.pct"), (0.41 * 1312544 + 12.5 * 2816) / (1312544 + 2816));
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("lacks 1 of the metrics asked for (left out): l1tex__t_bytes.sum"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("dram__bytes_write.sum: no value (\"n/a\" or text) for 1 of 3 kernels"), std::string::npos)
      << warnings[1];
  EXPECT_NE(warnings[2].find("lts__t_sector_hit_rate.pct"), std::string::npos) << warnings[2];
}

TEST(NcuCsv, WithNoMetricsAskedForEveryMetricColumnIsTaken) {
  const CaseCounters c = counters_from_ncu_table(parse_ncu_raw_csv(sample_text()), {}, nullptr);
  EXPECT_EQ(c.metrics.size(), 7u);
  EXPECT_EQ(c.total.at("lts__t_sectors_op_read.sum"), 1040.0 + 65668096.0 + 1024.0);
}

std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

TEST(NcuCsv, RandomTablesWrittenAsNcuWritesThemReadBackExactly) {
  std::mt19937_64 rng(20260101);
  const std::vector<std::string> names = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
                                          "sm__inst_executed.sum", "gpu__time_duration.sum",
                                          "lts__t_sector_hit_rate.pct"};
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t kernels = 1 + rng() % 5;
    std::string text = "==PROF== Connected to process 1 (kwb)\nsome program output, with commas\n" + kHeader;
    std::string units = R"("","","","","","","","","","","")";
    for (const auto& m : names) {
      text += ",\"" + m + "\"";
      units += m.ends_with(".pct") ? R"(,"%")" : m.starts_with("gpu__time") ? R"(,"nsecond")" : R"(,"byte")";
    }
    text += "\n" + units + "\n";
    std::vector<std::map<std::string, double>> expected(kernels);
    for (std::size_t k = 0; k < kernels; ++k) {
      text += fmt::format(R"c("{}","1","kwb","host","kernel_{}(float *, int)","1","7","(256, 1, 1)","({}, 1, 1)","0","9.0")c",
                          k, k, 1 + rng() % 100000);
      for (const auto& m : names) {
        if (rng() % 7 == 0) {
          text += R"(,"n/a")";
          continue;
        }
        if (m.ends_with(".pct")) {
          const double v = static_cast<double>(rng() % 100000) / 1000.0;
          expected[k][m] = v;
          text += fmt::format(",\"{}\"", v);
        } else {
          const std::uint64_t v = rng() % 4000000000000ull;
          expected[k][m] = static_cast<double>(v);
          text += ",\"" + (rng() % 2 ? grouped(v) : std::to_string(v)) + "\"";
        }
      }
      text += "\n";
    }
    text += "==PROF== Disconnected from process 1\n";
    const NcuRawTable t = parse_ncu_raw_csv(text);
    ASSERT_EQ(t.kernels.size(), kernels) << "trial " << trial;
    for (std::size_t k = 0; k < kernels; ++k) {
      EXPECT_EQ(t.kernels[k].values, expected[k]) << "trial " << trial << ", kernel " << k;
      EXPECT_EQ(t.kernels[k].values.size() + t.kernels[k].not_available.size(), names.size());
    }
  }
}

TEST(NcuCsv, DurationsInScaledTimeUnitsComeBackInNanoseconds) {
  const std::string text = kHeader + R"(,"gpu__time_duration.sum","dram__bytes_read.sum")" + "\n" +
                           R"("","","","","","","","","","","","usecond","byte")" + "\n" +
                           R"c("0","1","kwb","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","12.5","1,024")c" + "\n";
  const NcuRawTable t = parse_ncu_raw_csv(text);
  EXPECT_DOUBLE_EQ(t.kernels[0].values.at("gpu__time_duration.sum"), 12500.0);
  EXPECT_EQ(t.kernels[0].values.at("dram__bytes_read.sum"), 1024.0);
}

TEST(NcuCsv, AScaledByteUnitIsRefusedNotGuessed) {
  const std::string text = kHeader + R"(,"dram__bytes_read.sum")" + "\n" +
                           R"("","","","","","","","","","","","Mbyte")" + "\n" +
                           R"c("0","1","kwb","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","2.10")c" + "\n";
  const std::string e = csv_error([&] { counters_from_ncu_table(parse_ncu_raw_csv(text), {"dram__bytes_read.sum"}, nullptr); });
  EXPECT_NE(e.find("'dram__bytes_read.sum' is in 'Mbyte'"), std::string::npos) << e;
  EXPECT_NE(e.find("--print-units base"), std::string::npos) << e;
}

TEST(NcuCsv, MalformedInputIsRefusedWithTheLineAndTheFix) {
  const std::string row = R"c("0","1","kwb","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","5")c";
  const std::string head = kHeader + R"(,"dram__bytes_read.sum")" + "\n";
  struct Bad {
    std::string text, expect;
  };
  const std::vector<Bad> bad = {
      {"", "no table of ncu's raw page"},
      {"just,some\ntext\n", "--csv --page raw"},
      {R"("ID","Process ID","Kernel Name")", "holds no kernel"},
      {R"("ID","Process ID","Process Name","Host Name","Section Name","Metric Name","Metric Unit","Metric Value")",
       "details page"},
      {head + R"("0","1","kwb")" + "\n", "line 2: 3 fields where the header"},
      {head + R"c("x","1","kwb","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","5")c" + "\n",
       "line 2: the ID field reads 'x'"},
      {head + row + "\n" + R"("1","1,kwb)" + "\n", "line 3: a quoted field is not closed"},
      {head + "==PROF== nothing was profiled\n", "NVTX filter matched no launch"},
  };
  for (const Bad& b : bad) {
    const std::string e = csv_error([&] { parse_ncu_raw_csv(b.text); });
    EXPECT_NE(e.find(b.expect), std::string::npos) << "input:\n" << b.text << "\nmessage: " << e;
  }
  EXPECT_TRUE(csv_error([&] { parse_ncu_raw_csv(head + row + "\n"); }).empty()) << "the good table reads";
}

TEST(NcuCsv, ATableWithNoneOfTheMetricsAskedForNamesWhatItHas) {
  const std::string e = csv_error([] {
    counters_from_ncu_table(parse_ncu_raw_csv(sample_text()),
                            {"gpu__time_duration.sum", "sm__inst_executed.sum", "l1tex__t_bytes.sum"}, nullptr);
  });
  EXPECT_NE(e.find("none of the metrics asked for (sm__inst_executed.sum, l1tex__t_bytes.sum)"), std::string::npos)
      << "the duration alone is not what was asked for: " << e;
  EXPECT_NE(e.find("its metric columns: dram__bytes_read.sum, dram__bytes_write.sum"), std::string::npos) << e;
}

}  // namespace
}  // namespace kwb
