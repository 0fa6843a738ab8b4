#include "base/distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <tuple>

namespace gossipsim {

Distribution Distribution::constant(double v) {
  Distribution d;
  d.a_ = v;
  return d;
}

// What parse() allows for the values of one domain and bounds, and one
// function per kind that reads its parameters into a distribution.
struct Distribution::Reader {
  const JsonReader& r;
  bool positive, nonneg;
  Bounds bounds;
  std::string sign;  // what a value must be, in words

  // A floor above 0 (the smallest draw a use allows: 1 ms for churn
  // periods, 1 kbit/s for capacities) also bounds every location parameter
  // from below: a value under it would be raised to it without a word.
  Reader(const JsonReader& r, Domain domain, Bounds b)
      : r(r),
        positive(domain == Domain::kPositive),
        nonneg(domain != Domain::kAny),
        bounds(b),
        sign((b.min_draw > 0 ? fmt::format("a number >= {:g}", b.min_draw)
                             : std::string(positive ? "a number > 0" : "a number >= 0")) +
             (std::isfinite(b.max) ? fmt::format(" and <= {:g}", b.max) : "")) {}

  bool bad(double v) const {
    return (positive && !(v > 0)) || (nonneg && v < 0) || v > bounds.max ||
           (bounds.min_draw > 0 && v < bounds.min_draw);
  }
  void at_least_floor(const std::string& key, double v) const {
    if (bounds.min_draw > 0 && v < bounds.min_draw) r.fail(key, fmt::format("a number >= {:g}", bounds.min_draw));
  }
  void check(const JsonReader& at, const std::string& key, double v) const {
    if (bad(v)) at.fail(key, sign);
  }
  void at_most(const std::string& key, double v) const {
    if (v > bounds.max) r.fail(key, fmt::format("a number <= {:g}", bounds.max));
  }

  void constant(Distribution& d) const {
    d.a_ = r.number("value");
    check(r, "value", d.a_);
  }
  void uniform(Distribution& d) const {
    d.a_ = r.number("min");
    d.b_ = r.number("max");
    check(r, "min", d.a_);
    r.require(d.b_ >= d.a_, "max", "a number >= min");
    at_most("max", d.b_);
  }
  // Truncated at `min` (default 0) in a domain of non-negative values.
  void normal(Distribution& d) const {
    d.a_ = r.number("mean");
    d.b_ = r.number("std");
    r.require(d.b_ >= 0, "std", "a number >= 0");
    at_most("mean", d.a_);
    at_least_floor("mean", d.a_);
    at_most("std", d.b_);
    d.truncated_ = nonneg || r.has("min");
    d.floor_ = r.number("min", 0.0);
    if (nonneg) check(r, "min", d.floor_ + (positive ? 1e-300 : 0));
    if (d.truncated_ && d.b_ == 0) r.require(d.a_ >= d.floor_, "mean", "a mean >= the truncation point");
    if (d.truncated_ && d.b_ > 0)
      r.require(d.a_ + 6 * d.b_ > d.floor_, "mean", "a mean within 6 std of the truncation point");
  }
  void lognormal(Distribution& d) const {
    d.a_ = r.number("median");
    d.b_ = r.number("sigma");
    r.require(d.a_ > 0, "median", "a number > 0");
    at_most("median", d.a_);
    at_least_floor("median", d.a_);
    r.require(d.b_ <= 20, "sigma", "a number <= 20");
    r.require(d.b_ >= 0, "sigma", "a number >= 0");
  }
  void exponential(Distribution& d) const {
    d.a_ = r.number("mean");
    r.require(d.a_ > 0, "mean", "a number > 0");
    at_most("mean", d.a_);
    at_least_floor("mean", d.a_);
  }
  void pareto(Distribution& d) const {
    d.a_ = r.number("scale");
    d.b_ = r.number("shape");
    r.require(d.a_ > 0, "scale", "a number > 0");
    at_most("scale", d.a_);
    at_least_floor("scale", d.a_);
    r.require(d.b_ > 0, "shape", "a number > 0");
  }
  void empirical(Distribution& d) const {
    d.values_ = r.numbers("values");
    r.require(!d.values_.empty(), "values", "a non-empty array of numbers");
    for (size_t i = 0; i < d.values_.size(); ++i) check(r.at("values"), std::to_string(i), d.values_[i]);
    std::vector<double> w = r.has("weights") ? r.numbers("weights") : std::vector<double>(d.values_.size(), 1.0);
    r.require(w.size() == d.values_.size(), "weights", "as many weights as values");
    double total = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (!(w[i] >= 0)) r.at("weights").fail(std::to_string(i), "a weight >= 0");
      total += w[i];
      d.cumulative_.push_back(total);
    }
    r.require(total > 0 && std::isfinite(total), "weights", "weights that are not all zero, with a finite sum");
  }
};

