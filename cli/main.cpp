// kwb: the Kernel Workbench command-line tool.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return kwb::cli::run_cli(argc, argv); }
