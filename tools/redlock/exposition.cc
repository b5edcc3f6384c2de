// Copyright 2026 The redlock Authors.

#include "tools/redlock/exposition.h"

#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace redlock::cli {
namespace {

// HELP text: backslash and line feed escaped.
std::string EscapeHelp(absl::string_view help) {
  return absl::StrReplaceAll(help, {{"\\", "\\\\"}, {"\n", "\\n"}});
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest of %.1g .. %.17g that reads back exactly.
  for (int precision = 1; precision < 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    double back = 0;
    if (absl::SimpleAtod(text, &back) && back == value) return text;
  }
  return absl::StrFormat("%.17g", value);
}

}  // namespace

std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value,
                             {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

void Exposition::Gauge(absl::string_view name, absl::string_view help) {
  family_ = std::string(name);
  absl::StrAppend(&text_, "# HELP ", name, " ", EscapeHelp(help), "\n",
                  "# TYPE ", name, " gauge\n");
}

void Exposition::Sample(const Labels& labels, double value) {
  absl::StrAppend(&text_, family_);
  if (!labels.empty()) {
    text_.push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&text_, i == 0 ? "" : ",", labels[i].first, "=\"",
                      EscapeLabelValue(labels[i].second), "\"");
    }
    text_.push_back('}');
  }
  absl::StrAppend(&text_, " ", FormatValue(value), "\n");
}

}  // namespace redlock::cli
