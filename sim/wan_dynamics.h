// The living WAN during a run: plays the profiles (capacities, latencies,
// compute speeds) and the cross-traffic that /network/profiles,
// /compute/profiles and /network/cross_traffic ask for (sim/wan.h; read by
// input/wan_reader.h), recording every change in events.csv.
#pragma once

#include <functional>
#include <vector>

#include "base/random.h"
#include "sim/wan.h"

namespace gossipsim {

class Simulator;
class Network;
struct Recorder;

// Plays the profiles and the cross-traffic during a run: each profile holds
// at most one pending event, its next change, and every change applied is
// recorded; each cross-traffic entry holds one, its next flow.
class WanDynamics {
 public:
  using SetSpeed = std::function<void(NodeId, double)>;
  // More than `max_cross_flows` cross-traffic flows in all is an InputError
  // naming the entry whose gaps made the flow that went over.
  WanDynamics(Simulator& sim, Network& net, Recorder& recorder, std::vector<WanProfile> profiles,
              std::vector<CrossTraffic> traffic, SetSpeed set_speed, uint64_t seed,
              int64_t max_cross_flows = kMaxCrossTrafficFlows);
  void start();
  // Each profiled target's value when start() ran, once per target.
  const std::vector<ProfileStart>& starting_values() const { return starting_; }

  int64_t cross_flows_started() const { return cross_started_; }
  int64_t cross_flows_finished() const { return cross_finished_; }
  int64_t cross_bytes_finished() const { return cross_bytes_; }

 private:
  void schedule_next(size_t p);
  void next_flow(size_t k);

  Simulator& sim_;
  Network& net_;
  Recorder& recorder_;
  std::vector<WanProfile> profiles_;
  std::vector<CrossTraffic> traffic_;
  SetSpeed set_speed_;
  std::vector<size_t> next_;  // per profile: index of its next point
  std::vector<Time> cycle_;   // per profile: start of the current period
  std::vector<Rng> traffic_rng_;
  int64_t cross_started_ = 0, cross_finished_ = 0, cross_bytes_ = 0;
  int64_t max_cross_flows_;
  std::vector<ProfileStart> starting_;
};

}  // namespace gossipsim
