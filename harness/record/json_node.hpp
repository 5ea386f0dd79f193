// Reading JSON with errors that name where they are: every value carries its path from the
// document root, so a bad report says "cases[3].timing.span.median: expected a number, got
// string" instead of a bare type error. Used by every codec that reads what kwb wrote.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/catalogue/excerpt.hpp"

namespace kwb {

// Any report, record, journal or cache file that cannot be read back; what() says where and why.
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace json_read {

using Json = nlohmann::ordered_json;

// A JSON value with its path from the document root, so that every error can say where it is.
class Node {
 public:
  Node(const Json& value, std::string path) : value_(value), path_(std::move(path)) {}

  [[noreturn]] void fail(std::string_view message) const {
    throw ReportError(fmt::format("{}: {}", path_.empty() ? "(top level)" : path_, message));
  }

  const Json& object() const {
    if (!value_.is_object()) fail(fmt::format("expected an object, got {}", value_.type_name()));
    return value_;
  }

  const Json& array() const {
    if (!value_.is_array()) fail(fmt::format("expected an array, got {}", value_.type_name()));
    return value_;
  }

  std::optional<Node> find(std::string_view key) const {
    const Json& obj = object();
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    return Node(*it, child_path(key));
  }

  Node operator[](std::string_view key) const {
    if (auto node = find(key)) return *node;
    Node(value_, child_path(key)).fail("missing required key");
  }

  Node at(std::size_t i) const { return Node(array()[i], fmt::format("{}[{}]", path_, i)); }
  std::size_t size() const { return array().size(); }

  std::string child_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }

  double number() const {
    if (value_.is_number()) return value_.get<double>();
    if (value_.is_string()) {
      const auto& s = value_.get_ref<const std::string&>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(fmt::format("expected a number, got {}", value_.type_name()));
  }

  template <class Int>
  Int integer() const {
    using Limits = std::numeric_limits<Int>;
    if (value_.is_number_unsigned()) {
      auto v = value_.get<std::uint64_t>();
      if (v <= static_cast<std::uint64_t>(Limits::max())) return static_cast<Int>(v);
    } else if (value_.is_number_integer()) {
      auto v = value_.get<std::int64_t>();
      if (v >= static_cast<std::int64_t>(Limits::min()) &&
          (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(Limits::max())))
        return static_cast<Int>(v);
    } else if (value_.is_number()) {
      fail(fmt::format("expected an integer, got {}", value_.dump()));
    } else {
      fail(fmt::format("expected an integer, got {}", value_.type_name()));
    }
    fail(fmt::format("integer {} out of range [{}, {}]", value_.dump(), Limits::min(),
                     Limits::max()));
  }

  bool boolean() const {
    if (!value_.is_boolean()) fail(fmt::format("expected a boolean, got {}", value_.type_name()));
    return value_.get<bool>();
  }

  const std::string& string() const {
    if (!value_.is_string()) fail(fmt::format("expected a string, got {}", value_.type_name()));
    return value_.get_ref<const std::string&>();
  }

  // `parse` is one of the parse_* functions; `all` lists every value, to name them in the error.
  template <class Enum, std::size_t N>
  Enum enumeration(std::optional<Enum> (*parse)(std::string_view), const Enum (&all)[N]) const {
    const std::string& text = string();
    if (auto e = parse(text)) return *e;
    std::string names;
    for (Enum e : all) names += (names.empty() ? "" : ", ") + std::string(to_string(e));
    fail(fmt::format("unknown value \"{}\" (expected one of: {})", excerpt(text), names));
  }

  const Json& json() const { return value_; }

 private:
  const Json& value_;
  std::string path_;
};

}  // namespace json_read

namespace json_write {

// JSON has no NaN or infinity (nlohmann would silently write null); a verify error or a speedup
// can legitimately be non-finite, so those travel as the strings Node::number() reads back.
inline nlohmann::ordered_json number(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace json_write

}  // namespace kwb
