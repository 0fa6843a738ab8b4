#include "sim/base/json_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace gossipsim {

namespace {
std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}
}  // namespace

std::string JsonReader::one_of(const std::vector<std::string>& names) {
  return fmt::format("one of {}", fmt::join(names, ", "));
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

void check_input_file(const std::string& file, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (!fs::exists(st)) throw InputError(file, "", "cannot open the file: it is missing or unreadable");
  // A folder, a device such as /dev/zero or a pipe would be read for ever.
  if (!fs::is_regular_file(st)) throw InputError(file, "", "expected " + what + ", a regular file");
  const uintmax_t size = fs::file_size(file, ec);
  if (ec || size > kMaxInputFileBytes)
    throw InputError(file, "", fmt::format("expected {} of at most {} MiB", what, kMaxInputFileBytes >> 20));
}

nlohmann::json JsonReader::parse_text(const std::string& text, const std::string& file, const std::string& where) {
  // The parser reports each value as it is read; keeping the JSON pointer of
  // the value being read lets an error (a syntax error, a number no double
  // holds) name where it is. The depth limit keeps hostile input from
  // exhausting the stack in the recursive copies and dumps after parsing.
  struct Frame {
    bool array;
    std::string key;
    size_t index = 0;
  };
  std::vector<Frame> frames;
  auto pointer = [&] {
    std::string p = where;
    for (const auto& f : frames) p += "/" + (f.array ? std::to_string(f.index) : escape_pointer(f.key));
    return p;
  };
  auto value_done = [&] {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  };
  using Event = nlohmann::json::parse_event_t;
  auto track = [&](int depth, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth > kMaxJsonDepth)
          throw InputError(file, pointer(), fmt::format("expected JSON nested at most {} levels deep", kMaxJsonDepth));
        frames.push_back({event == Event::array_start, "", 0});
        break;
      case Event::key:
        frames.back().key = parsed.get<std::string>();
        break;
      case Event::object_end:
      case Event::array_end:
        frames.pop_back();
        value_done();
        break;
      case Event::value:
        value_done();
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, track, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string at = pointer();
    throw InputError(file, at.empty() ? fmt::format("byte {}", e.byte) : at + fmt::format(" (byte {})", e.byte),
                     "expected valid JSON: " + std::string(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406: a number such as 1e400 that no double holds.
    throw InputError(file, pointer(), "expected valid JSON with finite numbers: " + std::string(e.what()));
  }
}

nlohmann::json JsonReader::parse_file(const std::string& file) {
  check_input_file(file, "a JSON file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file, "", "cannot open the file: it is missing or unreadable");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(file, "", "a file that can be read");
  return parse_text(text, file, "");
}

bool JsonReader::has(const std::string& key) const {
  known_.insert(key);
  return value_->is_object() && value_->contains(key);
}

JsonReader JsonReader::at(const std::string& key) const {
  expect_object();
  known_.insert(key);
  if (!value_->contains(key)) fail(key, "a value (this key is required)");
  return JsonReader((*value_)[key], file_, path_ + "/" + escape_pointer(key));
}

std::optional<JsonReader> JsonReader::child(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return at(key);
}

double JsonReader::as_number() const {
  if (!value_->is_number()) fail("a number");
  double v = value_->get<double>();
  if (!std::isfinite(v)) fail("a finite number");
  return v;
}

int64_t JsonReader::as_integer() const {
  if (value_->is_number_integer()) return value_->get<int64_t>();
  if (value_->is_number_float()) {
    double v = value_->get<double>();
    if (std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  }
  fail("an integer");
}

std::string JsonReader::as_string() const {
  if (!value_->is_string()) fail("a string");
  return value_->get<std::string>();
}

double JsonReader::number(const std::string& key) const { return at(key).as_number(); }
double JsonReader::number(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}
int64_t JsonReader::integer(const std::string& key) const { return at(key).as_integer(); }
int64_t JsonReader::integer(const std::string& key, int64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}
std::string JsonReader::string(const std::string& key) const { return at(key).as_string(); }
std::string JsonReader::string(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}
bool JsonReader::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  JsonReader r = at(key);
  if (!r.value().is_boolean()) r.fail("true or false");
  return r.value().get<bool>();
}

std::vector<double> JsonReader::numbers(const std::string& key) const {
  JsonReader r = at(key);
  std::vector<double> out(r.array_size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = r.element(i).as_number();
  return out;
}

size_t JsonReader::array_size() const {
  if (!value_->is_array()) fail("an array");
  return value_->size();
}

JsonReader JsonReader::element(size_t i) const {
  if (!value_->is_array() || i >= value_->size()) fail("an array with an element " + std::to_string(i));
  return JsonReader((*value_)[i], file_, path_ + "/" + std::to_string(i));
}

void JsonReader::expect_object() const {
  if (!value_->is_object()) fail("an object");
}

void JsonReader::fail(const std::string& expected) const {
  throw InputError(file_, path_.empty() ? "/" : path_, "expected " + expected);
}

void JsonReader::fail(const std::string& key, const std::string& expected) const {
  throw InputError(file_, path_ + "/" + escape_pointer(key), "expected " + expected);
}

InputError JsonReader::inside_named_file(const InputError& e, const std::string& key, const std::string& what) const {
  if (e.file() == file_) return e;
  return InputError(e.file(), e.path(),
                    e.expected() + " (in the " + what + " that " + file_ + ": " + path_of(key) + " names)");
}

void JsonReader::done() const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (!known_.count(it.key())) {
      std::vector<std::string> known(known_.begin(), known_.end());
      throw InputError(file_, path_ + "/" + escape_pointer(it.key()),
                       "unknown key; expected one of: " +
                           (known.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(known, ", "))));
    }
  }
}

}  // namespace gossipsim
