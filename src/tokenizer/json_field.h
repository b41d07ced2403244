// Reading tokenizer.json with errors that name the file and the field at fault:
// "<origin>: <path>: <problem>", e.g. "tokenizer.json: model.merges[12]: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/json.h"

namespace canrun {

class JsonField {
 public:
  JsonField(const Json& value, std::string origin, std::string path)
      : value_(&value), origin_(std::move(origin)), path_(std::move(path)) {}

  const Json& json() const { return *value_; }
  const std::string& origin() const { return origin_; }
  const std::string& path() const { return path_; }
  bool is_null() const { return value_->is_null(); }

  // A member that must be present (it may still be null).
  JsonField operator[](std::string_view key) const;
  // A member that may be absent; absent and null both give nullopt.
  std::optional<JsonField> find(std::string_view key) const;
  std::vector<JsonField> items() const;                            // elements of an array
  std::vector<std::pair<std::string, JsonField>> members() const;  // entries of an object
  // A member named as a map entry in messages: path['key'].
  JsonField entry(const std::string& key) const;

  std::string as_string() const;
  char32_t as_char() const;  // a string holding exactly one character
  bool as_bool() const;
  int64_t as_int() const;
  double as_number() const;
  int32_t as_token_id() const;  // a non-negative integer that fits a token id
  int32_t as_type_id() const;   // a non-negative integer that fits a type id
  size_t as_count() const;      // a non-negative integer (a length or a number of things)

  // Optional members with the library's defaults.
  bool bool_or(std::string_view key, bool fallback) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  std::optional<std::string> optional_string(std::string_view key) const;

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  void expect(bool ok, std::string_view expected) const;

  const Json* value_;
  std::string origin_;
  std::string path_;
};

}  // namespace canrun
