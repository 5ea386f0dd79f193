// `--plugin PATH` (repeatable) on the verbs that read the catalogue (list, run, tune, select), and how
// they load it: harness/catalogue/plugin_loader.hpp does the work; this words its refusals as the
// verb's, with exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kwb::cli {

// Adds the option to `cmd` (--plugin, also spelt --python), filling `paths`.
void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths);

// Loads each plugin into the catalogue; on a refusal says "VERB: --plugin: <why>" on stderr and
// returns false (the verb then exits 2 before anything runs).
bool load_plugin_flags(const std::string& verb, const std::vector<std::string>& paths);

// Loads the plugins a suite file names (its `plugins:`, paths relative to the file), so that its
// ops and variants are known when the suite is planned. A suite that cannot be read loads
// nothing here (planning reports it, at its line); a refused plugin is reported as
// "VERB: FILE:LINE:COLUMN: plugins[i]: <why>" and returns false.
bool load_suite_plugins(const std::string& verb, const std::string& suite_path);

// `--resume`: loads the plugins a journal's plan flags recorded, each refused (PluginError, naming
// it and both hashes) when its file is no longer the one the run loaded. Throws std::invalid_argument.
void load_journal_plugins(const nlohmann::ordered_json& plan_flags);

}  // namespace kwb::cli
