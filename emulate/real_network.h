// `gossipsim run --real`: a run's transfers as real TCP through the emulated
// WAN (emulate/wan_emulator.h), in real time. The methods, the cluster,
// merges, evaluation and writers are the simulation's own code; what
// changes is the network. RealNetwork is the run's Transport (a transfer is
// its model's bytes sent from the sender's namespace to the receiver's, and
// ends when the receiver has read the last byte; a control message is a
// real message on a connection of its own) and its simulator's Pacer: the
// event loop waits for the wall clock to reach each event's time, as ns-3's
// real-time scheduler does (its "best effort" mode: an event that comes
// late runs at once, late, and its lateness is recorded rather than the
// clock being stopped). Iteration times are honoured the same way: a node's
// iteration ends when the wall clock reaches its end; the kernel runs at that
// event, so a kernel that does not fit in the loop's slack shows as lag.
// The scheduling information (gossip-scheduled's oracle) stays in process:
// one process drives every node's sockets.
//
// Time dilation (DieCast, Gupta et al., NSDI 2008): with dilation k the run
// goes k times slower than its virtual time: every latency and iteration
// lasts k times longer and every capacity is divided by k, so that each
// transfer and iteration keeps its shape in round trips and packets, and
// results are reported in undilated (virtual) time: wall = t0 + k x virtual.
// What does not dilate: the kernel's TCP timers in wall time (minimum RTO
// 200 ms, delayed ACK 40 ms, the initial RTO of 1 s), which shrink by k in
// virtual time, and the per-packet costs of the stack and the forwarder.
//
// Lag: how late each event fired against its wall-clock time. A run whose
// 99th percentile of lag exceeds max_lag_ms of virtual time, or whose
// forwarder fell behind, is marked invalid in its report (summary.json),
// never silently used. A real run is not deterministic; its report says so.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "emulate/sockets.h"
#include "emulate/wan_emulator.h"
#include "sim/network.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/transport.h"

namespace gossipsim::emulate {

struct RealNetworkOptions {
  Connections connections = Connections::kFresh;
  std::string congestion;    // "" for the kernel's default
  double dilation = 1;       // >= 1
  double max_lag_ms = 2;     // virtual ms; the bound on the 99th percentile of lag
  int queue_packets = 1000;  // the emulator's drop-tail queues
};

// The fastest route the emulator keeps time on, on 2 cores
// (bench/emulator_bench; `net emulate --max-rate-mbps` defaults to it).
inline constexpr double kEmulatorMaxMbps = 200;

// Refuses, in one line naming the scenario and its path, what `run --real`
// cannot run: churn, network or compute profiles and cross-traffic (the
// emulated WAN's capacities and nodes are fixed), a route whose bottleneck
// under /network/real/dilation is above kEmulatorMaxMbps (naming the least
// dilation that would do), a congestion control the kernel does not have,
// and a machine without namespaces and TUN devices.
void check_real_run(const Scenario& sc);
// RunOptions::real_network for `run --real` of `sc`.
std::function<std::unique_ptr<RealTimeNetwork>(Simulator&, const Scenario&)> real_network_for(const Scenario& sc);

// The topology as the emulator runs it under dilation k: latencies times k,
// capacities divided by k.
Topology dilated(const Topology& topology, double k);

class RealNetwork : public RealTimeNetwork {
 public:
  // Builds the emulated WAN for `topology` (dilated), sets its TCP and, for
  // persistent and warm connections, opens (and warms) a connection per
  // ordered pair of gossip peers before time 0. `model` gives nominal_time,
  // the estimates a method starts from.
  RealNetwork(Simulator& sim, const Topology& topology, const FlowModel& model, RealNetworkOptions options);
  ~RealNetwork() override;

  FlowId start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done, bool background = false) override;
  std::vector<std::pair<FlowRecord, FlowDone>> cancel_flows(
      const std::function<bool(const FlowRecord&)>& which) override;
  void send_control(NodeId src, NodeId dst, Simulator::Action on_arrival) override;
  Time nominal_time(NodeId src, NodeId dst, Bytes size) override { return model_.nominal_time(src, dst, size); }

  void begin() override;
  bool wait_until(Time t) override;
  bool busy() const override { return !flows_.empty() || !controls_.empty(); }
  nlohmann::json report() const override;

 private:
  int64_t wall_of(Time t) const;
  Time virtual_of(int64_t wall_ns) const;
  void arrived(int64_t id, int64_t at_ns);
  void control_arrived(int64_t id, int64_t at_ns);

  Simulator& sim_;
  RealNetworkOptions opt_;
  Simulator model_sim_;
  Network model_;  // the flow model on the undilated topology, for nominal_time
  Topology dilated_;
  std::unique_ptr<EmulatedWan> wan_;
  TcpSettings tcp_;
  std::unique_ptr<Sockets> sockets_;
  struct Live {
    FlowRecord record;
    FlowDone on_done;
  };
  std::map<FlowId, Live> flows_;
  std::map<int64_t, Simulator::Action> controls_;
  FlowId next_id_ = 1;
  int64_t next_control_ = 0;
  int64_t t0_ = 0;
  bool scheduled_ = false;        // an arrival was scheduled during the current wait
  std::vector<int64_t> lags_ns_;  // wall ns, one per event waited for
};

}  // namespace gossipsim::emulate
