// Plain little-endian binary records for checkpoints: fixed-size values,
// strings and vectors, each read back with a bounds check, so that a
// truncated or foreign file is an InputError, never a crash.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace gossipsim {

class BinaryWriter {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put_raw(const void* data, size_t n) {
    if (n > 0) out_.append(static_cast<const char*>(data), n);  // data may be null when n is 0
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class BinaryReader {
 public:
  BinaryReader(const std::string& bytes, std::string what) : in_(bytes), what_(std::move(what)) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);  // sizeof v > 0: never a null source
    return v;
  }
  std::string get_string() {
    const uint64_t n = get<uint64_t>();
    return std::string(take(n), n);
  }
  template <typename T>
  std::vector<T> get_vector() {
    const uint64_t n = get<uint64_t>();
    if (n > in_.size() / sizeof(T) + 1) fail();
    std::vector<T> v(n);
    const char* bytes = take(n * sizeof(T));
    if (n > 0) std::memcpy(v.data(), bytes, n * sizeof(T));  // data() may be null when empty
    return v;
  }
  void get_raw(void* data, size_t n) {
    const char* bytes = take(n);
    if (n > 0) std::memcpy(data, bytes, n);
  }
  bool at_end() const { return at_ == in_.size(); }
  [[noreturn]] void fail() const {
    throw InputError(what_, "", "expected a whole checkpoint (this one is cut short or foreign)");
  }

 private:
  const char* take(size_t n) {
    if (n > in_.size() - at_) fail();
    const char* p = in_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& in_;
  std::string what_;
  size_t at_ = 0;
};

}  // namespace gossipsim
