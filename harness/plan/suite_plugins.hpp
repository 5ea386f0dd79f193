// The plugins a suite file names (its `plugins:`: shared libraries and Python files), loaded before
// the suite is planned so that its ops and variants are known: what every front end does first
// with a suite (the CLI, the Python module, the app's live runs).
#pragma once

#include <string>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// Loads each plugin the suite at `suite_path` names into `registry`. A suite that cannot be read
// loads nothing (planning reads it again and says where it is wrong). A refused plugin throws
// SuiteError at its line: "FILE:LINE:COLUMN: plugins[i]: <why>".
void load_suite_plugins(const std::string& suite_path, Registry& registry = Registry::instance());

}  // namespace kwb
