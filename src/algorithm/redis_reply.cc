// Copyright 2026 The redlock Authors.

#include "src/algorithm/redis_reply.h"

#include <hiredis/hiredis.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

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

namespace {

// hiredis's own reply functions (static in hiredis.c, reachable only
// through a reader), and ours, which check array sizes and delegate.
const redisReplyObjectFunctions* g_hiredis_functions = nullptr;

void* CreateBoundedArray(const redisReadTask* task, int elements) {
  if (elements < 0 || elements > kMaxReplyElements) return nullptr;
  return g_hiredis_functions->createArray(task, elements);
}

redisReplyObjectFunctions* BoundedFunctions(
    const redisReplyObjectFunctions* hiredis) {
  static redisReplyObjectFunctions bounded = [hiredis] {
    g_hiredis_functions = hiredis;
    redisReplyObjectFunctions f = *hiredis;
    f.createArray = &CreateBoundedArray;
    return f;
  }();
  return &bounded;
}

}  // namespace

std::string RefusedReplyText() {
  return "reply refused: it declares more than " +
         std::to_string(kMaxReplyElements) + " elements (or out of memory)";
}

void BoundReplyReader(redisReader* reader) {
  if (reader == nullptr || reader->fn == nullptr) return;
  redisReplyObjectFunctions* bounded = BoundedFunctions(reader->fn);
  // Every reader starts with hiredis's one table, so the table captured by
  // the first call is the one each of them would have used.
  if (reader->fn == g_hiredis_functions) reader->fn = bounded;
}

void AppendRespCommand(absl::Span<const absl::string_view> argv,
                       std::string* out) {
  auto digits = [](size_t n) {
    size_t d = 1;
    while (n >= 10) {
      n /= 10;
      ++d;
    }
    return d;
  };
  size_t size = 1 + digits(argv.size()) + 2;
  for (absl::string_view arg : argv) {
    size += 1 + digits(arg.size()) + 2 + arg.size() + 2;
  }
  const size_t start = out->size();
  out->resize(start + size);
  char* p = &(*out)[start];
  auto header = [&p, &digits](char kind, size_t n) {
    *p++ = kind;
    char* end = p + digits(n);
    for (char* d = end; d != p; n /= 10) *--d = static_cast<char>('0' + n % 10);
    p = end;
    *p++ = '\r';
    *p++ = '\n';
  };
  header('*', argv.size());
  for (absl::string_view arg : argv) {
    header('$', arg.size());
    if (!arg.empty()) std::memcpy(p, arg.data(), arg.size());
    p += arg.size();
    *p++ = '\r';
    *p++ = '\n';
  }
}

bool SplitRespCommand(absl::string_view text,
                      std::vector<absl::string_view>* argv) {
  argv->clear();
  // Reads "<kind><decimal>\r\n" at the front of `text`.
  auto header = [&text](char kind, size_t* n) {
    if (text.empty() || text[0] != kind) return false;
    const size_t end = text.find("\r\n");
    if (end == absl::string_view::npos || end < 2 || end > 21) return false;
    size_t value = 0;
    for (size_t i = 1; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      value = value * 10 + static_cast<size_t>(text[i] - '0');
    }
    *n = value;
    text.remove_prefix(end + 2);
    return true;
  };
  size_t count = 0;
  if (!header('*', &count) || count > text.size()) return false;
  argv->reserve(count);
  for (size_t i = 0; i < count; ++i) {
    size_t size = 0;
    if (!header('$', &size) || size > text.size() || text.size() - size < 2 ||
        text.substr(size, 2) != "\r\n") {
      return false;
    }
    argv->push_back(text.substr(0, size));
    text.remove_prefix(size + 2);
  }
  return text.empty();
}

absl::string_view InfoField(absl::string_view info, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, name) && absl::ConsumePrefix(&line, ":")) {
      return line;
    }
  }
  return "";
}

}  // namespace redlock::internal
