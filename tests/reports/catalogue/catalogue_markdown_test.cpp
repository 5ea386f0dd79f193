// The catalogue page: dims and bytes written in axis names, and docs/catalogue.md equal to what
// the registry generates now (the page cannot drift from the code).
#include "reports/catalogue/catalogue_markdown.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/catalogue/math_label.hpp"

namespace kwb {
namespace {

const Shape kExample{{{"tokens", 8192}, {"heads", 32}, {"head_dim", 128}, {"layout", std::string("bshd")}}};

TEST(CatalogueMarkdown, DimsAreWrittenInAxisNamesProductsAndHalves) {
  EXPECT_EQ(symbolic_dim(8192, kExample), "tokens");
  EXPECT_EQ(symbolic_dim(64, kExample), "head_dim/2");
  EXPECT_EQ(symbolic_dim(8192 * 32, kExample), "tokens·heads");
  EXPECT_EQ(symbolic_dim(33, kExample), "heads+1");
  EXPECT_EQ(symbolic_dim(7, kExample), "7");
}

TEST(CatalogueMarkdown, ADimIsNamedOnlyByAnAxisItFollows) {
  // heads = kv_heads = 32 at this example: a [tokens, kv_heads] dim must not read "heads", and a
  // count of 32 that follows neither (tokens / 256) must stay a number.
  const Shape example{{{"tokens", 8192}, {"heads", 32}, {"kv_heads", 32}}};
  const DimAt kv_heads_dim = [](const Shape& s) -> std::optional<std::int64_t> { return s.at("kv_heads"); };
  const DimAt chunk_count = [](const Shape& s) -> std::optional<std::int64_t> { return s.at("tokens") / 256; };
  EXPECT_EQ(symbolic_dim(32, example, kv_heads_dim), "kv_heads");
  EXPECT_EQ(symbolic_dim(32, example, chunk_count), "32");
  EXPECT_EQ(symbolic_dim(32, example), "heads");  // without a probe: the first axis of that value
  const DimAt tokens_times_heads = [](const Shape& s) -> std::optional<std::int64_t> {
    return s.at("tokens") * s.at("heads");
  };
  EXPECT_EQ(symbolic_dim(8192 * 32, example, tokens_times_heads), "tokens·heads");
}

TEST(CatalogueMarkdown, BytesFormulaGroupsTermsByElementSize) {
  const std::vector<TensorSpec> tensors = {
      {.name = "x", .dims = {8192, 32, 128}},
      {.name = "w", .dims = {128}},
      {.name = "y", .dims = {8192, 32, 128}, .is_output = true},
      {.name = "ids", .dims = {8192}, .elem = ElemType::int32},
      {.name = "dw", .dims = {128}, .is_output = true, .elem = ElemType::fp32},
  };
  EXPECT_EQ(bytes_formula(tensors, kExample), "(head_dim + 2·tokens·heads·head_dim)·s + 4·(head_dim + tokens)");
}

TEST(CatalogueMarkdown, PageNamesEveryOrdinaryOpAndVariantAndNoTestOnes) {
  const std::string page = catalogue_markdown(Registry::instance());
  for (const auto& op : Registry::instance().ops()) {
    EXPECT_EQ(page.find("## " + op.name + "\n") != std::string::npos, !op.test_only) << op.name;
    for (const Variant* v : Registry::instance().variants(op.name, true))
      EXPECT_EQ(page.find("`" + v->name + "`") != std::string::npos, !(v->test_only || op.test_only)) << v->name;
  }
}

TEST(CatalogueMarkdown, VariantTablesSayTheMathAndTheLibrariesAndThePageDefinesTheLabels) {
  const std::string page = catalogue_markdown(Registry::instance());
  for (const MathLabel& m : kMathLabels)
    EXPECT_NE(page.find("- `" + std::string(m.label) + "`: " + m.meaning), std::string::npos) << m.label;
  EXPECT_NE(page.find("| variant | role | math | uses | what it changes and why |"), std::string::npos);
  EXPECT_NE(page.find("| `baseline_cublas_then_bias_relu` | baseline | fp32: fp32; fp16: fp16, fp32 acc; bf16: "
                      "bf16, fp32 acc | cuBLASLt |"),
            std::string::npos);
  EXPECT_NE(page.find("| `fused_v2_vec16` | fused | fp32 | - |"), std::string::npos);
}

TEST(CatalogueMarkdown, DocsPageIsWhatTheRegistryGeneratesNow) {
  const std::string path = std::string(KWB_SOURCE_DIR) + "/docs/catalogue.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing: ./build/kwb list --markdown > docs/catalogue.md";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == catalogue_markdown(Registry::instance()))
      << "docs/catalogue.md differs from the registry: regenerate it with "
         "./build/kwb list --markdown > docs/catalogue.md";
}

}  // namespace
}  // namespace kwb
