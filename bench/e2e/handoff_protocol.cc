// Copyright 2026 The redlock Authors.

#include "bench/e2e/handoff_protocol.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace redlock::bench {

std::string EncodeReport(const ContenderReport& report) {
  std::string out;
  for (const HandoffSection& s : report.sections) {
    absl::StrAppend(&out, "section ", s.acquire_called_ns, " ", s.acquired_ns,
                    " ", s.release_start_ns, " ", s.release_end_ns, " ",
                    s.attempts, " ", s.slot, " ", s.shared ? 1 : 0, " ",
                    s.won_sent_ns, " ", s.marked_ns, "\n");
  }
  for (const FailedWait& w : report.failed_waits) {
    absl::StrAppend(&out, "failed_wait ", w.called_ns, " ", w.returned_ns,
                    "\n");
  }
  absl::StrAppend(&out, "failed_acquisitions ", report.failed_acquisitions,
                  "\n", "failed_releases ", report.failed_releases, "\n");
  absl::StrAppend(&out, absl::StrFormat("cpu %.6f %.6f\n", report.cpu.user,
                                        report.cpu.sys));
  absl::StrAppend(&out, "requests ", report.requests, "\n",
                  "subscriber_requests ", report.subscriber_requests, "\n",
                  "subscriber_messages ", report.subscriber_messages, "\n",
                  "waiting_ns ", report.waiting_ns, "\n");
  if (!report.last_error.empty()) {
    absl::StrAppend(
        &out, "error ",
        absl::StrReplaceAll(report.last_error, {{"\n", " "}, {"\r", " "}}),
        "\n");
  }
  absl::StrAppend(&out, kHandoffDone, "\n");
  return out;
}

absl::StatusOr<ContenderReport> ParseReport(absl::string_view text) {
  ContenderReport report;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::string_view rest = line; absl::ConsumePrefix(&rest, "error ")) {
      report.last_error = std::string(rest);
      continue;
    }
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    bool ok = false;
    if (f[0] == "section" && f.size() == 10) {
      HandoffSection s;
      int shared = 0;
      ok = absl::SimpleAtoi(f[1], &s.acquire_called_ns) &&
           absl::SimpleAtoi(f[2], &s.acquired_ns) &&
           absl::SimpleAtoi(f[3], &s.release_start_ns) &&
           absl::SimpleAtoi(f[4], &s.release_end_ns) &&
           absl::SimpleAtoi(f[5], &s.attempts) &&
           absl::SimpleAtoi(f[6], &s.slot) && absl::SimpleAtoi(f[7], &shared) &&
           absl::SimpleAtoi(f[8], &s.won_sent_ns) &&
           absl::SimpleAtoi(f[9], &s.marked_ns);
      s.shared = shared != 0;
      report.sections.push_back(s);
    } else if (f[0] == "failed_wait" && f.size() == 3) {
      FailedWait w;
      ok = absl::SimpleAtoi(f[1], &w.called_ns) &&
           absl::SimpleAtoi(f[2], &w.returned_ns);
      report.failed_waits.push_back(w);
    } else if (f[0] == "failed_acquisitions" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.failed_acquisitions);
    } else if (f[0] == "failed_releases" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.failed_releases);
    } else if (f[0] == "cpu" && f.size() == 3) {
      ok = absl::SimpleAtod(f[1], &report.cpu.user) &&
           absl::SimpleAtod(f[2], &report.cpu.sys);
    } else if (f[0] == "requests" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.requests);
    } else if (f[0] == "subscriber_requests" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.subscriber_requests);
    } else if (f[0] == "subscriber_messages" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.subscriber_messages);
    } else if (f[0] == "waiting_ns" && f.size() == 2) {
      ok = absl::SimpleAtoi(f[1], &report.waiting_ns);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("contender report: cannot read \"", line, "\""));
    }
  }
  return report;
}

std::string EncodeGo(int64_t start_ns, int64_t end_ns) {
  return absl::StrCat("go ", start_ns, " ", end_ns, "\n");
}

absl::Status ParseGo(absl::string_view line, int64_t* start_ns,
                     int64_t* end_ns) {
  const std::vector<absl::string_view> f =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.size() != 3 || f[0] != "go" || !absl::SimpleAtoi(f[1], start_ns) ||
      !absl::SimpleAtoi(f[2], end_ns)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected \"go START_NS END_NS\", got \"", line, "\""));
  }
  return absl::OkStatus();
}

}  // namespace redlock::bench
