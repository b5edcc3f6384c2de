// Copyright 2026 The redlock Authors.

#include "src/transport/reply_reader.h"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace redlock::internal {

// What each hiredis object costs against kMaxReplyBytes besides its bytes:
// about the size of a redisReply.
constexpr size_t kObjectCost = 48;

// The object functions every ReplyReader's hiredis reader uses: hiredis's
// own (reached through a reader: they are static in hiredis.c), behind a
// count of what the reply in progress holds. hiredis copies the reader's
// privdata into every task, which is how a hook finds its ReplyReader.
struct ReplyReaderHooks {
  static const redisReplyObjectFunctions* hiredis;

  static ReplyReader* Of(const redisReadTask* task) {
    return static_cast<ReplyReader*>(task->privdata);
  }
  // False (and the reason kept) if `cost` more would pass the bound.
  static bool Charge(const redisReadTask* task, size_t cost, const char* what) {
    ReplyReader* self = Of(task);
    if (self == nullptr) return true;
    if (cost > kMaxReplyBytes || self->reply_bytes_ + cost > kMaxReplyBytes) {
      self->refused_ =
          absl::StrCat("a reply longer than ", kMaxReplyBytes, " bytes (", what,
                       " of ", cost - kObjectCost, " bytes)");
      return false;
    }
    self->reply_bytes_ += cost;
    return true;
  }
  static void* CreateString(const redisReadTask* task, char* str, size_t len) {
    // Checked before hiredis copies anything: hiredis 0.14 can pass a length
    // that overflowed its own arithmetic.
    if (len > kMaxReplyBytes) {
      Charge(task, kMaxReplyBytes + 1, "a string");
      return nullptr;
    }
    if (!Charge(
            task, len + kObjectCost,
            task->type == REDIS_REPLY_STRING ? "a bulk string" : "a line")) {
      return nullptr;
    }
    return hiredis->createString(task, str, len);
  }
  static void* CreateArray(const redisReadTask* task, int elements) {
    if (elements < 0 || elements > kMaxReplyElements) {
      if (ReplyReader* self = Of(task)) {
        self->refused_ =
            absl::StrCat("a reply declaring ", elements, " elements (at most ",
                         kMaxReplyElements, ")");
      }
      return nullptr;
    }
    if (!Charge(task,
                static_cast<size_t>(elements) * sizeof(void*) + kObjectCost,
                "an array")) {
      return nullptr;
    }
    return hiredis->createArray(task, elements);
  }
  static void* CreateInteger(const redisReadTask* task, long long value) {
    if (!Charge(task, kObjectCost, "an integer")) return nullptr;
    return hiredis->createInteger(task, value);
  }
  static void* CreateNil(const redisReadTask* task) {
    if (!Charge(task, kObjectCost, "a nil")) return nullptr;
    return hiredis->createNil(task);
  }
  static redisReplyObjectFunctions* Table(
      const redisReplyObjectFunctions* own) {
    static redisReplyObjectFunctions table = [own] {
      hiredis = own;
      redisReplyObjectFunctions t = *own;
      t.createString = &CreateString;
      t.createArray = &CreateArray;
      t.createInteger = &CreateInteger;
      t.createNil = &CreateNil;
      return t;
    }();
    return &table;
  }
};

const redisReplyObjectFunctions* ReplyReaderHooks::hiredis = nullptr;

ReplyReader::ReplyReader() : reader_(redisReaderCreate()) {
  if (reader_ == nullptr) {
    error_ = absl::ResourceExhaustedError("cannot allocate a reply reader");
    return;
  }
  reader_->fn = ReplyReaderHooks::Table(reader_->fn);
  reader_->privdata = this;
}

ReplyReader::~ReplyReader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

size_t ReplyReader::buffered() const {
  return reader_ == nullptr ? 0 : reader_->len - reader_->pos;
}

bool ReplyReader::mid_reply() const {
  if (reader_ == nullptr) return false;
  // hiredis sets up the root task (type -1, not yet read) whenever it is
  // asked for a reply, so a root task with no type is no reply begun.
  return buffered() > 0 || reader_->ridx > 0 ||
         (reader_->ridx == 0 && reader_->rstack[0].type >= 0);
}

absl::Status ReplyReader::Refuse(std::string why) {
  error_ = absl::DataLossError(std::move(why));
  return error_;
}

absl::Status ReplyReader::Drain(std::vector<RedisReply>* replies) {
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      if (!refused_.empty()) {
        return Refuse(absl::StrCat("reply refused: ", refused_));
      }
      const absl::string_view errstr(reader_->errstr);
      // Told by the stream's first byte alone, which no RESP reply begins
      // with: hiredis refuses the stream right there, when that byte may be
      // all that has arrived, and the reason must not depend on how the
      // bytes were split.
      if (!head_.empty() && head_[0] == 'H') {
        return Refuse(
            "protocol error: the server answered 'H...' (HTTP?): not a Redis "
            "server");
      }
      if (!head_.empty() && (head_[0] == 0x15 || head_[0] == 0x16)) {
        return Refuse(
            "protocol error: the server speaks TLS (a TLS record): use "
            "rediss:// (or --tls)");
      }
      if (absl::StrContains(errstr, "nested")) {
        return Refuse("protocol error: a reply nested deeper than 7 levels");
      }
      return Refuse(absl::StrCat("protocol error: ", absl::CHexEscape(errstr)));
    }
    if (raw == nullptr) return absl::OkStatus();
    replies->push_back(FromHiredis(static_cast<const redisReply*>(raw)));
    freeReplyObject(raw);
    reply_bytes_ = 0;
  }
}

absl::Status ReplyReader::Feed(absl::string_view bytes,
                               std::vector<RedisReply>* replies) {
  if (!error_.ok()) return error_;
  if (head_.size() < 8) {
    const absl::string_view more = bytes.substr(0, 8 - head_.size());
    head_.append(more.data(), more.size());
  }
  fed_ += bytes.size();
  while (!bytes.empty()) {
    // Never more than one byte past the bound in hiredis's buffer: what
    // completes replies leaves it at once, the rest is refused.
    const size_t room =
        kMaxReplyBytes + 1 - std::min(buffered(), kMaxReplyBytes);
    const absl::string_view chunk = bytes.substr(0, room);
    bytes.remove_prefix(chunk.size());
    if (redisReaderFeed(reader_, chunk.data(), chunk.size()) != REDIS_OK) {
      return Refuse("out of memory reading a reply");
    }
    if (absl::Status s = Drain(replies); !s.ok()) return s;
    if (buffered() > kMaxReplyBytes) {
      return Refuse(absl::StrCat("reply refused: a reply longer than ",
                                 kMaxReplyBytes,
                                 " bytes (a line or bulk string still "
                                 "incomplete at that size)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace redlock::internal
