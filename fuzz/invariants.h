// Copyright 2026 The redlock Authors.
//
// Invariants that must hold for ANY input to the option parser and the
// reply-to-vote mappers. Shared by the libFuzzer targets (fuzz/*_fuzzer.cc),
// which abort on the first violation, and by
// tests/transport/fuzz_regressions_test.cc, which runs the committed corpus and
// every input a fuzzer ever crashed on through the same checks.
//
// Each Check* function returns an empty string when every invariant holds,
// else a description of the first one that does not.

#ifndef REDLOCK_FUZZ_INVARIANTS_H_
#define REDLOCK_FUZZ_INVARIANTS_H_

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/vote.h"

namespace redlock::fuzz {

// Passwords shorter than this are not looked for in error messages.
inline constexpr size_t kMinCheckedPasswordLength = 3;

// The password text of `uri` exactly as written (still percent-encoded), if
// the URI has one the way ParseMasterUri() reads it: "redis://" (or
// "rediss://", "unix://"), then user
// info up to the last '@', password after its first ':'. Empty if none. The
// result points into `uri`.
inline absl::string_view WrittenPassword(absl::string_view uri) {
  absl::string_view rest;
  for (absl::string_view scheme : {"redis://", "rediss://", "unix://"}) {
    if (uri.substr(0, scheme.size()) == scheme) {
      rest = uri.substr(scheme.size());
      break;
    }
  }
  if (rest.empty()) return {};
  const size_t at = rest.rfind('@');
  if (at == absl::string_view::npos) return {};
  const absl::string_view userinfo = rest.substr(0, at);
  const size_t colon = userinfo.find(':');
  if (colon == absl::string_view::npos) return {};
  return userinfo.substr(colon + 1);
}

// A different byte of the same kind as far as the parser can tell: digits,
// hex letters and other letters rotate within their own group (keeping case);
// anything else stays.
inline char Rotate(char c) {
  if (c >= '0' && c <= '9') return c == '9' ? '0' : c + 1;
  if (c >= 'a' && c <= 'f') return c == 'f' ? 'a' : c + 1;
  if (c >= 'A' && c <= 'F') return c == 'F' ? 'A' : c + 1;
  if (c >= 'g' && c <= 'z') return c == 'z' ? 'g' : c + 1;
  if (c >= 'G' && c <= 'Z') return c == 'Z' ? 'G' : c + 1;
  return c;
}

// True if `text` shows `password`, raw or C-escaped.
inline bool Shows(absl::string_view text, absl::string_view password) {
  return text.find(password) != absl::string_view::npos ||
         text.find(absl::CHexEscape(password)) != absl::string_view::npos;
}

// `message` was produced from `input`, and `password` points into `input`.
// It must not show the password. A message may show the same bytes by
// coincidence (its own words, or a host spelled like the password), so a
// leak is reported only if they are really the password's: `produce` is run
// again on the input with the password's letters and digits changed
// (Rotate(), which keeps every parser decision the same), and that message
// must no longer show the original bytes.
template <typename Produce>
std::string CheckPasswordHidden(absl::string_view message,
                                absl::string_view input,
                                absl::string_view password, Produce produce) {
  if (password.size() < kMinCheckedPasswordLength) return "";
  if (!Shows(message, password)) return "";
  std::string altered(input);
  const size_t offset = static_cast<size_t>(password.data() - input.data());
  bool changed = false;
  for (size_t i = offset; i < offset + password.size(); ++i) {
    const char rotated = Rotate(altered[i]);
    changed |= rotated != altered[i];
    altered[i] = rotated;
  }
  if (!changed) return "";  // Nothing to tell a leak from a coincidence by.
  if (Shows(produce(altered), password)) return "";  // A coincidence.
  return absl::StrCat("error message shows the password \"",
                      absl::CHexEscape(password),
                      "\": ", absl::CHexEscape(message));
}

// What an accepted URI must have given.
inline std::string CheckAddress(const MasterAddress& address) {
  if (address.transport == MasterAddress::Transport::kUnix) {
    // A socket path instead of a host and port.
    if (address.path.empty() || address.path[0] != '/') {
      return "accepted a Unix socket without an absolute path";
    }
    if (!address.host.empty() || address.port != 0) {
      return "a Unix socket with a host or port";
    }
  } else {
    if (address.host.empty()) return "accepted a URI with an empty host";
    if (address.port < 1 || address.port > 65535) {
      return absl::StrCat("accepted port ", address.port);
    }
  }
  if (address.db < 0) return absl::StrCat("accepted db ", address.db);
  if (address.has_password != !address.password.empty()) {
    return "has_password disagrees with the password";
  }
  if (!address.has_password && !address.user.empty()) {
    return "a user without a password";
  }
  return "";
}

// ParseMasterUri() on arbitrary bytes.
inline std::string CheckMasterUri(absl::string_view uri) {
  absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
  if (address.ok()) {
    std::string problem = CheckAddress(*address);
    if (!problem.empty()) {
      return absl::StrCat(problem, " from \"", absl::CHexEscape(uri), "\"");
    }
    return "";  // Name() holds no password: it is made of host, port, db.
  }
  if (address.status().code() != absl::StatusCode::kInvalidArgument) {
    return absl::StrCat("error is not kInvalidArgument: ",
                        address.status().ToString());
  }
  return CheckPasswordHidden(
      address.status().message(), uri, WrittenPassword(uri),
      [](absl::string_view altered) {
        return std::string(ParseMasterUri(altered).status().message());
      });
}

// ValidateOptions() with `input` split on ',' as the masters.
inline std::string CheckValidateOptions(absl::string_view input) {
  auto validate = [](absl::string_view text) {
    Options options;
    options.masters = absl::StrSplit(text, ',');
    return ValidateOptions(options);
  };
  const std::vector<absl::string_view> uris = absl::StrSplit(input, ',');
  const absl::Status status = validate(input);
  if (status.ok()) {
    // Every master it accepted parses on its own, to a sane address.
    for (absl::string_view uri : uris) {
      absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
      if (!address.ok()) {
        return absl::StrCat(
            "ValidateOptions accepted \"", absl::CHexEscape(uri),
            "\" which ParseMasterUri rejects: ", address.status().ToString());
      }
      if (std::string problem = CheckAddress(*address); !problem.empty()) {
        return problem;
      }
    }
    return "";
  }
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    return absl::StrCat("error is not kInvalidArgument: ", status.ToString());
  }
  for (absl::string_view uri : uris) {
    if (std::string problem = CheckPasswordHidden(
            status.message(), input, WrittenPassword(uri),
            [&validate](absl::string_view altered) {
              return std::string(validate(altered).message());
            });
        !problem.empty()) {
      return problem;
    }
  }
  return "";
}

