#include "base/json_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <type_traits>

namespace gossipsim {

namespace {
std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string JsonReader::one_of(const std::vector<std::string>& names) {
  return fmt::format("one of {}", fmt::join(names, ", "));
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string path)
    : JsonReader(value, std::move(file), std::move(path), std::make_shared<std::vector<NamedInput>>()) {}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string path,
                       std::shared_ptr<std::vector<NamedInput>> inputs)
    : value_(&value), file_(std::move(file)), path_(std::move(path)), inputs_(std::move(inputs)) {}

void JsonReader::note_input(const std::string& key, const std::string& path) const {
  inputs_->push_back({path_of(key), path});
}

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

namespace {

// nlohmann's DOM builder, fed by its SAX parser, with the JSON pointer of the
// value being read kept alongside, so that an error (a syntax error, a
// number no double holds, nesting too deep) names where it is. Linear in
// the input: the parser callback that did this before rescans a container
// after each of its values in nlohmann 3.11.2 (quadratic: two million empty
// objects took minutes). The depth limit keeps hostile input from
// exhausting the stack in the recursive copies and dumps after parsing.
class TrackingSax : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;

 public:
  TrackingSax(nlohmann::json& result, const std::string& file, const std::string& where)
      : Base(result, /*allow_exceptions=*/true), file_(file), where_(where) {}

  std::string pointer() const {
    std::string p = where_;
    for (const auto& f : frames_) p += "/" + (f.array ? std::to_string(f.index) : escape_pointer(f.key));
    return p;
  }

  bool null() { return value(Base::null()); }
  bool boolean(bool v) { return value(Base::boolean(v)); }
  bool number_integer(number_integer_t v) { return value(Base::number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) { return value(Base::number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& s) { return value(Base::number_float(v, s)); }
  bool string(string_t& v) { return value(Base::string(v)); }
  bool binary(binary_t& v) { return value(Base::binary(v)); }
  bool start_object(std::size_t n) { return open(false) && Base::start_object(n); }
  bool start_array(std::size_t n) { return open(true) && Base::start_array(n); }
  bool key(string_t& k) {
    frames_.back().key = k;
    return Base::key(k);
  }
  bool end_object() { return close(Base::end_object()); }
  bool end_array() { return close(Base::end_array()); }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& e) {
    const std::string at = pointer();
    if (std::is_same_v<Exception, nlohmann::json::parse_error>)
      throw InputError(file_, at.empty() ? fmt::format("byte {}", position) : at + fmt::format(" (byte {})", position),
                       "expected valid JSON: " + std::string(e.what()));
    // e.g. out_of_range 406: a number such as 1e400 that no double holds.
    throw InputError(file_, at, "expected valid JSON with finite numbers: " + std::string(e.what()));
  }

 private:
  struct Frame {
    bool array;
    std::string key;
    size_t index = 0;
  };
  bool value(bool ok) {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return ok;
  }
  bool open(bool array) {
    if (static_cast<int>(frames_.size()) > JsonReader::kMaxJsonDepth)
      throw InputError(file_, pointer(),
                       fmt::format("expected JSON nested at most {} levels deep", JsonReader::kMaxJsonDepth));
    frames_.push_back({array, "", 0});
    return true;
  }
  bool close(bool ok) {
    frames_.pop_back();
    return value(ok);
  }

  const std::string& file_;
  const std::string& where_;
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json JsonReader::parse_text(const std::string& text, const std::string& file, const std::string& where) {
  nlohmann::json result;
  TrackingSax sax(result, file, where);
  nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/true);
  return result;
}

nlohmann::json JsonReader::parse_file(const std::string& file) {
  check_input_file(file, "a JSON file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file, "", "cannot open the file: it is missing or unreadable");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(file, "", "expected a file that can be read");
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
  return JsonReader((*value_)[key], file_, path_ + "/" + escape_pointer(key), inputs_);
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
double JsonReader::number(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }
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
  return JsonReader((*value_)[i], file_, path_ + "/" + std::to_string(i), inputs_);
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
