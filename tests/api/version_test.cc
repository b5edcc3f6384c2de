// Copyright 2026 The redlock Authors.
//
// redlock/version.h: the macros agree with each other and with the build's
// project(VERSION); the run-time functions report the library's own version
// and the dependencies this process really loaded.

#include "redlock/version.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <openssl/crypto.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace redlock {
namespace {

TEST(VersionTest, StringIsMajorMinorPatch) {
  EXPECT_EQ(REDLOCK_VERSION_STRING,
            absl::StrCat(REDLOCK_VERSION_MAJOR, ".", REDLOCK_VERSION_MINOR, ".",
                         REDLOCK_VERSION_PATCH));
}

TEST(VersionTest, HeaderMatchesTheProjectVersion) {
  EXPECT_STREQ(REDLOCK_VERSION_STRING, REDLOCK_TEST_PROJECT_VERSION);
}

TEST(VersionTest, NumberOrdersMajorThenMinorThenPatch) {
  EXPECT_EQ(REDLOCK_VERSION_NUMBER, REDLOCK_VERSION_MAJOR * 10000 +
                                        REDLOCK_VERSION_MINOR * 100 +
                                        REDLOCK_VERSION_PATCH);
  static_assert(REDLOCK_VERSION_MINOR < 100 && REDLOCK_VERSION_PATCH < 100,
                "REDLOCK_VERSION_NUMBER has two digits for each");
}

TEST(VersionTest, RuntimeVersionIsTheLinkedLibrarysMacros) {
  ASSERT_NE(RuntimeVersion(), nullptr);
  EXPECT_STREQ(RuntimeVersion(), REDLOCK_VERSION_STRING);
  EXPECT_EQ(RuntimeVersionNumber(), REDLOCK_VERSION_NUMBER);
}

TEST(VersionTest, DependencyVersionsNameWhatThisProcessRunsOn) {
  const DependencyVersions versions = GetDependencyVersions();
  EXPECT_EQ(versions.hiredis,
            absl::StrCat("hiredis ", HIREDIS_MAJOR, ".", HIREDIS_MINOR, ".",
                         HIREDIS_PATCH, " (built with)"));
  EXPECT_EQ(versions.libevent, absl::StrCat("libevent ", event_get_version()));
  EXPECT_EQ(versions.openssl, OpenSSL_version(OPENSSL_VERSION));
  EXPECT_THAT(versions.openssl, ::testing::StartsWith("OpenSSL "));
}

}  // namespace
}  // namespace redlock
