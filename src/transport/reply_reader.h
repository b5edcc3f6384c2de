// Copyright 2026 The redlock Authors.
//
// ReplyReader: the bytes a server sends, turned into RedisReply values, with
// every bound a lock client needs against a broken or hostile server. hiredis
// 0.14's reader does the RESP parsing (the only part of hiredis the library
// still uses); this class decides how much it
// may hold. No I/O: a connection (src/transport/wire.h) feeds it what it
// received, and the fuzzer (fuzz/wire_fuzzer.cc) feeds it anything at all.
//
// Bounds, each a refusal that ends the stream with a reason:
//  - a reply, all its parts counted, larger than kMaxReplyBytes (a status or
//    error line, a bulk string, or an array's elements together): no reply
//    the library asks for comes near it (INFO server is about 1.5 KB);
//  - an array declaring more than kMaxReplyElements elements, or a negative
//    count other than -1 (refused before anything is allocated);
//  - nesting deeper than hiredis's limit (7 levels);
//  - anything that is not RESP (a protocol error), with a word on what it
//    looks like instead: an HTTP answer, or a TLS record.
// Memory held between calls stays below about 2 * kMaxReplyBytes whatever is
// fed, in pieces of any size.

#ifndef REDLOCK_SRC_TRANSPORT_REPLY_READER_H_
#define REDLOCK_SRC_TRANSPORT_REPLY_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "src/algorithm/redis_reply.h"

struct redisReader;

namespace redlock::internal {

inline constexpr size_t kMaxReplyBytes = 64 * 1024;

class ReplyReader {
 public:
  ReplyReader();
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Appends every reply `bytes` completes to `replies`, in order. OK, or
  // kDataLoss saying why the stream is refused; once refused, every later
  // call fails the same way (the replies completed before the bad byte are
  // still appended).
  absl::Status Feed(absl::string_view bytes, std::vector<RedisReply>* replies);

  // Bytes held toward a reply not yet complete: 0 between replies.
  size_t buffered() const;
  // A reply has started and is not complete.
  bool mid_reply() const;
  // Total bytes fed so far.
  uint64_t fed() const { return fed_; }

 private:
  friend struct ReplyReaderHooks;
  absl::Status Refuse(std::string why);
  // Takes the complete replies out of the hiredis reader.
  absl::Status Drain(std::vector<RedisReply>* replies);

  redisReader* reader_;
  // What the reply in progress holds, by our count (ReplyReaderHooks).
  size_t reply_bytes_ = 0;
  // Set by a hook that refused an object: why.
  std::string refused_;
  absl::Status error_;
  uint64_t fed_ = 0;
  // The first bytes of the stream, to say what a non-RESP peer is.
  std::string head_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_REPLY_READER_H_
