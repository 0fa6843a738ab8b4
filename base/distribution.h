// Distributions of scenario values (link latency, capacity, compute time...).
//
// In JSON a value is either a plain number (constant) or an object
// {"dist": KIND, ...}:
//   constant     {"value": v}
//   uniform      {"min": a, "max": b}                       a <= b
//   normal       {"mean": m, "std": s}                      s >= 0; truncated at
//                "min" (default 0 where negative values are meaningless, see
//                Domain) by redrawing
//   lognormal    {"median": m, "sigma": s}                  m > 0, s >= 0
//   exponential  {"mean": m}                                m > 0
//   pareto       {"scale": xm, "shape": alpha}              xm > 0, alpha > 0
//   empirical    {"values": [...], "weights": [...]}        weights optional,
//                non-negative, not all zero; one value drawn with probability
//                proportional to its weight
// Every parameter is checked when the distribution is read; an invalid one is
// an InputError naming its JSON path.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "base/json_reader.h"
#include "base/random.h"

namespace gossipsim {

// What a use of a distribution allows: every location parameter (value,
// min, max, mean, median, scale, values) must be <= max and, when min_draw
// is above 0, >= min_draw; every draw is clamped into [min_draw, max], so
// that a heavy tail can never give a value
// the simulation cannot represent (a zero-length iteration, a time that
// overflows). Draws inside the bounds are unchanged.
struct DrawBounds {
  double min_draw = -INFINITY;
  double max = INFINITY;
};

class Distribution {
 public:
  enum class Kind { kConstant, kUniform, kNormal, kLognormal, kExponential, kPareto, kEmpirical };
  // kPositive: draws must be > 0 (capacities, compute times);
  // kNonNegative: draws must be >= 0 (latencies); kAny: unrestricted.
  enum class Domain { kAny, kNonNegative, kPositive };

  using Bounds = DrawBounds;

  static Distribution constant(double v);
  static Distribution parse(const JsonReader& r, Domain domain, Bounds bounds = Bounds());

  double sample(Rng& rng) const;  // a draw, clamped into the bounds
  double mean() const;            // of the untruncated law; used for nominal figures
  // E[min(X, cap)] of the draws as sample() gives them (clamped into the
  // bounds), cap > 0: finite where the mean is not (a Pareto of shape <= 1)
  // and unmoved by a rare huge value. T / expected_min(T) estimates how many
  // draws of gaps fill a span T: what bounds the work a renewal process of
  // these gaps makes (renewal theory: the count is at most 2T / E[min(X, T)]
  // on average).
  double expected_min(double cap) const;
  Kind kind() const { return kind_; }
  std::string describe() const;

 private:
  struct Reader;  // reads one kind's parameters (distribution.cc)
  friend struct Reader;
  double draw(Rng& rng) const;

  Kind kind_ = Kind::kConstant;
  double a_ = 0, b_ = 0, floor_ = 0;
  bool truncated_ = false;
  Bounds bounds_;
  std::vector<double> values_, cumulative_;
};

}  // namespace gossipsim
