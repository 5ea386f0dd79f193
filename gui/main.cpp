// kwb-gui: the Kernel Workbench desktop app. Opens the reports named on the command line;
// --screenshot renders a few frames of one view and writes a PNG (tests, docs); --check only
// loads the reports and prints what the status panel would say (no window needed).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "gui/app/app.hpp"
#include "gui/model/workbench.hpp"

namespace {

// "1600x1000" -> width, height; false when malformed.
bool parse_size(const std::string& text, int& w, int& h) {
  return std::sscanf(text.c_str(), "%dx%d", &w, &h) == 2 && w >= 200 && h >= 150 && w <= 16384 &&
         h <= 16384;
}

// Loads every report as the app would and prints the messages; 2 when one could not be opened.
int check_reports(const std::vector<std::string>& reports) {
  kwb::gui::Workbench wb;
  bool failed = false;
  for (const auto& path : reports) failed |= !wb.open(path);
  for (const auto& m : wb.messages())
    std::printf("%s: %s\n",
                m.level == kwb::gui::Message::Level::error     ? "error"
                : m.level == kwb::gui::Message::Level::warning ? "warning"
                                                               : "info",
                m.text.c_str());
  return failed ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "kwb-gui: explore Kernel Workbench reports (roofline, results table, sweeps, case detail, "
      "compare)"};
  kwb::gui::AppOptions options;
  std::string view, size = "1600x1000";
  bool check = false;
  cli.add_option("reports", options.reports,
                 "report.json files to open (kwb run, kwb merge)");
  cli.add_option("--screenshot", options.screenshot,
                 "render, write this PNG and exit (headless: run under xvfb-run)");
  cli.add_option("--view", view,
                 "show only this view: table, roofline, sweep, detail, compare, or live (the live run window)")
      ->check(CLI::IsMember({"table", "roofline", "sweep", "detail", "compare", "live"}));
  cli.add_option("--scale", options.text_scale,
                 "text size, 1 = 13 px (default: the one chosen in View > Text size, else the screen's scale)")
      ->check(CLI::Range(0.5, 4.0));
  cli.add_option("--size", size, "window size, WIDTHxHEIGHT")->capture_default_str();
  cli.add_option("--frames", options.frames,
                 "exit after this many frames (default 4 with --screenshot)");
  cli.add_flag("--fps", options.print_fps, "print the frames per second at exit (with --frames)");
  cli.add_flag("--check", check,
               "load the reports, print what the app would say about them, exit (no window)");
  CLI11_PARSE(cli, argc, argv);

  if (check) return check_reports(options.reports);
  if (!parse_size(size, options.width, options.height)) {
    std::fprintf(stderr, "kwb-gui: --size %s: expected WIDTHxHEIGHT, e.g. 1600x1000\n",
                 size.c_str());
    return 2;
  }
  if (view == "live") {
    options.live = true;
  } else if (!view.empty()) {
    options.view = kwb::gui::parse_view(view);
  }
  if (!options.screenshot.empty() && options.frames <= 0) options.frames = 4;
  return kwb::gui::run_app(options);
}
