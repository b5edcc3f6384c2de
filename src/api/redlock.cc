// Copyright 2026 The redlock Authors.

#include "redlock/redlock.h"

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "redlock/async_redlock.h"
#include "src/engine/election_ops.h"
#include "src/transport/event_loop.h"

namespace redlock {

class Redlock::Impl {
 public:
  Impl(std::unique_ptr<internal::EventLoop> loop, Options options)
      : loop_(std::move(loop)), options_(std::move(options)) {}

  ~Impl() {
    // The engine lives and dies on the loop thread; destroying it answers
    // every pending call with kCancelled.
    loop_->RunAndWait([this] { engine_.reset(); });
  }

  absl::Status CreateEngine() {
    absl::Status status;
    loop_->RunAndWait([&] {
      absl::StatusOr<std::unique_ptr<AsyncRedlock>> engine =
          AsyncRedlock::Create(loop_->base(), options_);
      if (engine.ok()) {
        engine_ = *std::move(engine);
      } else {
        status = engine.status();
      }
    });
    return status;
  }

  // Runs `start(callback)` on the loop and waits for the callback: the
  // calling thread turns the loop itself when nobody else does
  // (event_loop.h). `start` returns the status of the async call: a non-OK
  // one is the result.
  template <typename T, typename Start>
  T Call(Start start) {
    if (loop_->InLoopThread()) {
      return T(absl::FailedPreconditionError(
          "a blocking Redlock call was made on the client's own loop thread"));
    }
    internal::EventLoop::Completion done;
    std::optional<T> result;
    loop_->Run(
        [&] {
          absl::Status status = start([&](T value) {
            result.emplace(std::move(value));
            done.Finish();
          });
          if (!status.ok()) {
            result.emplace(std::move(status));
            done.Finish();
          }
        },
        // A call's first turn handles whatever arrived before it.
        done, /*catch_up=*/false);
    return *std::move(result);
  }

  // Runs `fn` on the loop thread and waits for it.
  void RunOnLoop(absl::AnyInvocable<void()> fn) {
    loop_->RunAndWait(std::move(fn));
  }
  // RunOnLoop(), or `fn` at once when called on the loop thread (inside one
  // of the client's callbacks), where waiting for the loop would wait for
  // itself: for work that finishes at once.
  void RunHere(absl::AnyInvocable<void()> fn) {
    if (loop_->InLoopThread()) {
      fn();
    } else {
      loop_->RunAndWait(std::move(fn));
    }
  }
  bool InLoopThread() const { return loop_->InLoopThread(); }
  // While a lock is kept alive and its holder works, the loop must turn
  // without waiting for the holder's next call.
  void PinLoop() { loop_->Pin(); }
  void UnpinLoop() { loop_->Unpin(); }

  AsyncRedlock& engine() { return *engine_; }
  const Options& options() const { return options_; }

 private:
  std::unique_ptr<internal::EventLoop> loop_;
  const Options options_;
  std::unique_ptr<AsyncRedlock> engine_;  // Loop thread only.
};

absl::StatusOr<std::unique_ptr<Redlock>> Redlock::Create(Options options) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  // Off the loop thread, so a slow resolver blocks only this call.
  if (absl::Status status = ResolveMasterHosts(options); !status.ok()) {
    return status;
  }
  absl::StatusOr<std::unique_ptr<internal::EventLoop>> loop =
      internal::EventLoop::Start();
  if (!loop.ok()) return loop.status();
  auto impl = std::make_unique<Impl>(*std::move(loop), std::move(options));
  if (absl::Status status = impl->CreateEngine(); !status.ok()) return status;
  return std::unique_ptr<Redlock>(new Redlock(std::move(impl)));
}

// The client as ScopedLocks see it: null once the client is being
// destroyed. Releases hold it shared, the destructor exclusively, so a
// release in progress finishes first and none starts after.
class ScopedLock::ClientRef {
 public:
  explicit ClientRef(Redlock* client) : client_(client) {}

  // Runs `fn(client)` unless the client is gone; false if it is.
  template <typename Fn>
  bool With(Fn fn) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (client_ == nullptr) return false;
    fn(*client_);
    return true;
  }

  void Detach() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    client_ = nullptr;
  }

 private:
  std::shared_mutex mu_;
  Redlock* client_;  // Guarded by mu_.
};

