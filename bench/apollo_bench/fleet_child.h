#pragma once

// A child bench process hosting one slice of a fleet too large for one
// process (split_fleet.h starts it: this same binary, re-executed with
// --fleet-child and the slice's FleetOptions as hidden flags).
//
// Protocol: text lines over the child's stdin (parent -> child) and stdout
// (child -> parent); every reply is a verb, then "key value" pairs.
//
//   child, once at start:  "started agents <n>"      its slice runs (agents dialled)
//                          "error <message>"         it could not; it exits 1
//   "mark"              -> "marked sessions <s>"     Fleet::Mark: the sum it recorded
//   "report"            -> "counts agents <n> connected <c> synced <y> reconciled <r>
//                           sessions <s> threads <t> fds <f>"  (one line; FleetCounts
//                           of its slice, threads and open files of the process)
//   "quit", or EOF      -> no reply; it stops its agents and exits 0
//   anything else       -> "error unknown command <line>"
//
// Every reply is answered at once from atomics (no wait on the agents), so
// the parent can ask every 100 ms.
//
// The child dies with its parent (PR_SET_PDEATHSIG, set by the parent
// between fork and exec). Its fd 1 is pointed at stderr once it starts, so
// only the protocol's replies reach the parent.

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "apollo_bench/fleet.h"

namespace apollo::bench {

inline constexpr char kFleetChildFlag[] = "--fleet-child";
inline constexpr char kMark[] = "mark";
inline constexpr char kReport[] = "report";
inline constexpr char kQuit[] = "quit";

// The hidden flags (CLI11 group "": not in --help) that carry a slice: set
// *is_child and fill *slice when they are given.
void AddFleetChildOptions(CLI::App& app, bool* is_child, FleetOptions* slice);
// The arguments after argv[0] that make a child host `slice`.
std::vector<std::string> FleetChildArgs(const FleetOptions& slice);

// Runs the child side of the protocol on stdin/stdout until "quit" or EOF.
// Returns the exit code: 0, or 1 if its slice did not start.
int RunFleetChild(const FleetOptions& slice);

// A reply line split into its verb and its "key value" pairs ("error":
// none, its message is `text`). A value that is not a number, or a key
// without a value: InvalidArgument.
struct Reply {
  std::string verb;
  std::string text;  // the line after the verb and its space
  std::map<std::string, int64_t> values;
};
Result<Reply> ParseReply(const std::string& line);
std::string FormatCounts(const FleetCounts& counts);
// The fields FormatCounts wrote (processes = 1); a missing one: InvalidArgument.
Result<FleetCounts> CountsFromReply(const Reply& reply);

}  // namespace apollo::bench