Distribution Distribution::parse(const JsonReader& r, Domain domain, Bounds bounds) {
  const Reader read(r, domain, bounds);
  if (r.value().is_number()) {
    double v = r.as_number();
    if (read.bad(v)) r.fail(read.sign);
    Distribution d = constant(v);
    d.bounds_ = bounds;
    return d;
  }
  if (!r.value().is_object()) r.fail("a number or an object {\"dist\": ...}");
  using Read = void (Reader::*)(Distribution&) const;
  static const std::vector<std::tuple<std::string, Kind, Read>> kinds = {
      {"constant", Kind::kConstant, &Reader::constant},
      {"uniform", Kind::kUniform, &Reader::uniform},
      {"normal", Kind::kNormal, &Reader::normal},
      {"lognormal", Kind::kLognormal, &Reader::lognormal},
      {"exponential", Kind::kExponential, &Reader::exponential},
      {"pareto", Kind::kPareto, &Reader::pareto},
      {"empirical", Kind::kEmpirical, &Reader::empirical}};
  Distribution d;
  d.bounds_ = bounds;
  const std::string kind = r.string("dist");
  auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return std::get<0>(k) == kind; });
  if (it == kinds.end()) r.fail("dist", "one of constant, uniform, normal, lognormal, exponential, pareto, empirical");
  d.kind_ = std::get<1>(*it);
  (read.*std::get<2>(*it))(d);
  r.done();
  return d;
}

double Distribution::sample(Rng& rng) const { return std::clamp(draw(rng), bounds_.min_draw, bounds_.max); }

double Distribution::draw(Rng& rng) const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kUniform:
      return a_ + (b_ - a_) * uniform01(rng);
    case Kind::kNormal: {
      boost::random::normal_distribution<double> n(a_, b_);
      double v = n(rng);
      while (truncated_ && v < floor_) v = n(rng);
      return v;
    }
    case Kind::kLognormal:
      return boost::random::lognormal_distribution<double>(std::log(a_), b_)(rng);
    case Kind::kExponential:
      return boost::random::exponential_distribution<double>(1.0 / a_)(rng);
    case Kind::kPareto:
      return a_ / std::pow(1.0 - uniform01(rng), 1.0 / b_);
    case Kind::kEmpirical: {
      double u = uniform01(rng) * cumulative_.back();
      size_t i = std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
      return values_[std::min(i, values_.size() - 1)];
    }
  }
  return a_;
}

double Distribution::mean() const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kUniform:
      return (a_ + b_) / 2;
    case Kind::kNormal:
      return a_;
    case Kind::kLognormal:
      return a_ * std::exp(b_ * b_ / 2);
    case Kind::kExponential:
      return a_;
    case Kind::kPareto:
      return b_ > 1 ? a_ * b_ / (b_ - 1) : INFINITY;
    case Kind::kEmpirical: {
      double s = 0, prev = 0;
      for (size_t i = 0; i < values_.size(); ++i) {
        s += values_[i] * (cumulative_[i] - prev);
        prev = cumulative_[i];
      }
      return s / cumulative_.back();
    }
  }
  return a_;
}

