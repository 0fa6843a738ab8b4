// Units of the simulation: virtual time, sizes and rates as distinct types.
//
// Time is an exact integer count of nanoseconds; it is both an instant and a
// duration (like ns-3's Time). Bytes is an integer count. Rate is bytes per
// second as a double, because max-min shares are fractions of a capacity.
// Conversions go through the named helpers below, never through raw numbers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace gossipsim {

// The largest virtual time a run may reach, in seconds (about 31.7 years;
// Time holds 292 years, so sums of times within a run stay exact).
inline constexpr double kMaxVirtualSeconds = 1e9;

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }
  static constexpr Time zero() { return Time(0); }

  constexpr int64_t ns() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Time operator+(Time o) const { return Time(ns_ + o.ns_); }
  constexpr Time operator-(Time o) const { return Time(ns_ - o.ns_); }
  Time& operator+=(Time o) {
    ns_ += o.ns_;
    return *this;
  }
  Time& operator-=(Time o) {
    ns_ -= o.ns_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ns_ * k); }
  constexpr bool operator==(Time o) const { return ns_ == o.ns_; }
  constexpr bool operator!=(Time o) const { return ns_ != o.ns_; }
  constexpr bool operator<(Time o) const { return ns_ < o.ns_; }
  constexpr bool operator<=(Time o) const { return ns_ <= o.ns_; }
  constexpr bool operator>(Time o) const { return ns_ > o.ns_; }
  constexpr bool operator>=(Time o) const { return ns_ >= o.ns_; }

 private:
  constexpr explicit Time(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

// Rounds to the nearest nanosecond.
inline Time seconds(double s) { return Time::ns(std::llround(s * 1e9)); }
inline Time milliseconds(double ms) { return Time::ns(std::llround(ms * 1e6)); }
inline Time microseconds(double us) { return Time::ns(std::llround(us * 1e3)); }
constexpr Time nanoseconds(int64_t ns) { return Time::ns(ns); }

struct Bytes {
  int64_t count = 0;
  constexpr bool operator==(Bytes o) const { return count == o.count; }
};
constexpr Bytes bytes(int64_t n) { return Bytes{n}; }

class Rate {
 public:
  constexpr Rate() = default;
  static constexpr Rate bytes_per_second(double v) { return Rate(v); }
  constexpr double bytes_per_second() const { return bps_; }
  constexpr double megabits_per_second() const { return bps_ * 8.0 / 1e6; }
  constexpr bool operator<(Rate o) const { return bps_ < o.bps_; }
  constexpr bool operator==(Rate o) const { return bps_ == o.bps_; }

 private:
  constexpr explicit Rate(double v) : bps_(v) {}
  double bps_ = 0.0;
};

// Network rates are given in megabits per second (10^6 bits), as link figures are.
constexpr Rate mbps(double v) { return Rate::bytes_per_second(v * 1e6 / 8.0); }
constexpr Rate gbps(double v) { return Rate::bytes_per_second(v * 1e9 / 8.0); }

// Time to move `b` at rate `r`, rounded to the nearest nanosecond.
inline Time transfer_time(Bytes b, Rate r) {
  return Time::ns(std::llround(static_cast<double>(b.count) * 1e9 / r.bytes_per_second()));
}

}  // namespace gossipsim