Redlock::Redlock(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)),
      ref_(std::make_shared<ScopedLock::ClientRef>(this)) {}

Redlock::~Redlock() { ref_->Detach(); }

absl::StatusOr<Lock> Redlock::Acquire(absl::string_view resource,
                                      absl::Duration ttl, absl::Duration wait) {
  using Result = absl::StatusOr<Lock>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().AcquireAsync(resource, ttl, wait, std::move(done));
  });
}

absl::StatusOr<Lock> Redlock::Acquire(absl::string_view resource,
                                      const AcquireOptions& options) {
  using Result = absl::StatusOr<Lock>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().AcquireAsync(resource, options, std::move(done));
  });
}

absl::StatusOr<Lock> Redlock::AcquirePermits(absl::string_view name,
                                             const SemaphoreOptions& sem,
                                             const AcquireOptions& options) {
  using Result = absl::StatusOr<Lock>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().AcquirePermitsAsync(name, sem, options,
                                               std::move(done));
  });
}

absl::StatusOr<Lock> Redlock::Acquire(absl::Span<const std::string> resources,
                                      const AcquireOptions& options) {
  using Result = absl::StatusOr<Lock>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().AcquireAsync(resources, options, std::move(done));
  });
}

absl::Status Redlock::WithLock(
    absl::string_view resource, const AcquireOptions& acquire,
    absl::AnyInvocable<absl::Status(const Lock&)> work, HoldOptions hold) {
  const std::string one[] = {std::string(resource)};
  return WithLock(one, acquire, std::move(work), std::move(hold));
}

absl::Status Redlock::WithLock(
    absl::Span<const std::string> resources, const AcquireOptions& acquire,
    absl::AnyInvocable<absl::Status(const Lock&)> work, HoldOptions hold) {
  if (!work) return absl::InvalidArgumentError("work must not be empty");
  if (impl_->InLoopThread()) {
    return absl::FailedPreconditionError(
        "WithLock was called on the client's own loop thread");
  }
  return WorkWhileHeld(
      [&](AsyncRedlock::AcquireCallback done) {
        return impl_->engine().AcquireAsync(resources, acquire,
                                            std::move(done));
      },
      acquire, std::move(work), std::move(hold));
}

absl::Status Redlock::WithPermits(
    absl::string_view name, const SemaphoreOptions& sem,
    const AcquireOptions& acquire,
    absl::AnyInvocable<absl::Status(const Lock&)> work, HoldOptions hold) {
  if (!work) return absl::InvalidArgumentError("work must not be empty");
  if (impl_->InLoopThread()) {
    return absl::FailedPreconditionError(
        "WithPermits was called on the client's own loop thread");
  }
  return WorkWhileHeld(
      [&](AsyncRedlock::AcquireCallback done) {
        return impl_->engine().AcquirePermitsAsync(name, sem, acquire,
                                                   std::move(done));
      },
      acquire, std::move(work), std::move(hold));
}

