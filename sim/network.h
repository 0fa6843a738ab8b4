// The flow-level network model.
//
// Resources: every compute node's access uplink and downlink, and each
// direction of every link (full duplex). A transfer is a flow over the route
// uplink(src) -> links of the path -> downlink(dst); the path is the shortest
// by latency over the graph (ties: fewest hops, then Boost's Dijkstra order,
// which is deterministic), computed on first use and kept for the pairs used.
//
// A flow first spends its route's latency (the sum of its links') without
// using bandwidth, then drains its bytes. Draining flows share every resource
// by max-min fairness, solved by progressive filling. When a flow starts
// draining or ends, only the flows connected to it through shared resources
// (directly or transitively) are re-solved: the cost of a change grows with
// that group, not with the number of flows in the network. A resource whose
// capacity exceeds what its flows could take even alone on their routes
// ("loose": capacity > (1 + 1e-6) x the sum of their bottlenecks) can never
// be saturated, so it neither joins groups nor enters the filling; this
// changes no rate, to the bit (tests/network_test.cc compares the two).
// Finish times are kept in an ordered index, and the network holds at most
// one event in the simulator: its next completion (a binary heap of finish
// times with lazy deletion behind it). Alone on its route, a flow finishes at
// start + latency + bytes / bottleneck capacity (SimGrid's convention),
// rounded to the nanosecond. A flow too slow to end within the longest run
// (1e9 virtual seconds at its current rate) has no finish time until its
// rate rises, as one stalled at capacity 0.
//
// Control messages cost their route's latency only.
//
// With FlowModel::tcp (sim/flow_model.h) the latency phase, the capacities,
// the sharing (weighted max-min) and a per-flow bound follow SimGrid's LV08;
// the default is the plain max-min above.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/flow_model.h"
#include "sim/simulator.h"
#include "sim/transport.h"
#include "topologies/graph.h"

namespace gossipsim {

struct Route {
  std::vector<int> resources;  // uplink, link directions, downlink
  Time latency;
  Rate bottleneck;
};

class Network : public Transport {
 public:
  Network(Simulator& sim, const Topology& topology, const FlowModel& model = {});
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  FlowId start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done, bool background = false) override;
  // Cuts the live flows that `which` selects (in their latency phase or
  // draining): their bandwidth goes back to the others at once, re-solved
  // like a flow's end. Returns them, in start order, with their records marked
  // lost and their callbacks, which the caller runs (or not).
  std::vector<std::pair<FlowRecord, FlowDone>> cancel_flows(
      const std::function<bool(const FlowRecord&)>& which) override;
  void send_control(NodeId src, NodeId dst, Simulator::Action on_arrival) override;

  const Route& route(NodeId src, NodeId dst);
  // The route as a packet crosses it (emulate/): each resource in order,
  // its capacity now (bytes per second, the nominal one, not the tcp
  // model's usable share) and the latency a packet spends after it (its
  // link's; 0 after an access link).
  struct Hop {
    int resource;
    double capacity;
    Time latency;
  };
  std::vector<Hop> hops(NodeId src, NodeId dst);
  // What a transfer of `size` would take alone on its route.
  Time nominal_time(NodeId src, NodeId dst, Bytes size) override;
  // The same in seconds, as a double that cannot overflow (input checks).
  double alone_seconds(NodeId src, NodeId dst, int64_t size);

  // Time-varying capacities (sim/wan.h): a resource's capacity changes now.
  // Like a flow's start or end, only the flows connected to it are re-solved
  // and their finish times moved. At capacity 0 its flows stall: they keep
  // their bytes and drain again once the capacity comes back.
  void set_access_capacity(NodeId n, bool up, Rate capacity);
  void set_link_capacity(Vertex a, Vertex b, Rate capacity);  // both directions of the link a-b
  // A link's latency changes now: flows and control messages that start
  // from now on see it; flows already in their latency phase keep theirs.
  // Paths stay those chosen by the topology's latencies.
  void set_link_latency(Vertex a, Vertex b, Time latency);
  // A link's capacity and latency now (one direction's: both are set together).
  Rate link_capacity(Vertex a, Vertex b) const;
  Time link_latency(Vertex a, Vertex b) const;
  Rate access_capacity(NodeId n, bool up) const {
    return Rate::bytes_per_second(resources_[up ? uplink(n) : downlink(n)].capacity);
  }

