#include "tokenizer/json_field.h"

#include <limits>

#include "tokenizer/unicode.h"

namespace canrun {
namespace {

std::string member_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

}  // namespace

JsonField JsonField::operator[](std::string_view key) const {
  expect(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end()) {
    JsonField(*value_, origin_, member_path(path_, key)).fail("is missing");
  }
  return JsonField(*it, origin_, member_path(path_, key));
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  expect(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, origin_, member_path(path_, key));
}

std::vector<JsonField> JsonField::items() const {
  expect(value_->is_array(), "an array");
  std::vector<JsonField> out;
  out.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], origin_, path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
  expect(value_->is_object(), "an object");
  std::vector<std::pair<std::string, JsonField>> out;
  out.reserve(value_->size());
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    out.emplace_back(it.key(), entry(it.key()));
  }
  return out;
}

JsonField JsonField::entry(const std::string& key) const {
  expect(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end()) JsonField(*value_, origin_, path_ + "['" + key + "']").fail("is missing");
  return JsonField(*it, origin_, path_ + "['" + key + "']");
}

std::string JsonField::as_string() const {
  expect(value_->is_string(), "a string");
  return value_->get<std::string>();
}

char32_t JsonField::as_char() const {
  const std::string text = as_string();
  const std::string valid = unicode::to_valid_utf8(text);
  if (valid != text || text.empty() || unicode::char_length(text[0]) != text.size()) {
    fail("expected a single character, got '" + text + "'");
  }
  size_t pos = 0;
  return unicode::next_char(text, pos);
}

bool JsonField::as_bool() const {
  expect(value_->is_boolean(), "a boolean");
  return value_->get<bool>();
}

int64_t JsonField::as_int() const {
  expect(value_->is_number_integer(), "an integer");
  return value_->get<int64_t>();
}

double JsonField::as_number() const {
  expect(value_->is_number(), "a number");
  return value_->get<double>();
}

int32_t JsonField::as_token_id() const {
  const int64_t id = as_int();
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
    fail("token id " + std::to_string(id) + " is out of range");
  }
  return static_cast<int32_t>(id);
}

int32_t JsonField::as_type_id() const {
  const int64_t id = as_int();
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) fail("type id " + std::to_string(id) + " is out of range");
  return static_cast<int32_t>(id);
}

size_t JsonField::as_count() const {
  const int64_t count = as_int();
  if (count < 0) fail("must not be negative");
  return static_cast<size_t>(count);
}

bool JsonField::bool_or(std::string_view key, bool fallback) const {
  const auto field = find(key);
  return field ? field->as_bool() : fallback;
}

std::string JsonField::string_or(std::string_view key, std::string fallback) const {
  const auto field = find(key);
  return field ? field->as_string() : std::move(fallback);
}

std::optional<std::string> JsonField::optional_string(std::string_view key) const {
  const auto field = find(key);
  if (!field) return std::nullopt;
  return field->as_string();
}

void JsonField::fail(const std::string& problem) const {
  canrun::fail(ErrorKind::kTokenizer,
               origin_ + ": " + (path_.empty() ? "(top level)" : path_) + ": " + problem);
}

void JsonField::expect(bool ok, std::string_view expected) const {
  if (!ok) fail("expected " + std::string(expected) + ", got " + value_->type_name());
}

}  // namespace canrun
