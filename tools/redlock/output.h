// Copyright 2026 The redlock Authors.
//
// How the subcommands write their results to stdout: whole texts, flushed
// at once (a script reading `elect --listen` line by line sees each line as
// it is printed), and --json as one object per line.

#ifndef REDLOCK_TOOLS_REDLOCK_OUTPUT_H_
#define REDLOCK_TOOLS_REDLOCK_OUTPUT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace redlock::cli {

// --json output is built with nlohmann::ordered_json: keys come out in the
// order they are set (the order they have always had; scripts may rely on
// it), integers stay integers, and the library escapes the strings.
using Json = nlohmann::ordered_json;

// One object on one line: no spaces, then a newline. Bytes that are not
// UTF-8 (a foreign value under a lock key, a server's error text, an
// election's value) become U+FFFD rather than making the line invalid JSON.
std::string JsonLine(const Json& json);

// Writes `text` to stdout and flushes it.
void Print(absl::string_view text);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_OUTPUT_H_