  size_t active_flows() const { return live_; }
  // Current max-min rate of a draining flow (0 while in its latency phase).
  Rate rate(FlowId id) const;
  // Flows re-solved so far, summed over all changes (for benchmarks).
  uint64_t flows_resolved() const { return flows_resolved_; }
  uint64_t changes() const { return changes_; }
  // For tests and benchmarks: false re-solves every resource of a group, the
  // loose ones included, as the solver did before it left them out; it then
  // counts the loose resources that saturate (the proof says none).
  void set_skip_loose(bool skip) { skip_loose_ = skip; }
  uint64_t loose_saturations() const { return loose_saturations_; }

 private:
  // What progressive filling touches, kept compact and contiguous: the
  // fields the group search and the solver read come first, in one cache line.
  struct Flow {
    static constexpr int kInline = 7;  // longer routes are read from the Route
    uint32_t stamp = 0;                // group search
    bool fixed = false;                // progressive filling
    bool draining = false;
    uint8_t length = 0;
    int inline_resources[kInline];  // the route's resources, copied in
    double rate = 0;                // bytes per second
    double weight = 1;              // share of a saturated resource per unit (tcp: 1 / penalty)
    double bound = 0;               // tcp: the window bound, bytes per second; 0: none
    double remaining = 0;           // bytes, as of `updated`
    // slowstart: the window of the current round, and what of it is still
    // to send (as of `updated`); paused: its window is sent, it waits for
    // the round's end.
    double window = 0, window_left = 0;
    bool slow_start = false, paused = false;
    // queues (FlowModel::queues()): the resource that fixed its rate in the
    // last filling (-1: its bound or a pause did); cubic and reno: past slow
    // start, its rounds go on, the window growing by segments.
    int at = -1;
    bool avoiding = false;
    int64_t updated = 0;  // ns
    int64_t finish = -1;  // ns, while draining
    const Route* route = nullptr;
    uint32_t version = 0;         // invalidates older entries of finishing_
    int64_t bottleneck_kbps = 0;  // counted in its resources' sums while draining, kB/s rounded up
    const int* resources() const { return length <= kInline ? inline_resources : route->resources.data(); }
  };
  struct FlowCold {
    FlowRecord record;
    FlowDone on_done;
    // slowstart's paced reading (bbr): startup's pacing rate and bandwidth
    // estimate (bytes per second), the round's start (ns) and length (s),
    // when its window was all sent (ns; -1: not yet) and how long the last
    // round was sending (s).
    struct Startup {
      double pace = 0, bandwidth = 0, round_s = 0, spread_s = 0;
      int64_t round_start = 0, sent_at = -1;
    } startup;
  };
  struct Finish {
    int64_t time;
    uint32_t slot, version;
    bool operator>(const Finish& o) const { return time != o.time ? time > o.time : slot > o.slot; }
  };
  struct Resource {
    double capacity = 0;           // bytes per second
    std::vector<uint32_t> flows;   // draining flows on it
    int64_t bottlenecks_kbps = 0;  // sum of their bottlenecks, kB/s (exact: integers)
    bool split = false;            // has just become loose: its group is followed through it once more
    int fixing = 0;                // flows whose rate it fixed in their last filling (Flow::at)
    // scratch for progressive filling
    double remaining = 0;
    double weight = 0;  // of its unfixed flows
    int unfixed = 0;
    uint32_t stamp = 0;
  };

  int uplink(NodeId n) const { return 2 * n; }
  int downlink(NodeId n) const { return 2 * n + 1; }
  void search(NodeId src, const std::vector<NodeId>* targets);
  const Route& build_route(NodeId src, NodeId dst, const std::vector<Vertex>& pred);
  void activate(uint32_t slot);
  // Re-solves the group of the seed resources. A capacity change passes
  // `whole`: looseness may change away from the seeds (the bottlenecks of
  // the flows through them change), so every resource of the group is
  // followed, loose or not.
  void resolve(const std::vector<int>& seeds, bool whole = false);
  void gather_group(const std::vector<int>& seeds, bool whole);  // resolve's steps
  void fill(int64_t now);
  void fix(uint32_t slot, double rate, int64_t now);
  bool loose(const Resource& r) const {
    return r.capacity > (1 + 1e-6) * 1000.0 * static_cast<double>(r.bottlenecks_kbps);
  }
  int64_t bottleneck_kbps(const Flow& f) const;
  void count_bottleneck(uint32_t slot, int64_t kbps);  // moves the flow's share of its resources' sums
  void set_capacity(std::vector<int> resources, double bytes_per_second);
  void on_completion_event();
  void reschedule();
  void set_finish(uint32_t slot, int64_t finish);
  bool is_current(const Finish& f) const;
  uint32_t slot_of(FlowId id) const;

