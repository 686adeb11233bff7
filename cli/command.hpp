// How subcommands plug into the scaletwin command.
//
// Each subcommand lives in its own file and exposes one function add_NAME_command(root, action): it declares the
// subcommand and its options on `root`, and when the subcommand is chosen, sets `action` to the code to run. main
// parses, runs the action, and turns exceptions into the exit codes of the spec (InputError 2, SystemError 3,
// InternalError 70).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/json_reader.hpp"

namespace scaletwin::cli {

using Action = std::function<int()>;

void add_describe_command(CLI::App& root, Action& action);
void add_collective_command(CLI::App& root, Action& action);
void add_predict_command(CLI::App& root, Action& action);
void add_run_command(CLI::App& root, Action& action);
void add_calibrate_command(CLI::App& root, Action& action);
void add_validate_command(CLI::App& root, Action& action);
void add_compare_command(CLI::App& root, Action& action);
void add_explore_command(CLI::App& root, Action& action);

// Writes `json` (pretty) to `path` atomically; "-" writes to standard output.
void write_json_output(const std::string& path, const Json& json);

// Writes each line of `lines` to standard error, prefixed by "COMMAND: " (notes on the input; nothing when empty).
void print_notes(const std::string& command, const std::string& lines);

// Parses a comma-separated list of positive integers ("1,2,4,8"); InputError naming `option` otherwise.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);
// A check for an integer option that, given, must be at least 1 ("0 nodes" is not "the default"): its message
// says "a positive number of WHAT (got V)".
CLI::Validator positive_count(const std::string& what);
// The items of a comma-separated option value as written ("a,,b" has an empty second item).
std::vector<std::string> comma_items(const std::string& text);

}  // namespace scaletwin::cli
