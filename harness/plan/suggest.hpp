// "Did you mean ...?" for unknown names on the command line and in suite files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate if it is close enough to be a plausible typo (distance at most a third
// of the longer name, at least 1), or a candidate that contains `name`; nullopt otherwise.
std::optional<std::string> closest_match(std::string_view name,
                                         const std::vector<std::string>& candidates);

// "unknown op 'rmsnrom_fwd' (did you mean 'rmsnorm_fwd'?); known: a, b, c"
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& candidates);

}  // namespace kwb
