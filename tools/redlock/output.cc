// Copyright 2026 The redlock Authors.

#include "tools/redlock/output.h"

#include <cstdio>

namespace redlock::cli {

std::string JsonLine(const Json& json) {
  return json.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                   Json::error_handler_t::replace) +
         "\n";
}

void Print(absl::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace redlock::cli