absl::Status Redlock::WorkWhileHeld(
    absl::AnyInvocable<absl::Status(AsyncRedlock::AcquireCallback)>
        acquire_async,
    const AcquireOptions& acquire,
    absl::AnyInvocable<absl::Status(const Lock&)> work, HoldOptions hold) {
  const absl::Duration ttl = acquire.ttl == absl::ZeroDuration()
                                 ? impl_->options().default_ttl
                                 : acquire.ttl;

  // The keep-alive handle lives on the loop thread, like the engine. It is
  // started on the loop in the turn that delivers the lock, and the
  // background pinned there too: the caller's thread gets the lock already
  // kept alive, with no second call to the loop between the grant and the
  // work.
  std::optional<KeepAliveHandle> keeper;
  absl::Status started;
  using Result = absl::StatusOr<Lock>;
  Result lock = impl_->Call<Result>([&](auto done) {
    return acquire_async([&, done = std::move(done)](Result won) mutable {
      if (won.ok()) {
        absl::StatusOr<KeepAliveHandle> handle =
            impl_->engine().KeepAlive(*won, ttl, std::move(hold));
        if (handle.ok()) {
          keeper.emplace(*std::move(handle));
          impl_->PinLoop();
        } else {
          started = handle.status();
        }
      }
      done(std::move(won));
    });
  });
  if (!lock.ok()) return lock.status();
  // Stops extending and releases on every way out of this function,
  // unwinding included: one call to the loop for both, so that the release
  // is on its way one hop after the work ends.
  struct Finisher {
    Impl* impl;
    std::optional<KeepAliveHandle>* keeper;
    const Lock* lock;
    ~Finisher() {
      using Report = absl::StatusOr<ReleaseReport>;
      impl->Call<Report>([this](auto done) {
            if (keeper->has_value()) {
              (*keeper)->Stop(/*release=*/false);
              keeper->reset();
              impl->UnpinLoop();
            }
            if (lock->released()) {
              done(Report(ReleaseReport{}));
              return absl::OkStatus();
            }
            return impl->engine().ReleaseAsync(*lock, ReleaseOptions{},
                                               std::move(done));
          })
          .IgnoreError();
    }
  } finisher{impl_.get(), &keeper, &*lock};
  if (!started.ok()) return started;

  absl::Status result = work(*lock);
  if (lock->lost()) {
    absl::Status lost = lock->lost_reason();
    return absl::Status(
        lost.code(),
        absl::StrCat("the lock was lost while the work ran: ", lost.message()));
  }
  return result;
}

absl::StatusOr<Lock> Redlock::TryAcquire(absl::string_view resource,
                                         absl::Duration ttl) {
  return Acquire(resource, ttl, absl::ZeroDuration());
}

absl::StatusOr<ScopedLock> Redlock::AcquirePermitsScoped(
    absl::string_view name, const SemaphoreOptions& sem,
    const AcquireOptions& options) {
  absl::StatusOr<Lock> lock = AcquirePermits(name, sem, options);
  if (!lock.ok()) return lock.status();
  return ScopedLock(ref_, *std::move(lock));
}

absl::StatusOr<ScopedLock> Redlock::AcquireScoped(absl::string_view resource,
                                                  absl::Duration ttl,
                                                  absl::Duration wait) {
  absl::StatusOr<Lock> lock = Acquire(resource, ttl, wait);
  if (!lock.ok()) return lock.status();
  return ScopedLock(ref_, *std::move(lock));
}

absl::StatusOr<ScopedLock> Redlock::AcquireScoped(
    absl::string_view resource, const AcquireOptions& options) {
  absl::StatusOr<Lock> lock = Acquire(resource, options);
  if (!lock.ok()) return lock.status();
  return ScopedLock(ref_, *std::move(lock));
}

absl::StatusOr<ScopedLock> Redlock::AcquireScoped(
    absl::Span<const std::string> resources, const AcquireOptions& options) {
  absl::StatusOr<Lock> lock = Acquire(resources, options);
  if (!lock.ok()) return lock.status();
  return ScopedLock(ref_, *std::move(lock));
}

absl::StatusOr<Lock> Redlock::Adopt(absl::string_view resource,
                                    absl::string_view token, uint64_t fence) {
  AdoptOptions options;
  options.fence = fence;
  return Adopt(resource, token, options);
}

absl::StatusOr<Lock> Redlock::Adopt(absl::string_view resource,
                                    absl::string_view token,
                                    const AdoptOptions& options) {
  std::optional<absl::StatusOr<Lock>> lock;
  impl_->RunHere(
      [&] { lock.emplace(impl_->engine().Adopt(resource, token, options)); });
  return *std::move(lock);
}

absl::Status Redlock::Extend(const Lock& lock, absl::Duration ttl) {
  return impl_->Call<absl::Status>([&](auto done) {
    return impl_->engine().ExtendAsync(lock, ttl, std::move(done));
  });
}

absl::StatusOr<ReleaseReport> Redlock::Release(const Lock& lock,
                                               ReleaseOptions options) {
  using Result = absl::StatusOr<ReleaseReport>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().ReleaseAsync(lock, options, std::move(done));
  });
}

