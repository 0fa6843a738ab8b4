// An emulated WAN on this machine: one network namespace per compute node,
// each with a TUN device, and a forwarder that carries IPv4 packets between
// them along the routes the simulator uses (sim/network.h: uplink, the
// links of the latency-shortest path, downlink), through every resource of
// the route with its capacity, its latency and a drop-tail queue, in real
// time. Mahimahi's delay and link shells do the same for one path; the
// kernel here has no netem, so latency is added in user space.
//
// Each resource serves packets first in, first out at its capacity (a
// packet of L bytes takes L / C); a packet that arrives while `queue_packets`
// packets wait there (the one being sent included) is dropped; after a link
// it waits the link's latency (access links have none). The forwarder is a
// discrete-event loop whose events (a packet reaching a resource, or its
// destination) fire when the monotonic clock reaches their time: it sleeps
// in epoll until shortly before the next one and spins the rest. Every
// event's lag (how late it fired) is recorded; a run whose lag is too large
// to trust is marked invalid (LagStats::valid), never silently used.
//
// Addresses: node n is 10.77.0.0/16 host n + 1 on its device "gs0". Nothing
// outlives the process (emulate/netns.h). Not copyable; the forwarder runs
// on a thread of its own (real-time priority where allowed) from
// construction to destruction; the public calls are thread safe.
#pragma once

#include <netinet/in.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "emulate/netns.h"
#include "topologies/graph.h"

namespace gossipsim::emulate {

struct EmulatorOptions {
  // Drop-tail queue of every resource, in packets. Default 1,000: Linux's
  // default txqueuelen and the queue of the ns-3 runs (bench/ns3_replay),
  // so that the three are compared on equal terms; a bandwidth-delay
  // product would need a round-trip time a resource does not have (its
  // flows' RTTs differ).
  int queue_packets = 1000;
  int mtu = 1500;
  // A run is valid when at most this fraction of its events fired more than
  // `late_us` late.
  double late_us = 500;
  double late_fraction = 0.001;
  bool realtime_priority = true;
};

// How late the forwarder's events fired against their times.
struct LagStats {
  int64_t events = 0, late = 0;  // late: more than EmulatorOptions::late_us
  double p50_us = 0, p99_us = 0, max_us = 0;
  int64_t packets = 0, bytes = 0, drops = 0, write_failures = 0;
  bool valid = true;
};

class EmulatedWan {
 public:
  // Builds the namespaces and devices for `topology`'s compute nodes and
  // starts forwarding. Refuses (std::runtime_error, one line) where it
  // cannot run (emulate::unavailable()), more than 1,000 nodes, or an MTU
  // outside [576, 9000].
  EmulatedWan(const Topology& topology, EmulatorOptions options = {});
  ~EmulatedWan();
  EmulatedWan(const EmulatedWan&) = delete;
  EmulatedWan& operator=(const EmulatedWan&) = delete;

  int nodes() const { return static_cast<int>(ns_.size()); }
  int ns(NodeId n) const { return ns_[n].get(); }
  static in_addr address(NodeId n);
  // The largest capacity on any route, bytes per second (what the forwarder
  // must keep up with).
  double max_capacity() const { return max_capacity_; }

  // The resources a packet from `src` to `dst` goes through (uplink, link
  // directions, downlink), as the forwarder numbers them.
  std::vector<int> resources(NodeId src, NodeId dst) const;

  LagStats lag() const;
  void reset_lag();

 private:
  struct Forwarder;
  std::vector<Fd> ns_;
  std::unique_ptr<Forwarder> forwarder_;
  double max_capacity_ = 0;
};

}  // namespace gossipsim::emulate
