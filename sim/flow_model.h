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
//   - a flow never exceeds bandwidth_factor x window_bytes / RTT, RTT = 2 x
//     the route's latency (the window bound of CM02, scaled as SimGrid 3.32
//     scales it).
// LV08's reverse ACK traffic (0.05 of a flow's rate on the opposite
// direction) is not modelled: in a full-duplex network it only matters when
// that direction is saturated.
//
// slowstart: TCP's slow start, loss-free, inside the same progressive
// filling (after Cardwell, Savage and Anderson, "Modeling TCP latency",
// INFOCOM 2000, without losses):
//   - the latency phase is the route's latency (the first byte's way to the
//     receiver), plus a round trip for the handshake on a fresh connection;
//   - every resource offers bandwidth_factor x its capacity (the payload
//     share of a packet: 1448 of 1500 bytes with TCP timestamps);
//   - sharing is max-min;
//   - a flow in slow start sends in rounds of one round trip (RTT = 2 x the
//     route's latency): in round k it may send a window of
//     initial_window_bytes x 2^k, at its share, and then waits for the
//     round's end (its ACKs); a round that ends before its window is sent
//     means the pipe is full, and the flow leaves slow start. A flow never
//     exceeds max_window_bytes per round trip.
//   - connections: fresh (a new connection per transfer: handshake, then
//     slow start), persistent (kept per pair, slow start again after idle,
//     as Linux does by default: no handshake) or warm (kept and warm: no
//     handshake, no slow start).
//
// slowstart with a congestion control (/network/slowstart/congestion: bbr,
// cubic or reno; "none", the default, is the loss-free model above): every
// resource also holds a drop-tail queue of queue_packets packets of
// packet_bytes, as the emulated WAN's and ns-3's resources do, and what
// waits in it delays every packet through it (queue / capacity):
//   - the queue of a resource, at any time, is what the flows whose rate it
//     fixes have in flight beyond what the pipe holds (rate x the route's
//     round trip), with, for a flow sending in rounds, at least what of the
//     round's window it has yet to send (it left the host faster than the
//     resource drains it); at most the drop-tail queue. How much of that
//     window has left is round_sending's: burst (the default), all of it
//     at the round's start; acked, as the last round's ACKs come back, at
//     g times the rate it drains (g = 2 in slow start under cubic and
//     reno, BBR's startup gain 2 / ln 2, 1 past slow start), the first
//     window of a connection at once; paced (bbr only), as Linux's BBR
//     paces its startup: the first window at once, each later round at a
//     pacing rate that also bounds the flow, 2 / ln 2 x 0.99 (Linux's
//     margin) times its bandwidth estimate, never lowered. The estimate is
//     the largest delivery rate of a round so far: what it sent over the
//     round trip stretched by how much longer it was sending than the
//     round before (Linux's rate samples span the send times since the
//     last delivery). A round the pace held short of its window does not
//     end startup; the next may send the window again plus what was sent
//     (the window grows by what is ACKed);
//   - a flow's round trips, its handshake and its first byte wait behind
//     the queues of its route's resources and, for the ACKs' way back, of
//     their other directions (so a receiver's busy uplink slows what it
//     receives), as they are when the round starts; a flow's own round is
//     not behind itself (only its standing excess counts for it);
//   - cubic and reno: slow start goes on past a full pipe (the queue takes
//     what the pipe does not) until a queue on the route is full at a
//     round's end: a loss, the window cut to beta (0.7 cubic, 0.5 reno); the
//     flow then keeps sending in rounds, its window growing by one segment
//     a round trip (reno) or cubic's TCP-friendly 3 (1 - beta) / (1 + beta)
//     segments, and cut again at the next overflow;
//   - bbr: startup ends once its share holds it for a whole round (its
//     bandwidth no longer grows), and from then on the flow keeps twice
//     its pipe in flight (BBR's cwnd gain of 2: Cardwell et al., ACM Queue
//     14(5), 2016) at its max-min share.
// Left out: CUBIC's HyStart (on shared bottlenecks it made the model slower
// than Linux: docs/network-model.md), the cubic function's growth far from
// the last loss, BBR's probing cycles and its pacing below the share past
// startup, and within a round the rise of BBR's pace as its ACKs come in
// (paced takes a round's estimate at the next round's start).
#pragma once

