// json_fields.h — typed reads of bundle.json fields that report, rather than
// throw, when a field is missing or has the wrong type. Each message names
// the place ("case 'x' round 2 visit 1") and the field.
#pragma once

#include "findings.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lanejit::audit {

class FieldReader {
public:
  explicit FieldReader(Findings &findings) : findings_(findings) {}

  // The member `key` of `object`, or nullptr after reporting it missing.
  const nlohmann::json *member(const nlohmann::json &object, std::string_view key,
                               const std::string &where);
  // Absent members are not reported (for fields only some entries have).
  const nlohmann::json *optionalMember(const nlohmann::json &object, std::string_view key);

  std::optional<std::string> string(const nlohmann::json &object, std::string_view key,
                                    const std::string &where);
  // A JSON integer, or a number with an integral value.
  std::optional<int64_t> integer(const nlohmann::json &object, std::string_view key,
                                 const std::string &where);
  // A finite number; anything else is a "not a number" failure.
  std::optional<double> number(const nlohmann::json &object, std::string_view key,
                               const std::string &where);
  std::optional<double> numberValue(const nlohmann::json &value, const std::string &where,
                                    const std::string &field);
  std::optional<bool> boolean(const nlohmann::json &object, std::string_view key,
                              const std::string &where);
  // `key` is an array; nullptr after reporting it missing or not an array.
  const nlohmann::json *array(const nlohmann::json &object, std::string_view key,
                              const std::string &where);
  const nlohmann::json *object(const nlohmann::json &object, std::string_view key,
                               const std::string &where);

  Findings &findings() { return findings_; }

private:
  void wrongType(const nlohmann::json &value, std::string_view key, const std::string &where,
                 std::string_view wanted);
  Findings &findings_;
};

// A short printable form of a JSON value for messages (strings quoted,
// long values cut).
std::string describe(const nlohmann::json &value);

} // namespace lanejit::audit
