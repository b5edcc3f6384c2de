// Copyright 2026 The redlock Authors.

#include "src/event_adapter.h"

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace redlock::internal {
namespace {

struct Events {
  redisAsyncContext* context = nullptr;
  event* read = nullptr;   // Persistent.
  event* write = nullptr;  // One-shot: connecting, or a write would block.
  event* flush = nullptr;  // Activated by hand: write once this loop turn.
  bool flush_pending = false;
};

void OnRead(int, short, void* arg) {
  redisAsyncHandleRead(static_cast<Events*>(arg)->context);
}

void OnWrite(int, short, void* arg) {
  redisAsyncHandleWrite(static_cast<Events*>(arg)->context);
}

void OnFlush(int, short, void* arg) {
  auto* e = static_cast<Events*>(arg);
  if (!e->flush_pending) return;
  e->flush_pending = false;
  int done = 0;
  if (redisBufferWrite(&e->context->c, &done) == REDIS_ERR) {
    // Let hiredis see the error and tear the connection down itself.
    redisAsyncHandleWrite(e->context);
    return;
  }
  if (!done) event_add(e->write, nullptr);
}

void AddRead(void* data) {
  auto* e = static_cast<Events*>(data);
  // Persistent: adding it again would only cost a system call.
  if (!event_pending(e->read, EV_READ, nullptr)) event_add(e->read, nullptr);
}

void DelRead(void* data) { event_del(static_cast<Events*>(data)->read); }

void AddWrite(void* data) {
  auto* e = static_cast<Events*>(data);
  if (!(e->context->c.flags & REDIS_CONNECTED)) {
    // Connecting: writability is how hiredis learns the connect finished.
    event_add(e->write, nullptr);
    return;
  }
  if (!e->flush_pending) {
    e->flush_pending = true;
    event_active(e->flush, EV_TIMEOUT, 0);
  }
}

void DelWrite(void* data) { event_del(static_cast<Events*>(data)->write); }

void Cleanup(void* data) {
  auto* e = static_cast<Events*>(data);
  event_free(e->read);
  event_free(e->write);
  event_free(e->flush);
  delete e;
}

}  // namespace

int AttachToEventLoop(redisAsyncContext* ac, event_base* base) {
  if (ac->ev.data != nullptr) return REDIS_ERR;
  auto* e = new Events;
  e->context = ac;
  e->read = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, &OnRead, e);
  e->write = event_new(base, ac->c.fd, EV_WRITE, &OnWrite, e);
  e->flush = event_new(base, -1, 0, &OnFlush, e);
  if (e->read == nullptr || e->write == nullptr || e->flush == nullptr) {
    Cleanup(e);
    return REDIS_ERR;
  }
  ac->ev.addRead = &AddRead;
  ac->ev.delRead = &DelRead;
  ac->ev.addWrite = &AddWrite;
  ac->ev.delWrite = &DelWrite;
  ac->ev.cleanup = &Cleanup;
  ac->ev.data = e;
  event_add(e->read, nullptr);
  event_add(e->write, nullptr);
  return REDIS_OK;
}

}  // namespace redlock::internal