#include "base/enum_names.h"

namespace gossipsim {

struct FlowModel {
  bool tcp = false;         // LV08
  bool slow_start = false;  // slowstart
  // tcp (LV08)
  double latency_factor = 13.01;
  double bandwidth_factor = 0.97;
  double weight_s_bytes = 20537;
  double window_bytes = 4194304;
  // slowstart
  // /network/model's names: flow_model_names() below; `tcp` and
  // `slow_start` say which.
  enum class Kind { kMaxmin, kTcp, kSlowstart };
  enum class Connections { kFresh, kPersistent, kWarm };
  Connections connections = Connections::kFresh;
  double initial_window_bytes = 14480;  // 10 segments of 1448 bytes: Linux's initial window
  double payload_factor = 1448.0 / 1500.0;
  double max_window_bytes = 4194304;  // Linux's largest send buffer (net.ipv4.tcp_wmem)
  // slowstart's congestion control and queues (above).
  enum class Congestion { kNone, kBbr, kCubic, kReno };
  Congestion congestion = Congestion::kNone;
  double queue_packets = 1000;  // Linux's default txqueuelen; the emulator's and ns-3's queue
  double packet_bytes = 1500;   // a full packet on the wire (the MTU)
  // How a round's window leaves its host (Network::round_waiting): burst,
  // all at the round's start; acked, as the last round's ACKs come back;
  // paced (bbr only), at BBR's startup pacing rate, which bounds the flow.
  enum class RoundSending { kBurst, kAcked, kPaced };
  RoundSending round_sending = RoundSending::kBurst;
  bool queues() const { return slow_start && congestion != Congestion::kNone; }
  bool paced() const { return queues() && round_sending == RoundSending::kPaced; }
};

// How connections are named in scenarios and results: "fresh", "persistent",
// "warm" (/network/slowstart/connections, /network/real/connections).
inline const EnumNames<FlowModel::Kind>& flow_model_names() {
  static const EnumNames<FlowModel::Kind> names = {
      {"maxmin", FlowModel::Kind::kMaxmin}, {"tcp", FlowModel::Kind::kTcp}, {"slowstart", FlowModel::Kind::kSlowstart}};
  return names;
}
// /network/slowstart/congestion: "none", "bbr", "cubic", "reno".
inline const EnumNames<FlowModel::Congestion>& congestion_names() {
  static const EnumNames<FlowModel::Congestion> names = {{"none", FlowModel::Congestion::kNone},
                                                         {"bbr", FlowModel::Congestion::kBbr},
                                                         {"cubic", FlowModel::Congestion::kCubic},
                                                         {"reno", FlowModel::Congestion::kReno}};
  return names;
}
// /network/slowstart/round_sending: "burst", "acked", "paced".
inline const EnumNames<FlowModel::RoundSending>& round_sending_names() {
  static const EnumNames<FlowModel::RoundSending> names = {{"burst", FlowModel::RoundSending::kBurst},
                                                           {"acked", FlowModel::RoundSending::kAcked},
                                                           {"paced", FlowModel::RoundSending::kPaced}};
  return names;
}
inline const EnumNames<FlowModel::Connections>& connections_names() {
  static const EnumNames<FlowModel::Connections> names = {{"fresh", FlowModel::Connections::kFresh},
                                                          {"persistent", FlowModel::Connections::kPersistent},
                                                          {"warm", FlowModel::Connections::kWarm}};
  return names;
}

}  // namespace gossipsim
