// scaletwin collective: placeholder until the subcommand lands (replaced by its owner).
#include "cli/command.hpp"
#include "core/error.hpp"

namespace scaletwin::cli {

void add_collective_command(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("collective", "not implemented yet");
  sub->callback([&action] { action = []() -> int { throw InternalError("collective: not implemented yet"); }; });
}

}  // namespace scaletwin::cli
