// Copyright 2026 The redlock Authors.
//
// The Prometheus text exposition format (version 0.0.4), written by hand for
// `redlock status --prometheus`: the tool is built without prometheus-cpp,
// and a one-shot process needs no registry, only well-formed lines for
// node_exporter's textfile collector.
//
//   Exposition out;
//   out.Gauge("redlock_master_connected", "1 if ...");
//   out.Sample({{"master", "10.0.0.1:6379"}}, 1);
//   std::string text = out.Text();

#ifndef REDLOCK_TOOLS_REDLOCK_EXPOSITION_H_
#define REDLOCK_TOOLS_REDLOCK_EXPOSITION_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace redlock::cli {

class Exposition {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Starts a gauge family: its # HELP and # TYPE lines. `name` must be a
  // valid metric name; `help` may hold any text (escaped here).
  void Gauge(absl::string_view name, absl::string_view help);

  // One sample of the family started last: name{labels} value. Label names
  // must be valid; values may hold any text (escaped here). `value` is
  // written in the shortest form that reads back as the same double.
  void Sample(const Labels& labels, double value);

  // Everything written so far, each line ending in "\n".
  const std::string& Text() const { return text_; }

 private:
  std::string family_;
  std::string text_;
};

// A label value as the format writes it: backslash, double quote and line
// feed escaped.
std::string EscapeLabelValue(absl::string_view value);

}  // namespace redlock::cli

#endif  // REDLOCK_TOOLS_REDLOCK_EXPOSITION_H_
