// Copyright 2026 The redlock Authors.

#include "src/algorithm/persistence.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace redlock::internal {

void AddConfigReply(const RedisReply& reply, RedisReply* merged) {
  if (merged->type == RedisReply::Type::kError) return;
  if (reply.type == RedisReply::Type::kArray &&
      merged->type == RedisReply::Type::kArray) {
    merged->elements.insert(merged->elements.end(), reply.elements.begin(),
                            reply.elements.end());
    return;
  }
  // A refusal, or not the array CONFIG GET gives: it is the answer, and
  // ParseConfigPersistence() says why the persistence is unknown.
  *merged = reply;
}

void ParseConfigPersistence(const RedisReply& reply, Persistence* out) {
  *out = Persistence();
  if (reply.type == RedisReply::Type::kError) {
    out->error = absl::StrCat("CONFIG GET refused: ", reply.str.substr(0, 200));
    return;
  }
  if (reply.type != RedisReply::Type::kArray ||
      reply.elements.size() % 2 != 0) {
    out->error = "CONFIG GET gave an unexpected reply";
    return;
  }
  bool said_aof = false;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const RedisReply& name = reply.elements[i];
    const RedisReply& value = reply.elements[i + 1];
    if (name.type != RedisReply::Type::kString ||
        value.type != RedisReply::Type::kString) {
      out->error = "CONFIG GET gave an unexpected reply";
      return;
    }
    const std::string lower = absl::AsciiStrToLower(value.str);
    if (absl::EqualsIgnoreCase(name.str, "appendonly")) {
      said_aof = true;
      out->aof = lower == "yes";
    } else if (absl::EqualsIgnoreCase(name.str, "appendfsync")) {
      out->appendfsync = lower;
    } else if (absl::EqualsIgnoreCase(name.str, "save")) {
      out->said_save = true;
      out->save = value.str;
    }
  }
  if (!said_aof) {
    out->error = "CONFIG GET did not say appendonly";
    return;
  }
  out->known = true;
}

bool Durable(const Persistence& persistence) {
  return persistence.known && persistence.aof &&
         persistence.appendfsync == "always";
}

absl::Status DurabilityRisk(const Persistence& persistence) {
  // The rule is Durable()'s; the rest says why not.
  if (Durable(persistence)) return absl::OkStatus();
  constexpr absl::string_view kCost =
      "; after a crash or restart it casts no grant until it has been up for "
      "max_ttl (a clean SHUTDOWN cannot be told from a crash)";
  if (!persistence.known) {
    return absl::FailedPreconditionError(absl::StrCat(
        "persistence unknown (", persistence.error,
        "): taken as not durable; allow CONFIG GET (ACL +config|get) to "
        "have AOF with appendfsync always recognised",
        kCost));
  }
  if (!persistence.aof) {
    return absl::FailedPreconditionError(absl::StrCat(
        "appendonly no: a restart brings back at best the last RDB snapshot, "
        "without the newest locks and fencing counters",
        kCost, "; set appendonly yes and appendfsync always"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "appendfsync ",
      persistence.appendfsync.empty() ? "unknown" : persistence.appendfsync,
      ": a crash can lose acknowledged writes (the newest locks and fencing "
      "counters)",
      kCost, "; set appendfsync always"));
}

std::string DescribePersistence(const Persistence& persistence) {
  if (!persistence.known) {
    return absl::StrCat("unknown (", persistence.error, ")");
  }
  if (!persistence.aof) {
    if (!persistence.said_save) return "no aof";
    return persistence.save.empty()
               ? "no aof, no rdb"
               : absl::StrCat("no aof, rdb save \"", persistence.save, "\"");
  }
  return absl::StrCat("aof ", persistence.appendfsync.empty()
                                  ? "(appendfsync unknown)"
                                  : persistence.appendfsync);
}

}  // namespace redlock::internal