// The converted reply says what hiredis parsed (deep enough nesting is cut
// off by FromHiredis, by design; hiredis 0.14 never nests that deep).
inline std::string CheckConverted(const redisReply* raw,
                                  const internal::RedisReply& reply,
                                  int depth = 0) {
  using Type = internal::RedisReply::Type;
  switch (raw->type) {
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STRING: {
      const Type want = raw->type == REDIS_REPLY_STATUS  ? Type::kStatus
                        : raw->type == REDIS_REPLY_ERROR ? Type::kError
                                                         : Type::kString;
      if (reply.type != want) return "string-like reply changed type";
      if (reply.str != absl::string_view(raw->str, raw->len)) {
        return "string-like reply changed text";
      }
      return "";
    }
    case REDIS_REPLY_INTEGER:
      if (reply.type != Type::kInteger || reply.integer != raw->integer) {
        return "integer reply changed";
      }
      return "";
    case REDIS_REPLY_ARRAY:
      if (reply.type != Type::kArray) return "array reply changed type";
      if (depth >= 8) return "";  // FromHiredis's depth limit.
      if (reply.elements.size() != raw->elements) {
        return "array reply changed size";
      }
      for (size_t i = 0; i < raw->elements; ++i) {
        std::string problem =
            CheckConverted(raw->element[i], reply.elements[i], depth + 1);
        if (!problem.empty()) return problem;
      }
      return "";
    default:
      if (reply.type != Type::kNil) return "nil reply changed type";
      return "";
  }
}

