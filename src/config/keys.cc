// Copyright 2026 The redlock Authors.

#include "redlock/keys.h"

#include "absl/strings/str_cat.h"

namespace redlock {

std::string LockKey(const Options& options, absl::string_view resource) {
  return absl::StrCat(options.key_prefix, resource);
}

std::string FenceCounterKey(const Options& options,
                            absl::string_view resource) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "fence",
                      kReservedResourcePrefix, ":", resource);
}

std::string ElectionResource(absl::string_view name) {
  return absl::StrCat(kReservedResourcePrefix, "elect", kReservedResourcePrefix,
                      ":", name);
}

std::string ElectionLockKey(const Options& options, absl::string_view name) {
  return LockKey(options, ElectionResource(name));
}

std::string ElectionRecordKey(const Options& options, absl::string_view name) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "leader",
                      kReservedResourcePrefix, ":", name);
}

std::string SemaphoreSlotKey(const Options& options,
                             absl::string_view semaphore, int slot) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "sem",
                      kReservedResourcePrefix, ":", semaphore, ":", slot);
}

std::string SemaphoreLimitKey(const Options& options,
                              absl::string_view semaphore) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "semlimit",
                      kReservedResourcePrefix, ":", semaphore);
}

std::string SharedHolderKey(const Options& options, absl::string_view resource,
                            absl::string_view token) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "reader",
                      kReservedResourcePrefix, ":", resource, ":", token);
}

std::string SharedHoldersKey(const Options& options,
                             absl::string_view resource) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "readers",
                      kReservedResourcePrefix, ":", resource);
}

std::string WriterWaitingKey(const Options& options,
                             absl::string_view resource) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "writerwait",
                      kReservedResourcePrefix, ":", resource);
}

std::string WaiterArrivalKeyPrefix(const Options& options,
                                   absl::string_view resource) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "arrival",
                      kReservedResourcePrefix, ":", resource, ":");
}

std::string WaiterHandOffKeyPrefix(const Options& options,
                                   absl::string_view resource) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "handoff",
                      kReservedResourcePrefix, ":", resource, ":");
}

std::string DeploymentMarkerKey(const Options& options) {
  return absl::StrCat(options.key_prefix, kReservedResourcePrefix, "deployment",
                      kReservedResourcePrefix);
}

}  // namespace redlock
