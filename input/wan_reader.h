// Reading the living WAN's options (the language is documented in
// sim/wan.h and docs/wan.md) against a built topology. Every error names the
// file, the JSON path (or a CSV file and line) and what was expected.
#pragma once

#include "base/json_reader.h"
#include "base/random.h"
#include "sim/wan.h"
#include "topologies/graph.h"

namespace gossipsim {

// The points all the profiles of a scenario hold, counted as they are read
// or generated, against /limits/profile_points: 400 entries of a million
// points each are refused at the entry that goes over, not by the machine
// running out of memory.
class PointBudget {
 public:
  explicit PointBudget(int64_t limit = 10'000'000) : limit_(limit) {}
  int64_t left() const { return limit_ - used_; }
  // Counts n more points held; an InputError at `r` when over the limit.
  void take(const JsonReader& r, int64_t n);

 private:
  int64_t limit_, used_ = 0;
};

// The shortest period or step of a profile, and of an on_off period: 1 ms.
// A profile changes at most once per step, so with its point count this
// bounds the changes a run applies.
inline constexpr double kMinProfileStepS = 1e-3;

// Reads /overrides into the topology and the compute overrides.
void apply_topology_overrides(const JsonReader& r, Topology& topology, const Streams& streams,
                              ComputeOverrides& compute);

// Reads /network/profiles, /compute/profiles, /churn and
// /network/cross_traffic against the built topology.
std::vector<WanProfile> parse_profiles(const JsonReader& r, const Topology& topology, const Streams& streams,
                                       PointBudget& budget);
std::vector<WanProfile> parse_compute_profiles(const JsonReader& r, const Topology& topology, const Streams& streams,
                                               PointBudget& budget);
inline std::vector<WanProfile> parse_profiles(const JsonReader& r, const Topology& topology, const Streams& streams) {
  PointBudget budget;
  return parse_profiles(r, topology, streams, budget);
}

// The changes a profile makes over the first `horizon` of a run: its points
// before the horizon, every period.
double changes_within(const WanProfile& p, Time horizon);
Churn parse_churn(const JsonReader& r, const Topology& topology, const Streams& streams);
std::vector<CrossTraffic> parse_cross_traffic(const JsonReader& r, const Topology& topology, const Streams& streams);

}  // namespace gossipsim
