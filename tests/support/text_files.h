// Copyright 2026 The redlock Authors.
//
// Small helpers the tests that read files and the `redlock` tool's output
// share.

#ifndef REDLOCK_TESTS_SUPPORT_TEXT_FILES_H_
#define REDLOCK_TESTS_SUPPORT_TEXT_FILES_H_

#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace redlock::testing {

// The whole file, bytes as they are; empty if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "key=value" lines (the tool's acquire output); other lines are skipped.
inline std::map<std::string, std::string> KeyValues(absl::string_view text) {
  std::map<std::string, std::string> kv;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return kv;
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_TEXT_FILES_H_
