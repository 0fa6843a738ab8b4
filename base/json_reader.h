// Reading JSON input with the path of every value, so that each error names
// the file, the JSON path (RFC 6901 pointer, e.g. /network/links/latency_ms)
// and what was expected. A reader remembers every key it was asked about
// (read or tested with has()); done() refuses any other key, so unknown or
// misspelt options never pass silently.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "base/error.h"

namespace gossipsim {

// The largest input file gossipsim reads (scenario, topology, replay).
inline constexpr uintmax_t kMaxInputFileBytes = uintmax_t(512) << 20;

// Refuses, as an InputError naming `file`, anything but an existing regular
// file of at most kMaxInputFileBytes; `what` says what was expected.
void check_input_file(const std::string& file, const std::string& what);

// A file that a value of the input names (a topology file, a CSV trace, a
// regions file), as read: where it was named and the path it resolved to.
struct NamedInput {
  std::string pointer;  // e.g. /network/profiles/0/capacity_mbps/csv
  std::string path;
};

class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string file, std::string path = "");

  // Parses a file; a missing file, a syntax error, a number out of range or
  // nesting deeper than kMaxJsonDepth is an InputError.
  static nlohmann::json parse_file(const std::string& file);
  // The same for text read from elsewhere; `where` names it in errors.
  static nlohmann::json parse_text(const std::string& text, const std::string& file, const std::string& where);
  static constexpr int kMaxJsonDepth = 64;

  const nlohmann::json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const { return path_ + "/" + key; }

  bool has(const std::string& key) const;
  JsonReader at(const std::string& key) const;  // required key, any type
  std::optional<JsonReader> child(const std::string& key) const;

  double number(const std::string& key) const;
  double number(const std::string& key, double fallback) const;
  int64_t integer(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  std::string string(const std::string& key) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::vector<double> numbers(const std::string& key) const;
  // A string naming one of `names`, as its enum value; the first entry is
  // the default when the key is absent. Anything else fails with the list.
  template <class E>
  E choice(const std::string& key, const EnumNames<E>& names) const {
    const std::string v = string(key, names.front().first);
    for (const auto& [name, value] : names)
      if (name == v) return value;
    fail(key, one_of(names_of(names)));
  }
  // This value itself, one of `names`.
  template <class E>
  E as_choice(const EnumNames<E>& names) const {
    const std::string v = as_string();
    for (const auto& [name, value] : names)
      if (name == v) return value;
    fail(one_of(names_of(names)));
  }
  // "one of a, b, c": how every list of choices is written in errors.
  static std::string one_of(const std::vector<std::string>& names);

  // This value itself, with a type check.
  double as_number() const;
  int64_t as_integer() const;
  std::string as_string() const;
  size_t array_size() const;           // fails unless an array
  JsonReader element(size_t i) const;  // element of an array

  void expect_object() const;
  [[noreturn]] void fail(const std::string& expected) const;
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;
  // Checks a value read from `key` against a condition.
  void require(bool ok, const std::string& key, const std::string& expected) const {
    if (!ok) fail(key, expected);
  }
  // Refuses the keys of this object that were never read.
  void done() const;
  // Records that the value at `key` named the file `path`, which was read;
  // every reader made from this one (at, child, element) shares the record.
  void note_input(const std::string& key, const std::string& path) const;
  const std::vector<NamedInput>& inputs() const { return *inputs_; }
  // An error found inside another file that `key` of this object names
  // (a topology file, a CSV trace): the same error, saying which path named
  // the file. Errors in this reader's own file are returned as they are.
  InputError inside_named_file(const InputError& e, const std::string& key, const std::string& what) const;

 private:
  JsonReader(const nlohmann::json& value, std::string file, std::string path,
             std::shared_ptr<std::vector<NamedInput>> inputs);
  const nlohmann::json* value_;
  std::string file_, path_;
  mutable std::set<std::string> known_;
  std::shared_ptr<std::vector<NamedInput>> inputs_;
};

}  // namespace gossipsim
