// Copyright 2026 The redlock Authors.

#include "redlock/version.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "src/transport/openssl_library.h"

namespace redlock {

const char* RuntimeVersion() { return REDLOCK_VERSION_STRING; }

int RuntimeVersionNumber() { return REDLOCK_VERSION_NUMBER; }

DependencyVersions GetDependencyVersions() {
  DependencyVersions versions;
  versions.hiredis = absl::StrCat("hiredis ", HIREDIS_MAJOR, ".", HIREDIS_MINOR,
                                  ".", HIREDIS_PATCH, " (built with)");
  const char* libevent = event_get_version();
  versions.libevent =
      absl::StrCat("libevent ", libevent != nullptr ? libevent : "unknown");
  // Loads OpenSSL if no TLS master has yet: the version is the one a TLS
  // connection of this process would use.
  absl::StatusOr<const internal::OpenSsl*> ssl = internal::LoadOpenSsl();
  if (!ssl.ok()) {
    versions.openssl =
        absl::StrCat("OpenSSL unavailable: ", ssl.status().message());
  } else {
    const char* openssl = (*ssl)->OpenSSL_version(OPENSSL_VERSION);
    versions.openssl = openssl != nullptr ? openssl : "OpenSSL unknown";
  }
  return versions;
}

}  // namespace redlock