namespace {

// P(Z > z) for a standard normal Z.
double normal_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The integral of a non-increasing s over [lo, hi], on a log grid (the
// survival functions below fall over orders of magnitude).
template <class F>
double integrate_survival(F s, double lo, double hi) {
  if (!(hi > lo)) return 0;
  constexpr int kSteps = 4000;
  double total = 0;
  const double start = std::max(lo, hi * 1e-12);
  total += (start - lo) * s(lo);  // s <= 1 there: at most start - lo
  const double ratio = std::pow(hi / start, 1.0 / kSteps);
  double x = start, sx = s(x);
  for (int i = 0; i < kSteps; ++i) {
    const double next = i + 1 == kSteps ? hi : x * ratio, sn = s(next);
    total += (next - x) * (sx + sn) / 2;  // trapezoid
    x = next;
    sx = sn;
  }
  return total;
}

}  // namespace

double Distribution::expected_min(double cap) const {
  // Draws are clamped into [lo, hi]; E[min(X, T)] = integral over [0, T) of
  // P(X > x) dx for X >= 0 (every use of this is a non-negative quantity).
  const double lo = std::max(0.0, bounds_.min_draw), hi = std::min(bounds_.max, cap);
  if (hi <= lo) return std::min(lo, cap);
  auto clamp = [&](double v) { return std::min(std::max(v, lo), hi); };
  switch (kind_) {
    case Kind::kConstant:
      return clamp(a_);
    case Kind::kEmpirical: {
      double s = 0, prev = 0;
      for (size_t i = 0; i < values_.size(); ++i) {
        s += clamp(values_[i]) * (cumulative_[i] - prev);
        prev = cumulative_[i];
      }
      return s / cumulative_.back();
    }
    case Kind::kExponential:  // the integral of e^(-x/m) over [lo, hi)
      return lo + a_ * (std::exp(-lo / a_) - std::exp(-hi / a_));
    case Kind::kUniform: {  // 1 below a, falling linearly to 0 at b
      const double flat = std::max(0.0, std::min(hi, a_) - lo);
      const double x0 = std::max(lo, a_), x1 = std::min(hi, b_);
      const double slope = x1 > x0 ? ((b_ - x0) + (b_ - x1)) / 2 * (x1 - x0) / (b_ - a_) : 0.0;
      return lo + flat + slope;
    }
    case Kind::kPareto: {  // 1 below the scale, (scale / x)^shape above
      const double flat = std::max(0.0, std::min(hi, a_) - lo);
      const double x0 = std::max(lo, a_);
      if (hi <= x0) return lo + flat;
      const double tail = b_ == 1 ? a_ * std::log(hi / x0)
                                  : std::pow(a_, b_) * (std::pow(hi, 1 - b_) - std::pow(x0, 1 - b_)) / (1 - b_);
      return lo + flat + tail;
    }
    default:
      break;
  }
  auto survival = [&](double x) -> double {  // of the law before clamping, x >= 0
    switch (kind_) {
      case Kind::kUniform:
        return x < a_ ? 1.0 : x >= b_ ? 0.0 : (b_ - x) / (b_ - a_);
      case Kind::kNormal: {
        if (b_ == 0) return x < a_ ? 1.0 : 0.0;
        const double tail = normal_tail((x - a_) / b_);
        if (!truncated_) return tail;
        const double kept = normal_tail((floor_ - a_) / b_);
        return x < floor_ ? 1.0 : kept > 0 ? tail / kept : 0.0;
      }
      case Kind::kLognormal:
        return x <= 0 ? 1.0 : b_ == 0 ? (x < a_ ? 1.0 : 0.0) : normal_tail((std::log(x) - std::log(a_)) / b_);
      case Kind::kExponential:
        return std::exp(-x / a_);
      case Kind::kPareto:
        return x < a_ ? 1.0 : std::pow(a_ / x, b_);
      default:
        return 0.0;
    }
  };
  // min(clamp(X), T) >= lo always: lo plus the integral of P(X > x) over [lo, hi).
  return lo + integrate_survival(survival, lo, hi);
}

std::string Distribution::describe() const {
  switch (kind_) {
    case Kind::kConstant:
      return fmt::format("{}", a_);
    case Kind::kUniform:
      return fmt::format("uniform({}, {})", a_, b_);
    case Kind::kNormal:
      return fmt::format("normal({}, {})", a_, b_);
    case Kind::kLognormal:
      return fmt::format("lognormal(median {}, sigma {})", a_, b_);
    case Kind::kExponential:
      return fmt::format("exponential(mean {})", a_);
    case Kind::kPareto:
      return fmt::format("pareto({}, {})", a_, b_);
    case Kind::kEmpirical:
      return fmt::format("empirical({} values)", values_.size());
  }
  return "?";
}

}  // namespace gossipsim
