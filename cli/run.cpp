// scaletwin run: placeholder until the subcommand lands (replaced by its owner).
#include "cli/command.hpp"
#include "core/error.hpp"

namespace scaletwin::cli {

void add_run_command(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("run", "not implemented yet");
  sub->callback([&action] { action = []() -> int { throw InternalError("run: not implemented yet"); }; });
}

}  // namespace scaletwin::cli
