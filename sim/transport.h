// What a method's transfers go through. The simulated network
// (sim/network.h) is one; `gossipsim run --real` gives another
// (emulate/real_network.h): real TCP between network namespaces through
// the emulated WAN, in real time. Methods and the cluster see only this.
//
// A network that runs outside the simulator, in real time, is also its
// simulator's Pacer: before each event the simulator asks it to wait until
// the wall clock reaches the event's time. While it waits it may schedule
// events of its own (a transfer whose last byte was read), which may come
// before the one it waited for; it says so, and the simulator looks again.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"
#include "sim/simulator.h"
#include "topologies/graph.h"

namespace gossipsim {

using FlowId = uint64_t;

struct FlowRecord {
  FlowId id = 0;
  NodeId src = 0, dst = 0;
  Bytes size;
  Time start, drain_start, finish;
  bool background = false;  // cross-traffic (sim/wan.h), not a transfer of the training
  bool lost = false;        // cut by cancel_flows before it finished; finish is when
  std::string lost_reason;  // why, as the one who cut it says (events.csv)
};

class Transport {
 public:
  using FlowDone = std::function<void(const FlowRecord&)>;
  virtual ~Transport() = default;

  // Carries `size` bytes from src to dst; `on_done` runs (as an event) when
  // the last byte has arrived.
  virtual FlowId start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done, bool background = false) = 0;
  // Cuts the live flows that `which` selects. Returns them, in start order,
  // with their records marked lost and their callbacks, which the caller
  // runs (or not).
  virtual std::vector<std::pair<FlowRecord, FlowDone>> cancel_flows(
      const std::function<bool(const FlowRecord&)>& which) = 0;
  // A message that carries no model (a reservation): it costs its route's
  // latency.
  virtual void send_control(NodeId src, NodeId dst, Simulator::Action on_arrival) = 0;
  // What a transfer of `size` would take alone on its route, as the flow
  // model computes it (what a method's estimates start from).
  virtual Time nominal_time(NodeId src, NodeId dst, Bytes size) = 0;
};

// Paces a simulator in real time (Simulator::set_pacer).
class Pacer {
 public:
  virtual ~Pacer() = default;
  // Waits until the wall clock reaches virtual time `t` (false), or until
  // it has scheduled an event of its own (true: look at the queue again).
  virtual bool wait_until(Time t) = 0;
  // Work in flight that may still schedule events (transfers, messages).
  virtual bool busy() const = 0;
};

// A network that runs outside the simulator, in real time: the run's
// transport and its simulator's pacer (emulate/real_network.h).
class RealTimeNetwork : public Transport, public Pacer {
 public:
  // Time 0 is now: called as the event loop starts.
  virtual void begin() = 0;
  // What summary.json says of the run: its settings, how late its events
  // fired, and whether it is valid.
  virtual nlohmann::json report() const = 0;
};

}  // namespace gossipsim