inline bool IsStrictDecimal(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Every vote mapper on one reply: a grant or denial only from the reply
// shapes src/algorithm/vote.h documents, and an error reply never a vote.
inline std::string CheckVotes(const internal::RedisReply& reply) {
  using internal::FenceRead;
  using internal::Vote;
  using Type = internal::RedisReply::Type;
  auto shape = [&reply](absl::string_view mapper, bool ok) -> std::string {
    if (ok) return "";
    return absl::StrCat(mapper, " voted on a reply it does not document (type ",
                        static_cast<int>(reply.type), ", str \"",
                        absl::CHexEscape(reply.str.substr(0, 64)),
                        "\", integer ", reply.integer, ", ",
                        reply.elements.size(), " elements)");
  };
  auto error_is_failure = [&reply](
                              absl::string_view mapper,
                              const absl::StatusOr<Vote>& vote) -> std::string {
    if (reply.type == Type::kError && vote.ok()) {
      return absl::StrCat(mapper, " turned an error reply into a vote");
    }
    return "";
  };
  std::string problem;

  // SET NX: "OK" granted, nil denied.
  const absl::StatusOr<Vote> acquire = internal::AcquireVote(reply);
  if (acquire.ok()) {
    problem = *acquire == Vote::kGranted
                  ? shape("AcquireVote grant",
                          reply.type == Type::kStatus && reply.str == "OK")
                  : shape("AcquireVote denial", reply.type == Type::kNil);
    if (!problem.empty()) return problem;
  }
  if (problem = error_is_failure("AcquireVote", acquire); !problem.empty()) {
    return problem;
  }

  // Token-checked scripts: 1 granted, 0 denied.
  const absl::StatusOr<Vote> script = internal::ScriptVote(reply);
  if (script.ok()) {
    problem = shape("ScriptVote",
                    reply.type == Type::kInteger &&
                        reply.integer == (*script == Vote::kGranted ? 1 : 0));
    if (!problem.empty()) return problem;
  }
  if (problem = error_is_failure("ScriptVote", script); !problem.empty()) {
    return problem;
  }

  // Fenced acquire: {1|0, a counter per resource (at least one), marker}.
  const absl::StatusOr<Vote> fenced = internal::FencedAcquireVote(reply);
  if (fenced.ok()) {
    problem = shape(
        "FencedAcquireVote",
        reply.type == Type::kArray && reply.elements.size() >= 3 &&
            reply.elements[0].type == Type::kInteger &&
            reply.elements[0].integer == (*fenced == Vote::kGranted ? 1 : 0));
    if (!problem.empty()) return problem;
  }
  if (problem = error_is_failure("FencedAcquireVote", fenced);
      !problem.empty()) {
    return problem;
  }

  // The fenced acquire's read: only from a well-formed reply; the counter is
  // the highest number the reply carried, present only if every one was.
  const absl::StatusOr<FenceRead> read = internal::ParseFenceRead(reply);
  if (read.ok()) {
    if (!fenced.ok()) return "ParseFenceRead accepted what the vote rejected";
    if (reply.elements.back().type != Type::kString) {
      return "ParseFenceRead accepted a marker that is no string";
    }
    bool all_present = true;
    uint64_t highest = 0;
    for (size_t i = 1; i + 1 < reply.elements.size(); ++i) {
      const auto& counter = reply.elements[i];
      if (counter.type != Type::kString) {
        return "ParseFenceRead accepted a counter that is no string";
      }
      if (counter.str.empty()) {
        all_present = false;
        continue;
      }
      uint64_t value = 0;
      if (!IsStrictDecimal(counter.str) ||
          !absl::SimpleAtoi(counter.str, &value)) {
        return absl::StrCat("ParseFenceRead accepted counter \"",
                            absl::CHexEscape(counter.str), "\"");
      }
      highest = std::max(highest, value);
    }
    if (read->counter_present != all_present) {
      return "ParseFenceRead: counter_present disagrees with the reply";
    }
    if (read->counter != highest) {
      return absl::StrCat("ParseFenceRead read counter ", read->counter,
                          " where the highest in the reply is ", highest);
    }
  }

  // ErrorReplyStatus and IsNoScript: an error is never OK.
  if (reply.type == Type::kError &&
      internal::ErrorReplyStatus(reply.str).ok()) {
    return "ErrorReplyStatus gave OK";
  }
  if (internal::IsNoScript(reply) && reply.type != Type::kError) {
    return "IsNoScript on a reply that is no error";
  }
  return "";
}

// Feeds `data` to a hiredis reader (in two pieces, split at `split`, to cover
// replies that arrive in parts), converts and checks every reply it gives.
inline std::string CheckRespStream(absl::string_view data, size_t split) {
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) return "";    // Out of memory: nothing to check.
  internal::BoundReplyReader(reader);  // As every connection of the library.
  std::string problem;
  split = split > data.size() ? data.size() : split;
  const absl::string_view pieces[2] = {data.substr(0, split),
                                       data.substr(split)};
  for (absl::string_view piece : pieces) {
    if (redisReaderFeed(reader, piece.data(), piece.size()) != REDIS_OK) break;
    bool protocol_error = false;
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
        protocol_error = true;  // A protocol error: the connection would close.
        break;
      }
      if (raw == nullptr) break;  // Needs more bytes.
      const auto* hiredis_reply = static_cast<const redisReply*>(raw);
      const internal::RedisReply reply = internal::FromHiredis(hiredis_reply);
      problem = CheckConverted(hiredis_reply, reply);
      if (problem.empty()) problem = CheckVotes(reply);
      freeReplyObject(raw);
      if (!problem.empty()) break;
    }
    if (protocol_error || !problem.empty()) break;
  }
  redisReaderFree(reader);
  return problem;
}

}  // namespace redlock::fuzz

#endif  // REDLOCK_FUZZ_INVARIANTS_H_
