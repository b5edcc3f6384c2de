// Copyright 2026 The redlock Authors.
//
// A Redis reply as a plain value, copied out of hiredis's reply object (which
// hiredis frees as soon as the callback returns). No I/O here.

#ifndef REDLOCK_SRC_REDIS_REPLY_H_
#define REDLOCK_SRC_REDIS_REPLY_H_

#include <cstdint>
#include <string>
#include <vector>

struct redisReply;

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
};

// Copies a hiredis reply. `reply` must not be null. Replies nested deeper
// than a sane limit are cut off (we never send commands that return them).
RedisReply FromHiredis(const redisReply* reply);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_REDIS_REPLY_H_