absl::StatusOr<Leadership> Redlock::Campaign(absl::string_view name,
                                             absl::string_view value,
                                             CampaignOptions options) {
  using Result = absl::StatusOr<Leadership>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().CampaignAsync(
        name, value, std::move(options),
        [this, done = std::move(done)](Result won) mutable {
          if (won.ok()) {
            // The lease is kept alive while the caller works: the loop
            // turns on its own thread until Resign().
            impl_->PinLoop();
            won->state()->pinned = true;
          }
          done(std::move(won));
        });
  });
}

absl::Status Redlock::Proclaim(const Leadership& leadership,
                               absl::string_view value) {
  return impl_->Call<absl::Status>([&](auto done) {
    return impl_->engine().ProclaimAsync(leadership, value, std::move(done));
  });
}

absl::StatusOr<ReleaseReport> Redlock::Resign(const Leadership& leadership) {
  using Result = absl::StatusOr<ReleaseReport>;
  return impl_->Call<Result>([&](auto done) {
    absl::Status status =
        impl_->engine().ResignAsync(leadership, std::move(done));
    const auto& state = leadership.state();
    if (state != nullptr && state->pinned && leadership.resigned()) {
      state->pinned = false;
      impl_->UnpinLoop();
    }
    return status;
  });
}

absl::StatusOr<LeaderInfo> Redlock::Leader(absl::string_view name) {
  using Result = absl::StatusOr<LeaderInfo>;
  return impl_->Call<Result>([&](auto done) {
    return impl_->engine().LeaderAsync(name, std::move(done));
  });
}

absl::StatusOr<ObserveHandle> Redlock::Observe(absl::string_view name,
                                               ObserveOptions options) {
  std::optional<absl::StatusOr<ObserveHandle>> handle;
  impl_->RunHere([&] {
    handle.emplace(impl_->engine().Observe(name, std::move(options)));
    // The observer is woken by the loop, which must turn meanwhile.
    if (handle->ok()) impl_->PinLoop();
  });
  if (!handle->ok()) return handle->status();
  std::weak_ptr<ScopedLock::ClientRef> client = ref_;
  return ObserveHandle([client, inner = **std::move(handle)]() mutable {
    std::shared_ptr<ScopedLock::ClientRef> ref = client.lock();
    if (ref == nullptr) return;  // The client is gone, and its observers.
    ref->With([&](Redlock& c) {
      c.impl_->RunHere([&] {
        inner.Stop();
        c.impl_->UnpinLoop();
      });
    });
  });
}

const Options& Redlock::options() const { return impl_->options(); }

std::vector<MasterHealth> Redlock::Health() const {
  std::vector<MasterHealth> health;
  impl_->RunHere([&] { health = impl_->engine().Health(); });
  return health;
}

ScopedLock::ScopedLock(std::weak_ptr<ClientRef> client, Lock lock)
    : client_(std::move(client)), lock_(std::move(lock)) {}

ScopedLock::ScopedLock(ScopedLock&& other) noexcept
    : client_(std::exchange(other.client_, {})),
      lock_(std::move(other.lock_)) {}

ScopedLock& ScopedLock::operator=(ScopedLock&& other) noexcept {
  if (this != &other) {
    ReleaseQuietly();
    client_ = std::exchange(other.client_, {});
    lock_ = std::move(other.lock_);
  }
  return *this;
}

ScopedLock::~ScopedLock() { ReleaseQuietly(); }

absl::StatusOr<ReleaseReport> ScopedLock::Release(ReleaseOptions options) {
  std::shared_ptr<ClientRef> client = std::exchange(client_, {}).lock();
  if (client == nullptr) {
    return absl::FailedPreconditionError(
        "the scoped lock was already released, or its client destroyed");
  }
  absl::StatusOr<ReleaseReport> report =
      absl::FailedPreconditionError("the scoped lock's client was destroyed");
  client->With([&](Redlock& c) { report = c.Release(lock_, options); });
  return report;
}

void ScopedLock::ReleaseQuietly() {
  std::shared_ptr<ClientRef> client = std::exchange(client_, {}).lock();
  if (client == nullptr || lock_.released()) return;
  client->With([&](Redlock& c) { c.Release(lock_).IgnoreError(); });
}

}  // namespace redlock
