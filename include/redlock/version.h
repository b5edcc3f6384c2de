// Copyright 2026 The redlock Authors.
//
// The library's version, as compiled into a program (the macros) and as
// linked at run time (the functions), and the versions of the libraries it
// runs on. With the shared library the two can differ: a program built
// against 0.1.0 may run on 0.1.3. What a version number promises is in
// README.md ("Versions"):
//
//   if (redlock::RuntimeVersionNumber() != REDLOCK_VERSION_NUMBER) {
//     std::fprintf(stderr, "built with redlock %s, running on %s\n",
//                  REDLOCK_VERSION_STRING, redlock::RuntimeVersion());
//   }
//
// Every function here is thread-safe and may be called before any client
// exists.

#ifndef REDLOCK_VERSION_H_
#define REDLOCK_VERSION_H_

#include <string>

// The release this header belongs to. The top-level CMakeLists.txt refuses
// to configure when its project(VERSION) says otherwise.
#define REDLOCK_VERSION_MAJOR 0
#define REDLOCK_VERSION_MINOR 1
#define REDLOCK_VERSION_PATCH 0
#define REDLOCK_VERSION_STRING "0.1.0"
// MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100), for #if comparisons.
#define REDLOCK_VERSION_NUMBER                                   \
  (REDLOCK_VERSION_MAJOR * 10000 + REDLOCK_VERSION_MINOR * 100 + \
   REDLOCK_VERSION_PATCH)

namespace redlock {

// The version of the library this process runs on, "MAJOR.MINOR.PATCH";
// REDLOCK_VERSION_STRING of the library's own build. A static string, never
// null.
const char* RuntimeVersion();

// RuntimeVersion() as REDLOCK_VERSION_NUMBER computes it.
int RuntimeVersionNumber();

// The libraries the library runs on, each as "NAME VERSION" and, where the
// number is not the one loaded at run time, what it is instead.
struct DependencyVersions {
  // hiredis 0.14 has no run-time version call: the version of the headers
  // the library was compiled with, "hiredis 0.14.1 (built with)".
  std::string hiredis;
  // The libevent loaded at run time (event_get_version()),
  // "libevent 2.1.12-stable".
  std::string libevent;
  // The OpenSSL loaded at run time (OpenSSL_version(OPENSSL_VERSION)),
  // "OpenSSL 3.0.15 3 Sep 2024". The library loads OpenSSL only for a TLS
  // master or for this call; "OpenSSL unavailable: ..." with the reason if
  // libssl.so.3 cannot be loaded (then TLS masters cannot be used).
  std::string openssl;
};

// The versions above. Never fails; a version that cannot be read reads
// "unknown".
DependencyVersions GetDependencyVersions();

}  // namespace redlock

#endif  // REDLOCK_VERSION_H_
