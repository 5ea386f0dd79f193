// Command lines as text and back (here in record/, below every layer that prints one: repro lines,
// Nsight Compute commands): the words of a pasted `kwb run ...` line, and the printed form
// of a command that a person pastes into a shell (each word quoted where the shell would
// otherwise read something into it).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

struct ShellWordsError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// One word as a POSIX shell reads it back unchanged: left bare when it holds only characters no
// shell treats specially (letters, digits and _ - . / : = , + %), else in single quotes.
std::string shell_quote(std::string_view word);

// The words joined by spaces, each quoted as shell_quote does.
std::string shell_join(const std::vector<std::string>& words);

// A line split into words as sh does, without expanding anything: blanks separate words, '...'
// keeps everything, "..." keeps everything but \" \\ \$ \`, and a backslash outside quotes
// takes the next character. Throws ShellWordsError for an unclosed quote or a trailing backslash.
std::vector<std::string> shell_split(std::string_view line);

}  // namespace kwb
