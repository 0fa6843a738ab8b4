// A living WAN: per-node and per-link overrides, links and nodes that
// change in virtual time, churn, and background cross-traffic.
//
// Node selectors (overrides, compute profiles, churn, cross-traffic ends):
//   "nodes": [ids or names], "range": [first, last] (node ids, inclusive),
//   "region": name (geo), "all": true, "fraction": f (round(f N) nodes, at
//   least 1, drawn without replacement from a stream of the entry's own).
//
// /overrides (applied in order, later entries win), each entry one selector
// (a node selector, or "link": [vertex, vertex] (names), "region_pair":
// [region, region] (the backbone link between two regions' routers)) and
//   node values   iteration_ms (number or distribution, drawn per node),
//                 jitter (0 to 0.9), up_mbps, down_mbps
//   link values   bandwidth_mbps, latency_ms
// Overrides change the built topology (so `gossipsim topology --dot` shows
// the values that result) and the nodes' compute speeds.
//
// Profiles: a piecewise-constant value in virtual time, one of
//   "points": [[time_s, value], ...]
//   "csv": "file.csv"             rows time_s,value (a header line is
//                                 allowed), relative to the scenario file
//   "diurnal": {"mean", "amplitude": 0..1, "period_s", "phase_s" (0),
//               "step_s"}: mean * (1 + amplitude * sin(2 pi (t - phase) /
//               period)), held for step_s
//   "random_walk": {"start", "sigma", "step_s", "min", "max", "until_s"}:
//               every step the value is multiplied by exp(sigma * N(0, 1)),
//               clamped to [min, max]
//   "on_off": {"on", "off" (0), "up_s", "down_s" (distributions of
//               seconds), "until_s"}: alternating periods
// and optionally "period_s": the points repeat with this period. A value
// holds from its time until the next point; before the first, the target
// keeps the value the topology gave it. Times must be >= 0 and strictly
// increasing (and < period_s when periodic). Random profiles draw from
// streams of their own (seed, entry index).
//
// /network/profiles, each entry a target and one or two profiles:
//   "link": [vertex, vertex] or "region_pair": [region, region], with
//       "capacity_mbps" (0, or 0.001 to 1e9) and/or "latency_ms" (0 to 1e6);
//   "access": node id or name, "direction": up | down | both (default),
//       with "capacity_mbps".
// Instead of absolute values, "capacity_factor" (0, or 0.001 to 1000) and
// "latency_factor" (0 to 1000) give factors of the value the target had
// when the run began (topology, overrides and --set included), as compute
// profiles do; they are turned into values when the scenario is read, and
// a product outside the absolute range is refused there.
// Capacity 0 stalls the flows on the link (they resume when it comes back,
// none is lost). A latency applies to flows and control messages that start
// after the change; paths stay those chosen by the topology's latencies.
// /compute/profiles: a node selector and "factor" (0.01 to 1000): node
// iterations that start from then on take factor times their base time.
//
// /churn, each entry a node selector and either
//   "events": [[time_s, "crash" | "leave" | "join"], ...]  (every node)
// or "cycle": {"up_s", "down_s" (distributions of seconds, drawn per node
//   from a stream of the entry's own), "until_s", "down": crash | leave
//   (default crash), "start": up | down (default up)}: alternating periods;
// and "model": average | fresh | stale (default average): what a joining
// node starts from (sim/cluster.h). A node whose first event is a join
// starts down. Each node's events, over all entries, must alternate (down,
// join, down, ...) at distinct times.
//
// /network/cross_traffic, each entry background flows between "from" and
// "to" (node selectors): from "start_s" (0) to "until_s", flows arrive with
// gaps drawn from "interarrival_s" and sizes from "size_mb" (10^6 bytes);
// each picks its ends uniformly (never the same node). They share the
// links by max-min with the training's transfers and are never cut by
// churn (it stops the training process, not the host).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/distribution.h"
#include "base/enum_names.h"
#include "base/random.h"
#include "base/units.h"
#include "topologies/graph.h"

namespace gossipsim {

// A piecewise-constant function of virtual time.
struct Profile {
  std::vector<std::pair<Time, double>> points;  // strictly increasing times
  Time period = Time::zero();                   // zero: no repetition
};

// A profile and what it drives.
// What a profiled target held before any change (summary.json's
// profile_start, so that a plot can draw the value before the first change).
struct ProfileStart {
  std::string kind;  // events.csv's: capacity (Mbit/s), latency (ms), speed (a factor)
  std::string target;
  double value = 0;
};

struct WanProfile {
  enum class Target { kLinkCapacity, kLinkLatency, kUp, kDown, kCompute };
  Target target = Target::kLinkCapacity;
  Vertex a = 0, b = 0;                    // links
  NodeId node = 0;                        // access and compute
  std::string name;                       // for events.csv: "link n0--router:x", "up n3", "n3"
  std::shared_ptr<const Profile> values;  // Mbit/s, ms or a factor; shared by the nodes of one entry
  // events.csv's kind: capacity, latency, speed.
  const char* kind() const {
    return target == Target::kLinkLatency ? "latency" : target == Target::kCompute ? "speed" : "capacity";
  }
};

// Per-node compute values that overrides set (none: the scenario's).
struct ComputeOverrides {
  std::vector<std::optional<double>> iteration_ms;  // empty, or one per node
  std::vector<std::optional<double>> jitter;
  bool empty() const { return iteration_ms.empty(); }
};

struct ChurnEvent {
  enum class Kind { kCrash, kLeave, kJoin };
  Time at;
  NodeId node = 0;
  Kind kind = Kind::kCrash;
  std::string model = "average";  // joins
  bool down() const { return kind != Kind::kJoin; }
};
inline const EnumNames<ChurnEvent::Kind>& churn_kind_names() {
  static const EnumNames<ChurnEvent::Kind> names{
      {"crash", ChurnEvent::Kind::kCrash}, {"leave", ChurnEvent::Kind::kLeave}, {"join", ChurnEvent::Kind::kJoin}};
  return names;
}

// What /churn asks for: every node's events in time order, and the nodes
// that start down.
struct Churn {
  std::vector<ChurnEvent> events;  // by time, then node
  std::vector<NodeId> start_down;
  bool empty() const { return events.empty() && start_down.empty(); }
};

struct CrossTraffic {
  std::vector<NodeId> from, to;
  Distribution size_mb = Distribution::constant(1), interarrival_s = Distribution::constant(1);
  Time start, until;
  std::string name;           // "cross_traffic/0"
  std::string file, pointer;  // where it was given: the scenario and /network/cross_traffic/<k>
  double expected_flows = 0;  // over [start, until], from E[min(gap, until - start)]
};

// The most cross-traffic flows a run may make, all entries together: each is
// a row of events.csv (about 150 bytes in memory). Bounded twice: the
// expected count before the run (from E[min(gap, span)], which a rare huge
// gap or an infinite mean cannot hide) and the flows actually made, during
// the run.
inline constexpr int64_t kMaxCrossTrafficFlows = 10'000'000;

}  // namespace gossipsim
