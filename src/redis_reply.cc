// Copyright 2026 The redlock Authors.

#include "src/redis_reply.h"

#include <hiredis/hiredis.h>

#include <utility>

namespace redlock::internal {
namespace {

constexpr int kMaxDepth = 8;

RedisReply Convert(const redisReply* reply, int depth) {
  RedisReply out;
  switch (reply->type) {
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      if (depth < kMaxDepth) {
        out.elements.reserve(reply->elements);
        for (size_t i = 0; i < reply->elements; ++i) {
          out.elements.push_back(Convert(reply->element[i], depth + 1));
        }
      }
      break;
    case REDIS_REPLY_NIL:
    default:
      out.type = RedisReply::Type::kNil;
      break;
  }
  return out;
}

}  // namespace

RedisReply RedisReply::Status(std::string text) {
  RedisReply r;
  r.type = Type::kStatus;
  r.str = std::move(text);
  return r;
}

RedisReply RedisReply::Error(std::string text) {
  RedisReply r;
  r.type = Type::kError;
  r.str = std::move(text);
  return r;
}

RedisReply RedisReply::Integer(int64_t value) {
  RedisReply r;
  r.type = Type::kInteger;
  r.integer = value;
  return r;
}

RedisReply RedisReply::String(std::string text) {
  RedisReply r;
  r.type = Type::kString;
  r.str = std::move(text);
  return r;
}

RedisReply RedisReply::Nil() { return RedisReply(); }

RedisReply RedisReply::Array(std::vector<RedisReply> elements) {
  RedisReply r;
  r.type = Type::kArray;
  r.elements = std::move(elements);
  return r;
}

RedisReply FromHiredis(const redisReply* reply) { return Convert(reply, 0); }

}  // namespace redlock::internal