  Time latency_phase(const Route& r) const;
  double alone_rate(const Route& r) const;                         // bytes per second
  double alone_drain_seconds(const Route& r, double bytes) const;  // after the latency phase
  void end_startup_round(uint32_t slot, FlowId id);                // slowstart, paced: a round of BBR's startup ends
  void end_round(uint32_t slot, FlowId id);  // slowstart: a round trip of a flow in slow start ends
  void pause(uint32_t slot);                 // slowstart: its round's window is sent
  double window_bound(const Route& r) const;
  double round_waiting(const Flow& f, double sent) const;
  // queues: what waits in resource r's queue at `now` (wire bytes), the
  // delay the queues of a route (or, `back`, of its ACKs' way) add now, and
  // a flow's round trip now; `own`'s unsent window is left out (it is not
  // behind itself).
  double queue_bytes(int r, int64_t now, uint32_t own = UINT32_MAX) const;
  double queue_delay_s(const int* route, int length, bool back, int64_t now, uint32_t own = UINT32_MAX) const;
  Time round_trip(const Flow& f, int64_t now, uint32_t own) const;
  // slowstart: schedules the end of a round beginning now; with queues, a
  // round's end; the next round's window, twice this one's.
  void start_round(uint32_t slot, FlowId id);
  void end_round_queued(uint32_t slot, FlowId id, int64_t now);
  void next_window(uint32_t slot, FlowId id);
  void place(uint32_t s, int r);                // Flow::at and Resource::fixing
  size_t edge(Vertex a, Vertex b) const;        // the link a-b's number; invalid_argument if none
  int link_resource(Vertex a, Vertex b) const;  // its first direction's resource (the other is next)
  void weigh(Flow& f) const;                    // tcp: weight and bound from its route

  Simulator& sim_;
  const Topology& topology_;
  FlowModel model_;
  double capacity_factor_ = 1;       // tcp: bandwidth_factor
  bool capacities_changed_ = false;  // a route's bottleneck may be stale
  std::vector<Resource> resources_;
  std::unordered_map<uint64_t, size_t> edge_index_;        // (u, v) -> edge number
  std::vector<int64_t> link_latency_;                      // ns, by edge number
  std::vector<std::unordered_map<NodeId, Route>> routes_;  // [src][dst], for the pairs used (stable addresses)
  std::unordered_map<NodeId, std::vector<Vertex>> trees_;  // recent whole shortest-path trees
  std::vector<char> peers_routed_;                         // per source: peer routes built
  // Dijkstra's state, kept from one search to the next: a search resets only
  // the vertices the previous one reached, so a search that stops early
  // costs what it visits, not the size of the graph.
  struct Search {
    std::vector<int64_t> dist;
    std::vector<Vertex> pred;  // the last search's tree; pred[v] == v: not reached
    std::vector<boost::default_color_type> color;
    std::vector<char> wanted;
    std::vector<Vertex> reached;
  } search_;
  std::vector<Flow> flows_;     // slab, by slot
  std::vector<FlowCold> cold_;  // same slots
  std::vector<uint32_t> free_flows_;
  std::unordered_map<FlowId, uint32_t> live_ids_;
  std::vector<Finish> finishing_;  // min-heap, stale entries skipped
  EventHandle next_event_;
  int64_t next_event_time_ = -1;
  FlowId next_id_ = 1;
  size_t live_ = 0;
  uint32_t stamp_ = 0;
  uint64_t flows_resolved_ = 0, changes_ = 0, loose_saturations_ = 0;
  bool skip_loose_ = true;
  std::vector<int> split_;  // resources with `split` set
  std::vector<uint32_t> scratch_flows_;
  std::vector<int> scratch_resources_;
  std::vector<std::pair<double, int>> scratch_heap_;
};

}  // namespace gossipsim
