// /network/model: how flows share the network (sim/network.h).
//
// maxmin (default): a flow spends its route's latency, then drains its bytes
// at its max-min fair share of every resource on its route.
//
// tcp: SimGrid's LV08 model (Velho, Mello, Stanisic, Legrand, "On the
// validity of flow-level TCP network models for grid and cloud
// simulations", ACM TOMACS 23(4), 2013; the constants are SimGrid's
// defaults for LV08):
//   - the latency phase lasts latency_factor x the route's latency (slow
//     start, the handshake);
//   - every resource offers bandwidth_factor x its capacity (headers, ACKs);
//   - sharing is weighted max-min: a flow's share of a saturated resource is
//     proportional to 1 / (route latency + sum over its resources of
//     weight_s_bytes / capacity), so flows with a shorter RTT get more, as
//     TCP gives them;
//   - a flow never exceeds window_bytes / RTT, RTT = 2 x the route's
//     latency (the window bound of CM02).
// LV08's reverse ACK traffic (0.05 of a flow's rate on the opposite
// direction) is not modelled: in a full-duplex network it only matters when
// that direction is saturated.
#pragma once

namespace gossipsim {

struct FlowModel {
  bool tcp = false;
  double latency_factor = 13.01;
  double bandwidth_factor = 0.97;
  double weight_s_bytes = 20537;
  double window_bytes = 4194304;
};

}  // namespace gossipsim
