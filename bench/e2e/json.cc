// Copyright 2026 The redlock Authors.

#include "bench/e2e/json.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_format.h"

namespace redlock::bench {

Json Num(double value) {
  if (!std::isfinite(value)) return nullptr;
  const double rounded =
      std::strtod(absl::StrFormat("%.6g", value).c_str(), nullptr);
  if (rounded == std::trunc(rounded) && std::fabs(rounded) < 1e15) {
    return static_cast<int64_t>(rounded);
  }
  return rounded;
}

Json Nums(const std::vector<double>& values) {
  Json array = Json::array();
  for (double v : values) array.push_back(Num(v));
  return array;
}

Json DistJson(const Dist& d) {
  Json j = Json::object();
  j["count"] = d.count;
  j["min_us"] = Num(d.min);
  j["mean_us"] = Num(d.mean);
  j["p50_us"] = Num(d.p50);
  j["p90_us"] = Num(d.p90);
  j["p99_us"] = Num(d.p99);
  j["p999_us"] = Num(d.p999);
  j["max_us"] = Num(d.max);
  return j;
}

std::string Dump(const Json& j) {
  return j.dump(2, ' ', /*ensure_ascii=*/false,
                nlohmann::json::error_handler_t::replace);
}

}  // namespace redlock::bench
