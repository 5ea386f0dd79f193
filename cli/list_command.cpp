// `kwb list`: every op with its axes, dtypes and default shapes, and its variants.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/registry.hpp"
#include "cli/flag_values.hpp"
#include "harness/plan/suggest.hpp"
#include "reports/catalogue/catalogue_markdown.hpp"

namespace kwb::cli {

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List ops, their axes and dtypes, and their variants");
  static bool include_test = false;
  static std::vector<std::string> only_ops;
  cmd->add_option("--op", only_ops, "Only these ops")->delimiter(',');
  static bool markdown = false;
  cmd->add_flag("--markdown", markdown,
                "Print the catalogue page (docs/catalogue.md): formulas, tensors, bytes, shapes, variants");
  cmd->add_flag("--include-test-variants", include_test,
                "Also show test-only ops and variants (fault injection, contract tests)");
  cmd->callback([&exit_code] {
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
    for (const auto& op : registry.ops()) {
      if (!only_ops.empty() && std::find(only_ops.begin(), only_ops.end(), op.name) == only_ops.end())
        continue;
      if (op.test_only && !include_test) continue;
      std::cout << fmt::format("{}  {}\n", op.name, op.description);
      std::string dtypes;
      for (auto d : op.dtypes) dtypes += (dtypes.empty() ? "" : ",") + std::string(to_string(d));
      std::cout << fmt::format("  dtypes: {}\n", dtypes);
      for (const auto& a : op.axes) {
        if (a.is_choice()) {
          std::string names;
          for (const auto& c : a.choices) {
            if (!names.empty()) names += ',';
            names += c;
          }
          std::cout << fmt::format("  axis {:<6} one of {:<7} {} (default {})\n", a.name, names,
                                   a.help, a.choices.front());
        } else {
          std::cout << fmt::format("  axis {:<6} default {:<7} {}\n", a.name, a.default_value, a.help);
        }
      }
      std::string shapes;
      for (const auto& s : op.default_shapes) shapes += (shapes.empty() ? "" : " ") + s.to_compact();
      if (!shapes.empty()) std::cout << fmt::format("  default shapes: {}\n", shapes);
      for (const Variant* v : registry.variants(op.name, include_test)) {
        std::cout << fmt::format("  {:<9} {:<30} {}\n", to_string(v->role), v->name, v->description);
        const std::string uses = uses_text(v->uses);
        std::cout << fmt::format("  {:<9}   math {}{}\n", "", math_summary(op, *v), uses.empty() ? "" : "; uses " + uses);
        for (const Tunable& t : v->tunables) {
          std::string values;
          for (auto x : t.values) {
            if (!values.empty()) values += ',';
            values += std::to_string(x);
          }
          std::cout << fmt::format("  {:<9}   tunable {} = {} (default {}; sweep with --axis {}=...) {}\n",
                                   "", t.name, values, default_text(t), t.name, t.help);
        }
      }
      std::cout << "\n";
    }
    exit_code = kExitOk;
  });
}

}  // namespace kwb::cli
