// A living WAN: per-node and per-link overrides, and capacities that change
// in virtual time.
//
// /overrides (applied in order, later entries win), each entry one selector
// and the values it sets:
//   selectors  "nodes": [ids or names], "range": [first, last] (node ids,
//              inclusive), "region": name (geo), "all": true;
//              "link": [vertex, vertex] (names), "region_pair": [region,
//              region] (the backbone link between two regions' routers)
//   node values   iteration_ms (number or distribution, drawn per node),
//                 jitter (0 to 0.9), up_mbps, down_mbps
//   link values   bandwidth_mbps, latency_ms
// Overrides change the built topology (so `gossipsim topology --dot` shows
// the values that result) and the nodes' compute speeds.
//
// /network/profiles: capacities that change in time, each entry a target
// and a profile in Mbit/s:
//   targets   "link": [vertex, vertex], "region_pair": [region, region],
//             "access": node id or name with "direction": up | down | both
//   profiles  "points": [[time_s, mbps], ...]   piecewise constant
//             "csv": "file.csv"                 rows time_s,mbps (a header
//                                               line is allowed), relative
//                                               to the scenario file
//             "diurnal": {"mean": mbps, "amplitude": 0..1, "period_s",
//                         "phase_s" (0), "step_s"}: mean * (1 + amplitude *
//                         sin(2 pi (t - phase) / period)), held for step_s
//             "random_walk": {"start", "sigma", "step_s", "min", "max",
//                         "until_s"}: every step the value is multiplied by
//                         exp(sigma * N(0, 1)), clamped to [min, max]
//             "on_off": {"on", "off" (0), "up_s", "down_s" (distributions
//                         of seconds), "until_s"}: alternating periods
//   and optionally "period_s": the points repeat with this period.
// A value holds from its time until the next point; before the first, the
// link keeps the capacity the topology gave it. Capacity 0 stalls the flows
// on the link (they resume when it comes back, none is lost). Times must be
// >= 0 and strictly increasing (and < period_s when periodic); values 0 or
// within [0.001, 1e9] Mbit/s. Random profiles draw from streams of their
// own (seed, "profile", entry index). Latencies do not vary in time: routes
// are chosen by latency once.
#pragma once

#include <string>
#include <vector>

#include "sim/base/distribution.h"
#include "sim/base/json_reader.h"
#include "sim/base/random.h"
#include "sim/base/units.h"
#include "topologies/graph.h"

namespace gossipsim {

class Simulator;
class Network;
struct Recorder;

// A piecewise-constant function of virtual time.
struct Profile {
  std::vector<std::pair<Time, double>> points;  // strictly increasing times
  Time period = Time::zero();                   // zero: no repetition
};

struct CapacityProfile {
  enum class Target { kLink, kUp, kDown };
  Target target = Target::kLink;
  Vertex a = 0, b = 0;  // kLink
  NodeId node = 0;      // kUp, kDown
  std::string name;     // for events.csv: "link n0--router:x", "up n3", "down n3"
  Profile mbps;
};

// Per-node compute values that overrides set (NaN: the scenario's).
struct ComputeOverrides {
  std::vector<double> iteration_ms;  // empty, or one per node
  std::vector<double> jitter;
  bool empty() const { return iteration_ms.empty(); }
};

// Reads /overrides into the topology and the compute overrides.
void apply_topology_overrides(const JsonReader& r, Topology& topology, const Streams& streams, ComputeOverrides& compute);

// Reads /network/profiles against the built topology.
std::vector<CapacityProfile> parse_profiles(const JsonReader& r, const Topology& topology, const Streams& streams);

// Plays the profiles during a run: each holds at most one pending event, its
// next change, and every change applied is recorded.
class WanDynamics {
 public:
  WanDynamics(Simulator& sim, Network& net, const std::vector<CapacityProfile>& profiles, Recorder& recorder);
  void start();

 private:
  void schedule_next(size_t p);

  Simulator& sim_;
  Network& net_;
  const std::vector<CapacityProfile>& profiles_;
  Recorder& recorder_;
  std::vector<size_t> next_;   // per profile: index of its next point
  std::vector<Time> cycle_;    // per profile: start of the current period
};

}  // namespace gossipsim
