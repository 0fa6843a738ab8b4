#include "sim/base/distribution.h"

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

  Reader(const JsonReader& r, Domain domain, Bounds b)
      : r(r), positive(domain == Domain::kPositive), nonneg(domain != Domain::kAny), bounds(b),
        sign(std::string(positive ? "a number > 0" : "a number >= 0") +
             (std::isfinite(b.max) ? fmt::format(" and <= {:g}", b.max) : "")) {}

  bool bad(double v) const { return (positive && !(v > 0)) || (nonneg && v < 0) || v > bounds.max; }
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
    r.require(d.b_ <= 20, "sigma", "a number <= 20");
    r.require(d.b_ >= 0, "sigma", "a number >= 0");
  }
  void exponential(Distribution& d) const {
    d.a_ = r.number("mean");
    r.require(d.a_ > 0, "mean", "a number > 0");
    at_most("mean", d.a_);
  }
  void pareto(Distribution& d) const {
    d.a_ = r.number("scale");
    d.b_ = r.number("shape");
    r.require(d.a_ > 0, "scale", "a number > 0");
    at_most("scale", d.a_);
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
      {"constant", Kind::kConstant, &Reader::constant},          {"uniform", Kind::kUniform, &Reader::uniform},
      {"normal", Kind::kNormal, &Reader::normal},                {"lognormal", Kind::kLognormal, &Reader::lognormal},
      {"exponential", Kind::kExponential, &Reader::exponential}, {"pareto", Kind::kPareto, &Reader::pareto},
      {"empirical", Kind::kEmpirical, &Reader::empirical}};
  Distribution d;
  d.bounds_ = bounds;
  const std::string kind = r.string("dist");
  auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return std::get<0>(k) == kind; });
  if (it == kinds.end())
    r.fail("dist", "one of constant, uniform, normal, lognormal, exponential, pareto, empirical");
  d.kind_ = std::get<1>(*it);
  (read.*std::get<2>(*it))(d);
  r.done();
  return d;
}

double Distribution::sample(Rng& rng) const {
  return std::clamp(draw(rng), bounds_.min_draw, bounds_.max);
}

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
    case Kind::kConstant: return a_;
    case Kind::kUniform: return (a_ + b_) / 2;
    case Kind::kNormal: return a_;
    case Kind::kLognormal: return a_ * std::exp(b_ * b_ / 2);
    case Kind::kExponential: return a_;
    case Kind::kPareto: return b_ > 1 ? a_ * b_ / (b_ - 1) : INFINITY;
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

std::string Distribution::describe() const {
  switch (kind_) {
    case Kind::kConstant: return fmt::format("{}", a_);
    case Kind::kUniform: return fmt::format("uniform({}, {})", a_, b_);
    case Kind::kNormal: return fmt::format("normal({}, {})", a_, b_);
    case Kind::kLognormal: return fmt::format("lognormal(median {}, sigma {})", a_, b_);
    case Kind::kExponential: return fmt::format("exponential(mean {})", a_);
    case Kind::kPareto: return fmt::format("pareto({}, {})", a_, b_);
    case Kind::kEmpirical: return fmt::format("empirical({} values)", values_.size());
  }
  return "?";
}

}  // namespace gossipsim
