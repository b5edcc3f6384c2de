// Copyright 2026 The redlock Authors.

#include "src/transport/openssl_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace redlock::internal {
namespace {

// OpenSSL 3's ABI: the soname Debian's libssl3 ships.
constexpr char kLibssl[] = "libssl.so.3";

absl::StatusOr<const OpenSsl*> Load() {
  // RTLD_NODELETE: never unloaded, whoever else opens and closes it.
  void* handle = dlopen(kLibssl, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "TLS needs OpenSSL 3 (", kLibssl, ", Debian package libssl3): ",
        why != nullptr ? why : "cannot load it"));
  }
  auto* ssl = new OpenSsl;  // Never freed: the process keeps the library.
  std::string missing;
  // libcrypto's functions are found through libssl, which depends on it.
#define REDLOCK_OPENSSL_LOOK_UP(name)                                    \
  ssl->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (ssl->name == nullptr)                                              \
    absl::StrAppend(&missing, missing.empty() ? "" : ", ", #name);
  REDLOCK_OPENSSL_FUNCTIONS(REDLOCK_OPENSSL_LOOK_UP)
#undef REDLOCK_OPENSSL_LOOK_UP
  if (!missing.empty()) {
    delete ssl;
    return absl::FailedPreconditionError(
        absl::StrCat("TLS needs OpenSSL 3: ", kLibssl, " lacks ", missing));
  }
  return ssl;
}

}  // namespace

absl::StatusOr<const OpenSsl*> LoadOpenSsl() {
  static std::once_flag once;
  static absl::StatusOr<const OpenSsl*>* loaded = nullptr;
  std::call_once(once,
                 [] { loaded = new absl::StatusOr<const OpenSsl*>(Load()); });
  return *loaded;
}

bool OpenSslIsLoadedForTesting() {
  void* handle = dlopen(kLibssl, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // Drops only the reference RTLD_NOLOAD took.
  return true;
}

}  // namespace redlock::internal
