// Copyright 2026 The redlock Authors.
//
// A Redis reply as a plain value, copied out of hiredis's reply object (which
// hiredis frees as soon as the callback returns), and a request's RESP text.
// No I/O here.

#ifndef REDLOCK_SRC_ALGORITHM_REDIS_REPLY_H_
#define REDLOCK_SRC_ALGORITHM_REDIS_REPLY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

struct redisReply;
struct redisReader;

namespace redlock::internal {

struct RedisReply {
  enum class Type { kStatus, kError, kInteger, kString, kNil, kArray };

  static RedisReply Status(std::string text);
  static RedisReply Error(std::string text);
  static RedisReply Integer(int64_t value);
  static RedisReply String(std::string text);
  static RedisReply Nil();
  static RedisReply Array(std::vector<RedisReply> elements);

  Type type = Type::kNil;
  std::string str;  // kStatus, kError, kString.
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // kArray.

  bool is_error() const { return type == Type::kError; }
  bool is_string() const { return type == Type::kString; }
  bool is_integer() const { return type == Type::kInteger; }
  bool is_array() const { return type == Type::kArray; }
};

// Copies a hiredis reply. `reply` must not be null. Replies nested deeper
// than a sane limit are cut off (we never send commands that return them).
RedisReply FromHiredis(const redisReply* reply);

// The most elements one reply may declare ("*N"). hiredis 0.14 allocates an
// array's element slots as soon as it reads the header, so "*380000000" from
// a broken or hostile master would make the client calloc 3 GB before a
// single element arrives. Every reply the library asks for has a handful of
// elements (INFO is one string).
inline constexpr int kMaxReplyElements = 1 << 16;

// Makes `reader` refuse a reply that declares more than kMaxReplyElements
// elements (or a negative count other than -1, the nil array): its next
// redisReaderGetReply fails and the connection is closed, before anything is
// allocated. hiredis then reports the error as REDIS_ERR_OOM ("Out of
// memory"), the only error its reader can raise from an object function.
// Replies are otherwise built by hiredis's own functions, so they are freed
// as usual. A reader without object functions is left alone.
void BoundReplyReader(redisReader* reader);

// What to report for a reader's REDIS_ERR_OOM: "reply refused: it declares
// more than 65536 elements (or out of memory)".
std::string RefusedReplyText();

// Appends `argv` as a RESP array of bulk strings, the only form of request
// Redis takes from a client library: *<n>\r\n, then $<size>\r\n<bytes>\r\n
// per argument. `out` grows once, by exactly what is written: a keep-alive
// chunk carries thousands of short arguments, and appending each piece on
// its own cost more than the copying.
void AppendRespCommand(absl::Span<const absl::string_view> argv,
                       std::string* out);

// The arguments of a request's RESP text as AppendRespCommand() writes it
// (an array of bulk strings, nothing after it), as views into `text`. False,
// with `argv` unspecified, for any other text.
bool SplitRespCommand(absl::string_view text,
                      std::vector<absl::string_view>* argv);

// The value of field `name` in an INFO reply ("name:value" lines), empty if
// absent. Pure.
absl::string_view InfoField(absl::string_view info, absl::string_view name);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_REDIS_REPLY_H_
