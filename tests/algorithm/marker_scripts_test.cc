// Copyright 2026 The redlock Authors.
//
// The deployment marker's value as ParseMarker() (src/algorithm/scripts.h,
// marker_scripts.cc) splits it, in every form a server may carry.

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {
namespace {

TEST(ParseMarkerTest, ReadsTheStateTheTimeAndTheRunIdOfEachForm) {
  std::string state, run_id = "x";
  int64_t time_us = -1;
  ParseMarker("trusted:1764470000123456:abc123", &state, &time_us, &run_id);
  EXPECT_EQ(state, "trusted");
  EXPECT_EQ(time_us, 1764470000123456);
  EXPECT_EQ(run_id, "abc123");
  // Written before markers carried a run_id.
  ParseMarker("reborn:1764470000123456", &state, &time_us, &run_id);
  EXPECT_EQ(state, "reborn");
  EXPECT_EQ(time_us, 1764470000123456);
  EXPECT_EQ(run_id, "");
  // An operator's: the state alone, or vouching for one process.
  ParseMarker("trusted", &state, &time_us, &run_id);
  EXPECT_EQ(state, "trusted");
  EXPECT_EQ(time_us, 0);
  EXPECT_EQ(run_id, "");
  ParseMarker("trusted:0:abc123", &state, &time_us, &run_id);
  EXPECT_EQ(time_us, 0);
  EXPECT_EQ(run_id, "abc123");
  // The writing client's max_ttl, since markers carry it.
  int64_t max_ttl_ms = -1;
  ParseMarker("trusted:1764470000123456:abc123:3600000", &state, &time_us,
              &run_id, &max_ttl_ms);
  EXPECT_EQ(run_id, "abc123");
  EXPECT_EQ(max_ttl_ms, 3600000);
  ParseMarker("trusted:0:abc123", &state, &time_us, &run_id, &max_ttl_ms);
  EXPECT_EQ(max_ttl_ms, 0);
}

}  // namespace
}  // namespace redlock::internal
