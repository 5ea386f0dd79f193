// Edit distance, "did you mean" suggestions, and the unknown-name message built from them.
#include "harness/plan/suggest.hpp"

#include "harness/catalogue/excerpt.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

const std::vector<std::string> kKnownOps = {"layernorm_fwd", "rmsnorm_fwd", "rmsnorm_bwd",
                                            "online_softmax_fwd"};

// ---- edit distance ----

TEST(EditDistance, IdenticalStringsAreZeroApart) {
  EXPECT_EQ(edit_distance("rmsnorm_fwd", "rmsnorm_fwd"), 0u);
  EXPECT_EQ(edit_distance("", ""), 0u);
}

TEST(EditDistance, EmptyStringIsItsLengthAwayFromAnother) {
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(EditDistance, InsertDeleteAndSubstituteEachCostOne) {
  EXPECT_EQ(edit_distance("cat", "cart"), 1u);  // insert
  EXPECT_EQ(edit_distance("cart", "cat"), 1u);  // delete
  EXPECT_EQ(edit_distance("cat", "cut"), 1u);   // substitute
}

TEST(EditDistance, TranspositionCostsTwo) { EXPECT_EQ(edit_distance("rmsnorm", "rmsnrom"), 2u); }

TEST(EditDistance, ClassicKittenSittingIsThree) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3u);
}

// ---- closest match ----

TEST(ClosestMatch, SuggestsCandidateForTransposedLetters) {
  EXPECT_EQ(closest_match("rmsnrom_fwd", kKnownOps), "rmsnorm_fwd");
}

TEST(ClosestMatch, SuggestsTheNearestOfSeveralCloseCandidates) {
  // One edit from rmsnorm_bwd, two from rmsnorm_fwd.
  EXPECT_EQ(closest_match("rmsnorm_bwdd", kKnownOps), "rmsnorm_bwd");
}

TEST(ClosestMatch, TiesGoToTheFirstListedCandidate) {
  EXPECT_EQ(closest_match("rmsnorm_xwd", kKnownOps), "rmsnorm_fwd");
  EXPECT_EQ(closest_match("rmsnorm_xwd", {"rmsnorm_bwd", "rmsnorm_fwd"}), "rmsnorm_bwd");
}

TEST(ClosestMatch, ExactNameMatchesItself) {
  EXPECT_EQ(closest_match("rmsnorm_bwd", kKnownOps), "rmsnorm_bwd");
}

TEST(ClosestMatch, ShortNamesAllowOneEditButNotTwo) {
  EXPECT_EQ(closest_match("row", {"rows", "cols"}), "rows");
  EXPECT_EQ(closest_match("ab", {"cd"}), std::nullopt);
}

TEST(ClosestMatch, SuggestsCandidateContainingAPartialName) {
  // Too many edits away from every candidate, but only one contains it.
  EXPECT_EQ(closest_match("softmax", kKnownOps), "online_softmax_fwd");
}

TEST(ClosestMatch, SuggestsCandidateContainedInAnOverlongName) {
  EXPECT_EQ(closest_match("rmsnorm_fwd_v2_fast", kKnownOps), "rmsnorm_fwd");
}

TEST(ClosestMatch, NoSuggestionForUnrelatedName) {
  EXPECT_EQ(closest_match("matmul", kKnownOps), std::nullopt);
  EXPECT_EQ(closest_match("attention_fwd_causal", kKnownOps), std::nullopt);
}

TEST(ClosestMatch, NoSuggestionFromNoCandidates) {
  EXPECT_EQ(closest_match("rmsnorm_fwd", {}), std::nullopt);
}

TEST(ClosestMatch, EmptyNameIsNotTakenAsASubstringOfEverything) {
  EXPECT_EQ(closest_match("", kKnownOps), std::nullopt);
}

// ---- unknown-name message ----

TEST(UnknownNameMessage, SuggestsTheTypoFixAndListsKnownNames) {
  EXPECT_EQ(unknown_name_message("op", "rmsnrom_fwd", {"layernorm_fwd", "rmsnorm_fwd"}),
            "unknown op 'rmsnrom_fwd' (did you mean 'rmsnorm_fwd'?); known: layernorm_fwd, "
            "rmsnorm_fwd");
}

TEST(UnknownNameMessage, OmitsDidYouMeanWhenNothingIsClose) {
  EXPECT_EQ(unknown_name_message("axis", "batch", {"rows", "cols"}),
            "unknown axis 'batch'; known: rows, cols");
}

TEST(UnknownNameMessage, SaysNoneWhenNothingIsKnown) {
  EXPECT_EQ(unknown_name_message("variant", "fused", {}), "unknown variant 'fused'; known: (none)");
}

// A 100 KB value is quoted by its start and length, not whole; a short one whole.
TEST(UnknownNameMessage, QuotesALongValueByAnExcerpt) {
  const std::string long_name(100000, 'x');
  const std::string m = unknown_name_message("op", long_name, {"rmsnorm_fwd", "softmax_fwd"});
  EXPECT_LT(m.size(), 300u) << m.substr(0, 300);
  EXPECT_NE(m.find("(100000 bytes)"), std::string::npos) << m.substr(0, 300);
  EXPECT_NE(m.find("known: rmsnorm_fwd, softmax_fwd"), std::string::npos);
  EXPECT_NE(unknown_name_message("op", "rmsnrom_fwd", {"rmsnorm_fwd"}).find("'rmsnrom_fwd' (did you mean 'rmsnorm_fwd'?)"),
            std::string::npos);
  // Not cut inside a UTF-8 character: 47 ASCII bytes, then two-byte characters across byte 48.
  std::string utf8(47, 'a');
  for (int i = 0; i < 20; ++i) utf8 += "\xC3\xA9";
  EXPECT_EQ(excerpt(utf8), std::string(47, 'a') + "... (87 bytes)") << "the character at bytes 47-48 is left out whole";
}

}  // namespace
}  // namespace kwb
