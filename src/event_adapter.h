// Copyright 2026 The redlock Authors.
//
// Glue between a hiredis async context and a libevent loop, in place of
// hiredis 0.14's stock adapter (adapters/libevent.h). The stock one re-adds
// its one-shot read and write events after every reply and every command —
// two epoll_ctl calls per command per master, most of a lock cycle's system
// calls. This one keeps the read event persistent, and turns hiredis's "I have
// something to write" into one write per connection per loop turn (from an
// activated, fd-less event), arming the real write event only while the
// connection is being established or a write would block. Commands issued in
// one loop turn (a fan-out, or a release queued behind a SET) leave in one
// write.

#ifndef REDLOCK_SRC_EVENT_ADAPTER_H_
#define REDLOCK_SRC_EVENT_ADAPTER_H_

struct event_base;
struct redisAsyncContext;

namespace redlock::internal {

// Attaches `ac` to `base`. REDIS_OK, or REDIS_ERR if it was attached already
// or libevent could not make its events. The events are freed by hiredis
// (through the cleanup hook) when the context is freed.
int AttachToEventLoop(redisAsyncContext* ac, event_base* base);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_EVENT_ADAPTER_H_
