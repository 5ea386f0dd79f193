// "Did you mean ...?" suggestions for unknown op, variant and axis names.
#include "harness/plan/suggest.hpp"

#include <algorithm>
#include <numeric>

#include "harness/catalogue/excerpt.hpp"

namespace kwb {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the Levenshtein table at a time: names are short, but there is no need for more.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // row[i-1][j-1]
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];  // row[i-1][j]
      std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view name,
                                         const std::vector<std::string>& candidates) {
  // A typo: the nearest candidate, first listed on ties, if few enough edits separate them
  // that the user plausibly meant it.
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    std::size_t distance = edit_distance(name, candidate);
    std::size_t allowed = std::max<std::size_t>(1, std::max(name.size(), candidate.size()) / 3);
    if (distance <= allowed && (best == nullptr || distance < best_distance)) {
      best = &candidate;
      best_distance = distance;
    }
  }
  if (best != nullptr) return *best;

  // A partial name ("rmsnorm" for "rmsnorm_fwd") or an over-long one ("rmsnorm_fwd_v2") is too
  // far by edits but still clearly points at one candidate. An empty string on either side
  // would "contain" everything, so it never counts.
  for (const auto& candidate : candidates) {
    if (name.empty() || candidate.empty()) continue;
    if (candidate.find(name) != std::string::npos || name.find(candidate) != std::string_view::npos)
      return candidate;
  }
  return std::nullopt;
}

std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& candidates) {
  std::string message = "unknown " + std::string(what) + " '" + excerpt(name) + "'";
  // A long name is no one's typo: no suggestion (and no edit distance over 100 KB).
  if (name.size() <= kExcerptBytes)
    if (auto match = closest_match(name, candidates)) message += " (did you mean '" + *match + "'?)";
  message += "; known: ";
  if (candidates.empty()) return message + "(none)";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) message += ", ";
    message += candidates[i];
  }
  return message;
}

}  // namespace kwb
