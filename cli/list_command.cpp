// `kwb list`: the catalogue. Without --op, one line per op (its dtypes, how many variants and
// default shapes, what it computes); with --op (or --details), each op's axes, default shapes and
// variants. Op lines start at the left margin and every other line is indented, so that
// `kwb list | awk '/^[a-z]/ {print $1}'` gives the op names in either form.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/registry.hpp"
#include "cli/flag_values.hpp"
#include "cli/plugin_flags.hpp"
#include "harness/catalogue/plugin_loader.hpp"
#include "harness/catalogue/python_module_loader.hpp"
#include "harness/plan/suggest.hpp"
#include "reports/catalogue/catalogue_markdown.hpp"

namespace kwb::cli {
namespace {

constexpr std::size_t kSummaryDescriptionWidth = 50;  // a summary line fits 120 columns

std::string dtypes_of(const Op& op) {
  std::vector<std::string_view> names;
  for (auto d : op.dtypes) names.push_back(to_string(d));
  return fmt::format("{}", fmt::join(names, ","));
}

// The description cut at a word boundary to `width` characters, with "..." when cut.
std::string cut(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t end = text.rfind(' ', width - 3);
  if (end == std::string::npos || end < width / 2) end = width - 3;
  return text.substr(0, end) + "...";
}

// "plugin" (a shared library) or "Python file".
std::string source_kind(const PluginSource& source) {
  return is_python_module_path(source.path) ? "Python file" : "plugin";
}

// Indented, so that `awk '/^[a-z]/'` still reads op names alone: which file each plugin's ops
// and variants came from (its hash is what the report records).
void print_plugins(const Registry& registry) {
  for (const LoadedPlugin& p : loaded_plugins(registry)) {
    std::cout << fmt::format("  {} {} (sha256 {})\n", source_kind(p.source), p.source.path, p.source.sha256.substr(0, 16));
    if (!p.ops.empty()) std::cout << fmt::format("    ops: {}\n", fmt::join(p.ops, ", "));
    if (!p.variants.empty()) std::cout << fmt::format("    variants: {}\n", fmt::join(p.variants, ", "));
  }
}

void print_summary(const std::vector<const Op*>& ops, const Registry& registry, bool include_test) {
  std::size_t name_width = 0, dtype_width = 0;
  for (const Op* op : ops) {
    name_width = std::max(name_width, op->name.size());
    dtype_width = std::max(dtype_width, dtypes_of(*op).size());
  }
  for (const Op* op : ops) {
    const auto variants = registry.variants(op->name, include_test).size();
    std::cout << fmt::format("{:<{}}  {:<{}}  {:>2} variants  {:>2} shapes  {}\n", op->name, name_width,
                             dtypes_of(*op), dtype_width, variants, op->default_shapes.size(),
                             cut(op->description, kSummaryDescriptionWidth));
  }
  print_plugins(registry);
  std::cout << fmt::format("({} ops. `kwb list --op OP[,OP]`: their axes, default shapes, variants, math and "
                           "tunables;\n --details: every op so; --markdown: the catalogue page)\n",
                           ops.size());
}

void print_details(const Op& op, const Registry& registry, bool include_test) {
  std::cout << fmt::format("{}  {}\n", op.name, op.description);
  std::cout << fmt::format("  dtypes: {}\n", dtypes_of(op));
  if (const PluginSource* from = registry.source_of_op(op.name))
    std::cout << fmt::format("  from {} {}\n", source_kind(*from), from->path);
  // Columns sized to this op's longest axis name and value, so that the helps line up.
  std::size_t name_width = 0, value_width = 0;
  auto value_of = [](const AxisSpec& a) {
    return a.is_choice() ? fmt::format("one of {}", fmt::join(a.choices, ",")) : fmt::format("default {}", a.default_value);
  };
  for (const auto& a : op.axes) {
    name_width = std::max(name_width, a.name.size());
    value_width = std::max(value_width, value_of(a).size());
  }
  for (const auto& a : op.axes)
    std::cout << fmt::format("  axis {:<{}}  {:<{}}  {}{}\n", a.name, name_width, value_of(a), value_width, a.help,
                             a.is_choice() ? " (default " + a.choices.front() + ")" : "");
  if (!op.default_shapes.empty()) {
    std::cout << "  default shapes:\n";
    for (const auto& s : op.default_shapes) std::cout << "    " << s.to_assignments() << "\n";
  }
  for (const Variant* v : registry.variants(op.name, include_test)) {
    // The name on its own line: names run to 45 characters, which no column fits.
    std::cout << fmt::format("  {:<9} {}\n", to_string(v->role), v->name);
    std::cout << fmt::format("  {:<9}   {}\n", "", v->description);
    const std::string uses = uses_text(v->uses);
    const std::string math = math_summary(op, *v);
    std::cout << fmt::format("  {:<9}   {}{}\n", "", math.empty() ? "refuses every default and edge shape here" : "math " + math,
                             uses.empty() ? "" : "; uses " + uses);
    if (const PluginSource* from = registry.source_of_variant(op.name, v->name))
      std::cout << fmt::format("  {:<9}   from {} {}\n", "", source_kind(*from), from->path);
    for (const Tunable& t : v->tunables)
      std::cout << fmt::format("  {:<9}   tunable {} = {} (default {}; sweep with --axis {}=...) {}\n", "", t.name,
                               fmt::join(t.values, ","), default_text(t), t.name, t.help);
  }
  std::cout << "\n";
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List ops (one line each); with --op or --details their axes, shapes and variants");
  static bool include_test = false;
  static std::vector<std::string> only_ops;
  cmd->add_option("--op", only_ops, "Show these ops in detail: axes, default shapes, variants")->delimiter(',');
  static bool details = false;
  cmd->add_flag("--details", details, "Show every op in detail (as --op does for one)");
  static bool markdown = false;
  cmd->add_flag("--markdown", markdown,
                "Print the catalogue page (docs/catalogue.md): formulas, tensors, bytes, shapes, variants");
  cmd->add_flag("--include-test-variants", include_test,
                "Also show test-only ops and variants (fault injection, contract tests)");
  static std::vector<std::string> plugins;
  add_plugin_option(cmd, plugins);
  cmd->callback([&exit_code] {
    if (!load_plugin_flags("kwb list", plugins)) {
      exit_code = kExitBadInput;
      return;
    }
    const auto& registry = Registry::instance();
    if (markdown) {
      std::cout << catalogue_markdown(registry);
      exit_code = kExitOk;
      return;
    }
    only_ops = without_repeats(only_ops);
    for (const auto& name : only_ops)
      if (!registry.find_op(name)) {
        std::cerr << "kwb list: --op: " << unknown_name_message("op", name, registry.op_names())
                  << "; `kwb list` without --op shows every op\n";
        exit_code = kExitBadInput;
        return;
      }
    std::vector<const Op*> ops;
    for (const auto& op : registry.ops()) {
      if (!only_ops.empty() && std::find(only_ops.begin(), only_ops.end(), op.name) == only_ops.end()) continue;
      if (op.test_only && !include_test && only_ops.empty()) continue;
      ops.push_back(&op);
    }
    if (only_ops.empty() && !details)
      print_summary(ops, registry, include_test);
    else
      for (const Op* op : ops) print_details(*op, registry, include_test);
    exit_code = kExitOk;
  });
}

}  // namespace kwb::cli
