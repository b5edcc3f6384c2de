// Copyright 2026 The redlock Authors.

#include "src/transport/reply_reader.h"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace redlock::internal {

// What a reply held outside its parent costs against kMaxReplyBytes besides
// its bytes: a RedisReply of its own.
constexpr size_t kObjectCost = sizeof(RedisReply);

// The object functions every ReplyReader's hiredis reader uses. hiredis does
// the parsing; these build the RedisReply values themselves, so that a reply
// is made once, in place, instead of as hiredis objects first (one calloc
// per element) and copied out after. A reply without a parent (the one
// redisReaderGetReply hands back) is allocated on its own; an element is
// the slot its array made for it when the array's header was read, so an
// array's elements cost one allocation between them. hiredis frees only
// that top reply (freeObject, on an error or when the reader goes away),
// which takes its elements with it. Each object is charged against the
// reply's bound before it is made. hiredis copies the reader's privdata
// into every task, which is how a hook finds its ReplyReader.
struct ReplyReaderHooks {
  static ReplyReader* Of(const redisReadTask* task) {
    return static_cast<ReplyReader*>(task->privdata);
  }
  // False (and the reason kept) if `cost` more would pass the bound.
  static bool Charge(const redisReadTask* task, size_t cost, const char* what,
                     size_t shown) {
    ReplyReader* self = Of(task);
    if (self == nullptr) return true;
    if (cost > kMaxReplyBytes || self->reply_bytes_ + cost > kMaxReplyBytes) {
      self->refused_ = absl::StrCat("a reply longer than ", kMaxReplyBytes,
                                    " bytes (", what, " of ", shown, " bytes)");
      return false;
    }
    self->reply_bytes_ += cost;
    return true;
  }
  // What an object costs on top of `bytes`: nothing for an element (its
  // array paid for its slot), a RedisReply for a reply on its own.
  static size_t Own(const redisReadTask* task) {
    return task->parent == nullptr ? kObjectCost : 0;
  }
  // Where the object of `task` goes: its slot in the parent array, or a new
  // reply. An array's slots are made once, at its header, and never moved,
  // so a pointer to one stays good until the top reply is freed.
  static RedisReply* Place(const redisReadTask* task) {
    if (task->parent == nullptr) return new RedisReply();
    auto* parent = static_cast<RedisReply*>(task->parent->obj);
    return &parent->elements[static_cast<size_t>(task->idx)];
  }
  static void* CreateString(const redisReadTask* task, char* str, size_t len) {
    // Checked before anything is copied: hiredis 0.14 can pass a length
    // that overflowed its own arithmetic.
    if (len > kMaxReplyBytes) {
      Charge(task, kMaxReplyBytes + 1, "a string", len);
      return nullptr;
    }
    if (!Charge(task, len + Own(task),
                task->type == REDIS_REPLY_STRING ? "a bulk string" : "a line",
                len)) {
      return nullptr;
    }
    RedisReply* out = Place(task);
    switch (task->type) {
      case REDIS_REPLY_STATUS:
        out->type = RedisReply::Type::kStatus;
        break;
      case REDIS_REPLY_ERROR:
        out->type = RedisReply::Type::kError;
        break;
      default:
        out->type = RedisReply::Type::kString;
        break;
    }
    out->str.assign(str, len);
    return out;
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
    const size_t slots = static_cast<size_t>(elements) * sizeof(RedisReply);
    if (!Charge(task, slots + Own(task), "an array", slots)) return nullptr;
    RedisReply* out = Place(task);
    out->type = RedisReply::Type::kArray;
    out->elements.resize(static_cast<size_t>(elements));
    return out;
  }
  static void* CreateInteger(const redisReadTask* task, long long value) {
    if (!Charge(task, Own(task), "an integer", 0)) return nullptr;
    RedisReply* out = Place(task);
    out->type = RedisReply::Type::kInteger;
    out->integer = value;
    return out;
  }
  static void* CreateNil(const redisReadTask* task) {
    if (!Charge(task, Own(task), "a nil", 0)) return nullptr;
    RedisReply* out = Place(task);
    out->type = RedisReply::Type::kNil;
    return out;
  }
  // Only ever a top reply (hiredis frees nothing else).
  static void Free(void* reply) { delete static_cast<RedisReply*>(reply); }

  static redisReplyObjectFunctions* Table() {
    static redisReplyObjectFunctions table = {
        &CreateString, &CreateArray, &CreateInteger, &CreateNil, &Free};
    return &table;
  }
};

ReplyReader::ReplyReader()
    : reader_(redisReaderCreateWithFunctions(ReplyReaderHooks::Table())) {
  if (reader_ == nullptr) {
    error_ = absl::ResourceExhaustedError("cannot allocate a reply reader");
    return;
  }
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
    std::unique_ptr<RedisReply> reply(static_cast<RedisReply*>(raw));
    replies->push_back(std::move(*reply));
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
