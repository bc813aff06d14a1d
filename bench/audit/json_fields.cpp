// Typed field reads for bundle.json that turn every surprise into a failure.
#include "json_fields.h"

#include <cmath>

namespace lanejit::audit {

using nlohmann::json;

std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return text;
}

void FieldReader::wrongType(const json &value, std::string_view key, const std::string &where,
                            std::string_view wanted) {
  findings_.fail(kind::kMalformed, where,
                 "field '" + std::string(key) + "' is " + describe(value) + ", not " +
                     std::string(wanted));
}

const json *FieldReader::member(const json &object, std::string_view key,
                                const std::string &where) {
  if (!object.is_object()) {
    findings_.fail(kind::kMalformed, where,
                   "expected an object with field '" + std::string(key) + "', got " +
                       describe(object));
    return nullptr;
  }
  auto it = object.find(key);
  if (it == object.end()) {
    findings_.fail(kind::kMalformed, where, "field '" + std::string(key) + "' is missing");
    return nullptr;
  }
  return &*it;
}

const json *FieldReader::optionalMember(const json &object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> FieldReader::string(const json &object, std::string_view key,
                                               const std::string &where) {
  const json *value = member(object, key, where);
  if (!value)
    return std::nullopt;
  if (!value->is_string()) {
    wrongType(*value, key, where, "a string");
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<int64_t> FieldReader::integer(const json &object, std::string_view key,
                                            const std::string &where) {
  const json *value = member(object, key, where);
  if (!value)
    return std::nullopt;
  if (value->is_number_integer())
    return value->get<int64_t>();
  if (value->is_number_float()) {
    double d = value->get<double>();
    // 2^62 keeps the conversion exact and far from overflow.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 4.6e18)
      return static_cast<int64_t>(d);
  }
  wrongType(*value, key, where, "an integer");
  return std::nullopt;
}

std::optional<double> FieldReader::numberValue(const json &value, const std::string &where,
                                               const std::string &field) {
  if (!value.is_number()) {
    findings_.fail(kind::kNotANumber, where,
                   "field '" + field + "' is " + describe(value) + ", not a number");
    return std::nullopt;
  }
  double d = value.get<double>();
  if (!std::isfinite(d)) {
    findings_.fail(kind::kNotANumber, where, "field '" + field + "' is not finite");
    return std::nullopt;
  }
  return d;
}

std::optional<double> FieldReader::number(const json &object, std::string_view key,
                                          const std::string &where) {
  const json *value = member(object, key, where);
  if (!value)
    return std::nullopt;
  return numberValue(*value, where, std::string(key));
}

std::optional<bool> FieldReader::boolean(const json &object, std::string_view key,
                                         const std::string &where) {
  const json *value = member(object, key, where);
  if (!value)
    return std::nullopt;
  if (!value->is_boolean()) {
    wrongType(*value, key, where, "true or false");
    return std::nullopt;
  }
  return value->get<bool>();
}

const json *FieldReader::array(const json &object, std::string_view key, const std::string &where) {
  const json *value = member(object, key, where);
  if (value && !value->is_array()) {
    wrongType(*value, key, where, "an array");
    return nullptr;
  }
  return value;
}

const json *FieldReader::object(const json &object, std::string_view key,
                                const std::string &where) {
  const json *value = member(object, key, where);
  if (value && !value->is_object()) {
    wrongType(*value, key, where, "an object");
    return nullptr;
  }
  return value;
}

} // namespace lanejit::audit
