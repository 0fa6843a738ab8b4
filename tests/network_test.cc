#include "sim/network.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "test_util.h"

namespace gossipsim {
namespace {

// Built by hand: compute nodes with access rates (bytes/s), routers, links.
struct Net {
  Topology t;
  Vertex node(double up, double down) {
    Vertex v = boost::add_vertex(t.graph);
    t.graph[v].is_node = true;
    t.graph[v].up = Rate::bytes_per_second(up);
    t.graph[v].down = Rate::bytes_per_second(down);
    t.nodes.push_back(v);
    return v;
  }
  Vertex router() {
    Vertex v = boost::add_vertex(t.graph);
    t.graph[v].is_node = false;
    return v;
  }
  void link(Vertex a, Vertex b, double rate, Time latency) {
    boost::add_edge(a, b, EdgeInfo{Rate::bytes_per_second(rate), latency}, t.graph);
  }
};

TEST(Network, OneFlowTakesLatencyPlusBytesOverBottleneck) {
  Net n;
  Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6);
  n.link(a, b, 1e7, milliseconds(10));
  Simulator sim;
  Network net(sim, n.t);
  Time finish;
  net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish = f.finish; });
  sim.run();
  EXPECT_EQ(finish, nanoseconds(1'010'000'000));
  EXPECT_EQ(net.nominal_time(0, 1, bytes(1'000'000)), nanoseconds(1'010'000'000));
}

// One flow alone between two nodes of access `access` B/s over one link of
// `link` B/s and `latency`, under the tcp model `m`: its finish, its rate at
// `probe`, and what nominal_time predicted.
struct Alone {
  Time finish, nominal;
  double rate_at_probe = 0;
};
Alone tcp_alone(double access, double link, Time latency, int64_t size, FlowModel m, Time probe) {
  Net n;
  Vertex a = n.node(access, access), b = n.node(access, access);
  n.link(a, b, link, latency);
  Simulator sim;
  m.tcp = true;
  Network net(sim, n.t, m);
  Alone out;
  FlowId id = net.start_flow(0, 1, bytes(size), [&](const FlowRecord& f) { out.finish = f.finish; });
  sim.run(probe);
  out.rate_at_probe = net.rate(id).bytes_per_second();
  sim.run();
  out.nominal = net.nominal_time(0, 1, bytes(size));
  return out;
}

TEST(NetworkTcp, OneFlowPaysTheLatencyFactorAndTheBandwidthFactor) {
  // LV08 by hand: 10 ms one way, bottleneck 1 MB/s: the latency phase is
  // 13.01 x 10 ms, the rate 0.97 MB/s (the window bound 4194304 / 0.02 s is
  // far above): 0.1301 s + 1e6 / 0.97e6 s.
  const Alone r = tcp_alone(1e6, 1e7, milliseconds(10), 1'000'000, FlowModel{}, seconds(0.5));
  const int64_t expected = 130'100'000 + std::llround(1e6 * 1e9 / 0.97e6);
  EXPECT_EQ(r.finish, nanoseconds(expected));
  EXPECT_EQ(r.nominal, nanoseconds(expected));
  EXPECT_DOUBLE_EQ(r.rate_at_probe, 0.97e6);
}

TEST(NetworkTcp, ALongRoundTripIsBoundByTheWindowTimesTheBandwidthFactor) {
  // 100 ms one way over 1 GB/s: the window gives 0.97 x 4194304 B / 0.2 s =
  // 20,342,374.4 B/s (SimGrid 3.32's LV08 bound: bandwidth_factor x gamma /
  // RTT), well under 0.97 GB/s. A smaller window halves it.
  for (double window : {4194304.0, 2097152.0}) {
    FlowModel m;
    m.window_bytes = window;
    const Alone r = tcp_alone(1e9, 1e9, milliseconds(100), 50'000'000, m, seconds(1.5));
    EXPECT_DOUBLE_EQ(r.rate_at_probe, 0.97 * window / 0.2);
    EXPECT_EQ(r.finish, nanoseconds(1'301'000'000 + std::llround(50e6 * 1e9 / (0.97 * window / 0.2))));
  }
}

// Under the tcp model `m`, the rates at `probe` of two long flows started
// together, node 0 -> 1 and node 2 -> 1 (both past their latency phase).
std::pair<double, double> tcp_rates_of_two_flows(Net& n, FlowModel m, Time probe) {
  Simulator sim;
  m.tcp = true;
  Network net(sim, n.t, m);
  FlowId first = net.start_flow(0, 1, bytes(100'000'000), {});
  FlowId second = net.start_flow(2, 1, bytes(100'000'000), {});
  sim.run(probe);
  return {net.rate(first).bytes_per_second(), net.rate(second).bytes_per_second()};
}

// Two nodes joined by one link, 12.5 MB/s (100 Mbit/s) everywhere, 25 ms
// one way; and the slowstart model with its defaults.
Net pair_at_100_mbps_25_ms() {
  Net n;
  Vertex a = n.node(12.5e6, 12.5e6), b = n.node(12.5e6, 12.5e6);
  n.link(a, b, 12.5e6, milliseconds(25));
  return n;
}

FlowModel slow_start_model() {
  FlowModel m;
  m.slow_start = true;
  return m;
}

// slowstart over persistent connections (no handshake) with queues of `cc`.
FlowModel persistent_model(FlowModel::Congestion cc) {
  FlowModel m = slow_start_model();
  m.connections = FlowModel::Connections::kPersistent;
  m.congestion = cc;
  return m;
}

// slowstart by hand. Two nodes, 12.5 MB/s (100 Mbit/s) everywhere, 25 ms
// one way (RTT 50 ms). The usable rate is R = 12.5e6 x 1448 / 1500 B/s and a
// round trip holds R x 0.05 = 603,333 B. A 1 MB flow sends windows of 14,480
// x 1, 2, 4, 8, 16, 32 (912,240 B) in six round trips, each window at R and
// then a pause to the round's end; the seventh window (926,720 B) exceeds
// what is left, 87,760 B, which it sends at R: the drain lasts 0.3 s +
// 87,760 / R. Before it: the route's 25 ms, and on a fresh connection a
// round trip of handshake.
TEST(NetworkSlowStart, OneFlowSendsItsWindowsRoundByRound) {
  const double rate = 12.5e6 * 1448.0 / 1500.0;
  const double drain = 0.3 + 87'760 / rate;
  for (auto [connections, expected_s] :
       std::vector<std::pair<FlowModel::Connections, double>>{{FlowModel::Connections::kFresh, 0.075 + drain},
                                                              {FlowModel::Connections::kPersistent, 0.025 + drain},
                                                              {FlowModel::Connections::kWarm, 0.025 + 1e6 / rate}}) {
    Net n = pair_at_100_mbps_25_ms();
    Simulator sim;
    FlowModel m = slow_start_model();
    m.connections = connections;
    Network net(sim, n.t, m);
    Time finish;
    FlowId id = net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish = f.finish; });
    if (connections == FlowModel::Connections::kFresh) {
      sim.run(seconds(0.075 + 0.001));  // in round 0: sending its first window at R
      EXPECT_DOUBLE_EQ(net.rate(id).bytes_per_second(), rate);
      sim.run(seconds(0.075 + 0.010));  // 14,480 B took 1.2 ms: paused to the round's end
      EXPECT_DOUBLE_EQ(net.rate(id).bytes_per_second(), 0);
    }
    sim.run();
    EXPECT_NEAR(finish.seconds(), expected_s, 2e-9) << static_cast<int>(connections);
    EXPECT_NEAR(net.nominal_time(0, 1, bytes(1'000'000)).seconds(), expected_s, 2e-9);
  }
}

// A largest window of 4 x 14,480 = 57,920 B on the same route: windows of
// 14,480 and 28,960 in two round trips, then the window is at its largest
// and the flow leaves slow start at 57,920 / 0.05 = 1,158,400 B/s, far
// under R, for the 956,560 B left.
TEST(NetworkSlowStart, TheLargestWindowBoundsTheRate) {
  Net n = pair_at_100_mbps_25_ms();
  Simulator sim;
  FlowModel m = slow_start_model();
  m.max_window_bytes = 57'920;
  Network net(sim, n.t, m);
  Time finish;
  FlowId id = net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish = f.finish; });
  sim.run(seconds(0.5));
  EXPECT_DOUBLE_EQ(net.rate(id).bytes_per_second(), 1'158'400);
  sim.run();
  const double expected = 0.075 + 0.1 + 956'560 / 1'158'400.0;
  EXPECT_NEAR(finish.seconds(), expected, 2e-9);
  EXPECT_NEAR(net.nominal_time(0, 1, bytes(1'000'000)).seconds(), expected, 2e-9);
}

// Two 1 MB flows into one 100 Mbit/s downlink, fresh, started together:
// each gets R / 2 while both send. Their windows of 14,480 x (1 ... 16)
// (448,880 B) go in five round trips (each at R / 2, then a pause); the
// sixth window (463,360 B) is more than a round trip holds at R / 2
// (301,667 B): sending all round at its share, the pipe is full and they
// leave slow start at 0.3 s with 750,547 B sent; the rest at R / 2.
TEST(NetworkSlowStart, FlowsThatFillThePipeLeaveSlowStart) {
  const double rate = 12.5e6 * 1448.0 / 1500.0, half = rate / 2;
  Net n;
  Vertex a = n.node(1e9, 1e9), b = n.node(12.5e6, 12.5e6), c = n.node(1e9, 1e9), r = n.router();
  n.link(a, r, 1e9, milliseconds(12.5));
  n.link(c, r, 1e9, milliseconds(12.5));
  n.link(r, b, 1e9, milliseconds(12.5));
  Simulator sim;
  Network net(sim, n.t, slow_start_model());
  std::vector<Time> finish;
  net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish.push_back(f.finish); });
  net.start_flow(2, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish.push_back(f.finish); });
  sim.run();
  ASSERT_EQ(finish.size(), 2u);
  const double sent = 448'880 + half * 0.05;
  for (Time t : finish) EXPECT_NEAR(t.seconds(), 0.075 + 0.3 + (1e6 - sent) / half, 2e-9);
}

// slowstart with queues, a flow alone: it never holds more in flight than
// the pipe (its largest window that is all sent, 463,360 B, is under R x
// 0.05 = 603,333 B), so no queue builds and every congestion control gives
// the loss-free model's time (OneFlowSendsItsWindowsRoundByRound).
TEST(NetworkQueues, AFlowAloneTakesTheLossFreeTime) {
  const double rate = 12.5e6 * 1448.0 / 1500.0;
  const double expected = 0.075 + 0.3 + 87'760 / rate;
  for (auto cc : {FlowModel::Congestion::kBbr, FlowModel::Congestion::kCubic, FlowModel::Congestion::kReno}) {
    Net n = pair_at_100_mbps_25_ms();
    Simulator sim;
    FlowModel m = slow_start_model();
    m.congestion = cc;
    Network net(sim, n.t, m);
    Time finish;
    net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { finish = f.finish; });
    sim.run();
    EXPECT_NEAR(finish.seconds(), expected, 2e-9) << static_cast<int>(cc);
  }
}

// reno, 3 MB alone on the 100 Mbit/s, 25 ms pair (R, and a pipe of R x
// 0.05 = 603,333 B). Six paused rounds send 14,480 x 63 = 912,240 B; in the
// seventh (0.05 s) its 926,720 B window exceeds the pipe and it sends R x
// 0.05 at its share, holding 323,387 B beyond the pipe. A queue of 1,000
// packets takes that: no loss, slow start goes on and the rest goes at R.
// A queue of 100 packets (150,000 B) is full at that round's end: a loss,
// the window halves to 463,360 B, under the pipe, and grows by 1,448 B a
// round: three more rounds of 463,360, 464,808 and 466,256 B, and what is
// left at R.
TEST(NetworkQueues, RenoHalvesItsWindowWhenItsPipeAndTheQueueOverflow) {
  const double rate = 12.5e6 * 1448.0 / 1500.0;
  const double after_slow_start = 3e6 - 912'240;
  const double after_loss = after_slow_start - rate * 0.05 - 463'360 - 464'808 - 466'256;
  for (auto [queue, expected_s] : std::vector<std::pair<double, double>>{
           {1000, 0.075 + 0.3 + after_slow_start / rate}, {100, 0.075 + 0.35 + 0.15 + after_loss / rate}}) {
    Net n = pair_at_100_mbps_25_ms();
    Simulator sim;
    FlowModel m = slow_start_model();
    m.congestion = FlowModel::Congestion::kReno;
    m.queue_packets = queue;
    Network net(sim, n.t, m);
    Time finish;
    net.start_flow(0, 1, bytes(3'000'000), [&](const FlowRecord& f) { finish = f.finish; });
    sim.run();
    EXPECT_NEAR(finish.seconds(), expected_s, 2e-9) << queue;
  }
}

// The ACKs' way back waits in the receiver's uplink. Node 1's uplink (1 MB/s
// on the wire) carries a 10 MB flow to node 2 over 50 ms (persistent
// connections, bbr): past startup it keeps twice its pipe in flight, so one
// pipe waits in that uplink: R1 x 0.1 s of payload, R1 = 1e6 x 1448 / 1500,
// that is 100,000 B on the wire, 0.1 s. A flow of 14,480 x (1 + 2 + 4) B
// from node 0 to node 1 (10 ms, 125 MB/s everywhere on its way) starts at
// 5 s: its first byte after 10 ms (no queue on its way), then three rounds,
// each a round trip of 20 ms plus the 0.1 s its ACKs wait; the last
// window, 57,920 B, goes at R0 = 125e6 x 1448 / 1500 before its round
// ends. Without queues (congestion none) the same flow takes 20 ms rounds.
TEST(NetworkQueues, AReceiversBusyUplinkDelaysTheAcksOfWhatItReceives) {
  const double r0 = 125e6 * 1448.0 / 1500.0;
  for (auto [cc, round_s] : std::vector<std::pair<FlowModel::Congestion, double>>{
           {FlowModel::Congestion::kNone, 0.02}, {FlowModel::Congestion::kBbr, 0.12}}) {
    Net n;
    Vertex a = n.node(125e6, 125e6), b = n.node(1e6, 125e6), c = n.node(125e6, 125e6);
    n.link(a, b, 125e6, milliseconds(10));
    n.link(b, c, 125e6, milliseconds(50));
    Simulator sim;
    Network net(sim, n.t, persistent_model(cc));
    net.start_flow(1, 2, bytes(10'000'000), nullptr);
    Time start, finish;
    sim.schedule(seconds(5), [&] {
      start = sim.now();
      net.start_flow(0, 1, bytes(14'480 * 7), [&](const FlowRecord& f) { finish = f.finish; });
    });
    sim.run(seconds(6));
    EXPECT_NEAR((finish - start).seconds(), 0.01 + 2 * round_s + 57'920 / r0, 2e-9) << static_cast<int>(cc);
  }
}

// What of a round waits in the queue, as the window leaves its host. Node
// a's uplink (1 MB/s on the wire) carries flow A to b (50 ms one way,
// persistent): its rounds start at 0.05, 0.15, 0.25 s, the third a window
// of 57,920 B (60,000 on the wire, 60 ms at the uplink's rate, under its
// pipe of 0.1 s: no standing queue). A probe of 14,480 x 3 B from c to a
// (5 ms, c's uplink 100 MB/s) starts its first round t after 0.25 s; its
// ACKs wait in a's uplink behind what of A's window has left a and not yet
// passed: 1 MB/s x t on the wire has passed.
//   - burst: all of the window left at 0.25: 60,000 - 1e6 x t waits;
//   - acked: the window leaves as the last round's ACKs come back, at g
//     times the rate it passes (g = 2 for cubic, a segment more for each
//     ACKed; 2 / ln 2 for BBR's startup): min(60,000 - 1e6 t, (g - 1) 1e6 t).
// Its first round trip is 10 ms plus that wait at 1 MB/s, and its second
// window, 28,960 B, goes at R = 100e6 x 1448 / 1500.
TEST(NetworkQueues, ARoundWaitsAsItsWindowLeavesItsHost) {
  const double r = 100e6 * 1448.0 / 1500.0, bbr_gain = 2 / std::log(2.0);
  struct Case {
    FlowModel::Congestion cc;
    FlowModel::RoundSending sending;
    double t, wait_s;
  };
  for (const Case& k :
       std::vector<Case>{{FlowModel::Congestion::kCubic, FlowModel::RoundSending::kBurst, 0.025, 0.035},
                         {FlowModel::Congestion::kCubic, FlowModel::RoundSending::kAcked, 0.025, 0.025},
                         {FlowModel::Congestion::kReno, FlowModel::RoundSending::kAcked, 0.04, 0.02},
                         {FlowModel::Congestion::kBbr, FlowModel::RoundSending::kBurst, 0.01, 0.05},
                         {FlowModel::Congestion::kBbr, FlowModel::RoundSending::kAcked, 0.01, (bbr_gain - 1) * 0.01},
                         {FlowModel::Congestion::kBbr, FlowModel::RoundSending::kAcked, 0.025, 0.035}}) {
    Net n;
    Vertex a = n.node(1e6, 125e6), b = n.node(125e6, 125e6), c = n.node(100e6, 125e6);
    n.link(a, b, 125e6, milliseconds(50));
    n.link(c, a, 125e6, milliseconds(5));
    Simulator sim;
    FlowModel m = persistent_model(k.cc);
    m.round_sending = k.sending;
    Network net(sim, n.t, m);
    net.start_flow(0, 1, bytes(10'000'000), nullptr);
    Time start, finish;
    sim.schedule(seconds(0.25 + k.t - 0.005), [&] {
      start = sim.now();
      net.start_flow(2, 0, bytes(14'480 * 3), [&](const FlowRecord& f) { finish = f.finish; });
    });
    sim.run(seconds(1));
    EXPECT_NEAR((finish - start).seconds(), 0.005 + 0.01 + k.wait_s + 28'960 / r, 2e-9)
        << static_cast<int>(k.cc) << " " << static_cast<int>(k.sending) << " " << k.t;
  }
}

// A lone fresh flow of `size` bytes from node 0 to 1 under slowstart with
// bbr queues and round_sending paced: its rate at each (time, rate), then
// its finish and the nominal time, both `finish_s`.
void expect_paced_flow(Net n, int64_t size, const std::vector<std::pair<double, double>>& rates, double finish_s) {
  Simulator sim;
  FlowModel m = slow_start_model();
  m.congestion = FlowModel::Congestion::kBbr;
  m.round_sending = FlowModel::RoundSending::kPaced;
  Network net(sim, n.t, m);
  Time finish;
  FlowId id = net.start_flow(0, 1, bytes(size), [&](const FlowRecord& f) { finish = f.finish; });
  for (auto [t, rate] : rates) {
    sim.run(seconds(t));
    EXPECT_NEAR(net.rate(id).bytes_per_second(), rate, 1e-6 * rate) << t;
  }
  sim.run();
  EXPECT_NEAR(finish.seconds(), finish_s, 2e-9);
  EXPECT_NEAR(net.nominal_time(0, 1, bytes(size)).seconds(), finish_s, 2e-9);
}

// round_sending paced (bbr), by hand on the 100 Mbit/s, 25 ms pair (R as
// above, RTT 0.05 s), fresh: the flow starts at 0.075 s. Round 0 is a burst:
// 14,480 B at R in s0 = 14,480 / R. Its delivery rate, 14,480 / (0.05 + s0),
// sets the pace, G = 2 / ln 2 x 0.99 times it. Round 1 sends 28,960 B at
// that pace in s1 < 0.05 s; the rate it shows is 28,960 / (0.05 + s1 - s0)
// (stretched by how much longer it sent than round 0). Round 2's window,
// 57,920 B, is more than the new pace sends in a round trip: it sends S2 =
// pace x 0.05 all round (the pace, not its share, held it: startup goes
// on), showing S2 / (0.05 + 0.05 - s1). Round 3 sends the rest of 100,000 B
// at G x that.
TEST(NetworkQueues, PacedBbrSendsEachRoundAtStartupsPacingRate) {
  const double rate = 12.5e6 * 1448.0 / 1500.0, gain = 2 / std::log(2.0) * 0.99;
  const double s0 = 14'480 / rate;
  const double pace1 = gain * 14'480 / (0.05 + s0);
  const double s1 = 28'960 / pace1;
  const double pace2 = gain * 28'960 / (0.05 + s1 - s0);
  const double sent2 = pace2 * 0.05;
  const double pace3 = gain * sent2 / (0.05 + 0.05 - s1);
  ASSERT_LT(s1, 0.05);
  ASSERT_LT(sent2, 57'920);
  ASSERT_LT(pace3, rate);
  expect_paced_flow(pair_at_100_mbps_25_ms(), 100'000, {{0.0755, rate}, {0.13, pace1}, {0.18, pace2}, {0.226, pace3}},
                    0.225 + (100'000 - 43'440 - sent2) / pace3);
}

// paced, a lone flow whose share holds it: 8 Mbit/s, 25 ms one way (R' =
// 1e6 x 1448 / 1500). Round 0: 14,480 B at R' in s0 = 0.015 s; the pace is
// G x 14,480 / 0.065, under R': round 1 sends 28,960 B at it. Round 2's pace,
// G x 28,960 / (0.05 + s1 - s0), is above R', and its window of 57,920 B is
// more than R' x 0.05: its share held it all round, the pipe is full and
// startup ends. The rest of 1 MB goes at R', as the burst reading has it.
TEST(NetworkQueues, PacedBbrLeavesStartupWhenItsShareHoldsIt) {
  const double rate = 1e6 * 1448.0 / 1500.0, gain = 2 / std::log(2.0) * 0.99;
  const double pace1 = gain * 14'480 / (0.05 + 14'480 / rate);
  const double pace2 = gain * 28'960 / (0.05 + 28'960 / pace1 - 14'480 / rate);
  ASSERT_LT(pace1, rate);
  ASSERT_GT(pace2, rate);
  Net n;
  Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6);
  n.link(a, b, 1e6, milliseconds(25));
  expect_paced_flow(std::move(n), 1'000'000, {{0.08, rate}, {0.13, pace1}, {0.18, rate}, {0.5, rate}},
                    0.175 + (1e6 - 43'440) / rate);
}

TEST(NetworkTcp, FlowsShareASaturatedLinkInverselyToTheirPenalty) {
  // Two flows share one 1 MB/s link; one crosses 10 ms of latency, the other
  // 40 ms. With weight_S = 0 the penalty is the route latency, so the rates
  // are 4 : 1 of 0.97 MB/s; with LV08's weight_S each penalty also adds
  // 20537 / capacity for each resource of its route (computed here).
  for (double s : {0.0, 20537.0}) {
    Net n;
    Vertex r1 = n.router(), r2 = n.router(), r3 = n.router();
    Vertex a = n.node(1e8, 1e8), b = n.node(1e8, 1e8), c = n.node(1e8, 1e8);
    n.link(a, r1, 1e8, milliseconds(10));
    n.link(c, r3, 1e8, milliseconds(40));
    n.link(r3, r1, 1e8, Time::zero());
    n.link(r1, r2, 1e6, Time::zero());
    n.link(r2, b, 1e8, Time::zero());
    FlowModel tcp;
    tcp.weight_s_bytes = s;
    const auto [near, far] = tcp_rates_of_two_flows(n, tcp, seconds(1));
    // near: uplink, a-r1, r1-r2, r2-b, downlink; far: uplink, c-r3, r3-r1, r1-r2, r2-b, downlink.
    const double near_penalty = 0.010 + s * (4 / 1e8 + 1 / 1e6), far_penalty = 0.040 + s * (5 / 1e8 + 1 / 1e6);
    const double near_rate = 0.97e6 * (1 / near_penalty) / (1 / near_penalty + 1 / far_penalty);
    EXPECT_NEAR(near, near_rate, 1e-6);
    EXPECT_NEAR(far, 0.97e6 - near_rate, 1e-6);
    if (s == 0) EXPECT_NEAR(near, 4 * far, 1e-6);
  }
}

TEST(NetworkTcp, WindowBoundsAndWeightedSharesComeFromOneFilling) {
  // Two flows on a 10 MB/s link (0.97 x = 9.7 MB/s usable), one with 100 ms
  // one way (weight 1 / 0.1 = 10), the other 10 ms (weight 100); weight_S 0.
  // A 1e5-byte window holds them to 0.97 x 1e5 / 0.2 = 4.85e5 and 0.97 x 1e5
  // / 0.02 = 4.85e6 B/s, under their shares: both are bound, the link is not
  // full. A 1e7-byte
  // window binds neither: they split 9.7 MB/s as 10 : 100.
  for (double window : {1e5, 1e7}) {
    Net n;
    Vertex r1 = n.router(), r2 = n.router();
    Vertex a = n.node(1e9, 1e9), b = n.node(1e9, 1e9), c = n.node(1e9, 1e9);
    n.link(a, r1, 1e9, milliseconds(100));
    n.link(c, r1, 1e9, milliseconds(10));
    n.link(r1, r2, 1e7, Time::zero());
    n.link(r2, b, 1e9, Time::zero());
    FlowModel tcp;
    tcp.window_bytes = window;
    tcp.weight_s_bytes = 0;
    const auto [slow, fast] = tcp_rates_of_two_flows(n, tcp, seconds(2));
    if (window == 1e5) {
      EXPECT_NEAR(slow, 4.85e5, 1e-6);
      EXPECT_NEAR(fast, 4.85e6, 1e-6);
    } else {
      EXPECT_NEAR(slow, 9.7e6 * 10 / 110, 1e-6);
      EXPECT_NEAR(fast, 9.7e6 * 100 / 110, 1e-6);
    }
  }
}

TEST(NetworkSlowStart, AScenarioChoosesTheModelItsConnectionsAndConstants) {
  nlohmann::json j = test::hand_scenario("complete", 2, "gossip", 1);
  j["network"]["model"] = "slowstart";
  Scenario sc = test::scenario_from(j);
  EXPECT_TRUE(sc.network.model.slow_start);
  EXPECT_FALSE(sc.network.model.tcp);
  EXPECT_EQ(sc.network.model.connections, FlowModel::Connections::kFresh);
  EXPECT_EQ(sc.network.model.initial_window_bytes, 14480);
  EXPECT_EQ(sc.network.model.payload_factor, 1448.0 / 1500.0);
  EXPECT_EQ(sc.network.model.max_window_bytes, 4194304);
  j["network"]["slowstart"] = {{"connections", "persistent"},
                               {"initial_window_bytes", 4380},
                               {"payload_factor", 1},
                               {"max_window_bytes", 65535}};
  sc = test::scenario_from(j);
  EXPECT_EQ(sc.network.model.connections, FlowModel::Connections::kPersistent);
  EXPECT_EQ(sc.network.model.initial_window_bytes, 4380);
  EXPECT_EQ(sc.network.model.payload_factor, 1);
  EXPECT_EQ(sc.network.model.max_window_bytes, 65535);
  EXPECT_EQ(sc.network.model.congestion, FlowModel::Congestion::kNone);  // loss-free unless told
  EXPECT_FALSE(sc.network.model.queues());
  EXPECT_EQ(sc.network.model.round_sending, FlowModel::RoundSending::kBurst);
  j["network"]["slowstart"] = {
      {"congestion", "cubic"}, {"queue_packets", 64}, {"packet_bytes", 9000}, {"round_sending", "acked"}};
  sc = test::scenario_from(j);
  EXPECT_EQ(sc.network.model.round_sending, FlowModel::RoundSending::kAcked);
  EXPECT_EQ(sc.network.model.congestion, FlowModel::Congestion::kCubic);
  EXPECT_TRUE(sc.network.model.queues());
  EXPECT_EQ(sc.network.model.queue_packets, 64);
  EXPECT_EQ(sc.network.model.packet_bytes, 9000);
  j["network"]["slowstart"] = {{"congestion", "bbr"}, {"round_sending", "paced"}};
  sc = test::scenario_from(j);
  EXPECT_EQ(sc.network.model.round_sending, FlowModel::RoundSending::kPaced);
  EXPECT_TRUE(sc.network.model.paced());
}

TEST(NetworkTcp, AScenarioChoosesTheModelAndItsConstants) {
  nlohmann::json j = test::hand_scenario("complete", 2, "gossip", 1);
  j["network"]["model"] = "tcp";
  j["network"]["tcp"] = {{"latency_factor", 2}, {"window_bytes", 1e6}};
  Scenario sc = test::scenario_from(j);
  EXPECT_TRUE(sc.network.model.tcp);
  EXPECT_EQ(sc.network.model.latency_factor, 2);
  EXPECT_EQ(sc.network.model.window_bytes, 1e6);
  EXPECT_EQ(sc.network.model.bandwidth_factor, 0.97);
  EXPECT_EQ(sc.network.model.weight_s_bytes, 20537);
  EXPECT_FALSE(test::scenario_from(test::hand_scenario("complete", 2, "gossip", 1)).network.model.tcp);
}

// a, c behind router r1; b, d behind r2; one shared link r1-r2 of 1e6 B/s.
struct Dumbbell : Net {
  Dumbbell() {
    Vertex r1 = router(), r2 = router();
    Vertex a = node(1e8, 1e8), b = node(1e8, 1e8), c = node(1e8, 1e8), d = node(1e8, 1e8);
    link(a, r1, 1e8, Time::zero());
    link(c, r1, 1e8, Time::zero());
    link(b, r2, 1e8, Time::zero());
    link(d, r2, 1e8, Time::zero());
    link(r1, r2, 1e6, Time::zero());
  }
};

TEST(Network, TwoFlowsOnOneLinkShareItAndTheSurvivorSpeedsUp) {
  Dumbbell n;
  Simulator sim;
  Network net(sim, n.t);
  Time f1, f2;
  FlowId id1 = net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { f1 = f.finish; });
  net.start_flow(2, 3, bytes(500'000), [&](const FlowRecord& f) { f2 = f.finish; });
  EXPECT_DOUBLE_EQ(net.rate(id1).bytes_per_second(), 5e5);
  sim.run();
  EXPECT_EQ(f2, seconds(1.0));  // 500 kB at half of 1 MB/s
  EXPECT_EQ(f1, seconds(1.5));  // 500 kB left at the full 1 MB/s
}

TEST(Network, MaxMinLeavesTheUnusedShareToTheOtherFlow) {
  // a sends to b and c through a router; a's uplink is 2 MB/s; b's downlink
  // holds a->b to 0.5 MB/s, so a->c gets 1.5 MB/s, not an equal 1 MB/s.
  Net n;
  Vertex r = n.router();
  Vertex a = n.node(2e6, 1e8), b = n.node(1e8, 5e5), c = n.node(1e8, 1e8);
  for (Vertex v : {a, b, c}) n.link(v, r, 1e9, Time::zero());
  Simulator sim;
  Network net(sim, n.t);
  Time to_b, to_c;
  FlowId ab = net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { to_b = f.finish; });
  FlowId ac = net.start_flow(0, 2, bytes(1'500'000), [&](const FlowRecord& f) { to_c = f.finish; });
  EXPECT_DOUBLE_EQ(net.rate(ab).bytes_per_second(), 5e5);
  EXPECT_DOUBLE_EQ(net.rate(ac).bytes_per_second(), 1.5e6);
  sim.run();
  EXPECT_EQ(to_c, seconds(1.0));
  EXPECT_EQ(to_b, seconds(2.0));  // still held to 0.5 MB/s by b's downlink
}

TEST(Network, LatencyPhaseUsesNoBandwidth) {
  // Flow 1 drains alone until flow 2's latency has passed.
  Dumbbell n;
  n.t.graph[boost::edge(n.t.nodes[2], 0, n.t.graph).first].latency = milliseconds(500);
  Simulator sim;
  Network net(sim, n.t);
  Time f1, f2;
  net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { f1 = f.finish; });
  net.start_flow(2, 3, bytes(250'000), [&](const FlowRecord& f) { f2 = f.finish; });
  sim.run();
  // 0-0.5 s: flow 1 alone sends 500 kB. Then both at 0.5 MB/s: flow 2 ends at 1.0 s,
  // flow 1 has 250 kB left at 1 MB/s: 1.25 s.
  EXPECT_EQ(f2, seconds(1.0));
  EXPECT_EQ(f1, seconds(1.25));
}

TEST(Network, ControlMessagesCostLatencyOnly) {
  Net n;
  Vertex a = n.node(1, 1), b = n.node(1, 1);
  n.link(a, b, 1, milliseconds(42));
  Simulator sim;
  Network net(sim, n.t);
  Time arrived;
  net.send_control(0, 1, [&] { arrived = sim.now(); });
  sim.run();
  EXPECT_EQ(arrived, milliseconds(42));
}

TEST(Network, RoutesFollowTheLowestLatencyPath) {
  // a-b direct with 100 ms, or a-r-b with 10 + 10 ms.
  Net n;
  Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6), r = n.router();
  n.link(a, b, 1e9, milliseconds(100));
  n.link(a, r, 1e9, milliseconds(10));
  n.link(r, b, 1e9, milliseconds(10));
  Simulator sim;
  Network net(sim, n.t);
  EXPECT_EQ(net.route(0, 1).latency, milliseconds(20));
  EXPECT_EQ(net.route(0, 1).resources.size(), 4u);  // uplink, two links, downlink
}

TEST(Network, AChangeResolvesOnlyItsGroup) {
  // 50 disjoint pairs; flows in one pair never touch another's resources.
  Net n;
  const int pairs = 50;
  for (int p = 0; p < pairs; ++p) {
    Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6);
    n.link(a, b, 1e6, Time::zero());
  }
  Simulator sim;
  Network net(sim, n.t);
  for (int p = 0; p < pairs; ++p) net.start_flow(2 * p, 2 * p + 1, bytes(1'000'000), {});
  uint64_t before = net.flows_resolved();
  net.start_flow(0, 1, bytes(1000), {});
  EXPECT_EQ(net.flows_resolved() - before, 2u);  // the new flow and the one it shares with
  sim.run();
  EXPECT_EQ(net.active_flows(), 0u);
}

TEST(Network, ManyFlowsAllFinishAndShareFairly) {
  // 10 equal flows into one receiver: each takes 1/10 of its downlink and all end together.
  Net n;
  Vertex r = n.router();
  Vertex dst = n.node(1e9, 1e6);
  n.link(dst, r, 1e9, Time::zero());
  for (int k = 0; k < 10; ++k) n.link(n.node(1e9, 1e9), r, 1e9, Time::zero());
  Simulator sim;
  Network net(sim, n.t);
  std::vector<Time> finish;
  for (int k = 1; k <= 10; ++k)
    net.start_flow(k, 0, bytes(100'000), [&](const FlowRecord& f) { finish.push_back(f.finish); });
  sim.run();
  ASSERT_EQ(finish.size(), 10u);
  for (Time t : finish) EXPECT_EQ(t, seconds(1.0));
}

// Drives one network through random flows, capacity changes (some to 0 and
// back) and cuts, with loose resources left out of the solve or kept in it.
struct Drive {
  std::vector<FlowRecord> records;
  uint64_t resolved = 0, loose_saturations = 0;
};
Drive drive(const Topology& t, const FlowModel& model, bool skip_loose, uint64_t seed) {
  Simulator sim;
  Network net(sim, t, model);
  net.set_skip_loose(skip_loose);
  Drive out;
  Rng rng(seed);
  const int nodes = static_cast<int>(t.nodes.size());
  auto done = [&](const FlowRecord& f) { out.records.push_back(f); };
  for (int k = 0; k < 1500; ++k) {
    const NodeId a = static_cast<NodeId>(uniform_index(rng, nodes));
    NodeId b = static_cast<NodeId>(uniform_index(rng, nodes - 1));
    if (b >= a) ++b;
    const int64_t size = 1000 + static_cast<int64_t>(uniform_index(rng, 3'000'000));
    sim.schedule_at(nanoseconds(static_cast<int64_t>(uniform_index(rng, 20'000'000'000ull))),
                    [&net, a, b, size, done] { net.start_flow(a, b, bytes(size), done); });
  }
  for (int k = 0; k < 60; ++k) {
    const Time at = nanoseconds(static_cast<int64_t>(uniform_index(rng, 20'000'000'000ull)));
    const NodeId n = static_cast<NodeId>(uniform_index(rng, nodes));
    const bool up = uniform_index(rng, 2) == 0;
    const double factor = k % 5 == 0 ? 0.0 : 0.05 + uniform01(rng) * 3;
    sim.schedule_at(at, [&net, n, up, factor, &t] {
      const VertexInfo& v = t.graph[t.nodes[n]];
      net.set_access_capacity(n, up, Rate::bytes_per_second((up ? v.up : v.down).bytes_per_second() * factor));
    });
    sim.schedule_at(at + seconds(1.5), [&net, n, up, &t] {  // and back
      const VertexInfo& v = t.graph[t.nodes[n]];
      net.set_access_capacity(n, up, up ? v.up : v.down);
    });
    auto edges = boost::edges(t.graph);
    auto e = std::next(edges.first, static_cast<long>(uniform_index(rng, boost::num_edges(t.graph))));
    const Vertex u = boost::source(*e, t.graph), v = boost::target(*e, t.graph);
    const Rate c = Rate::bytes_per_second(t.graph[*e].capacity.bytes_per_second() * (0.01 + uniform01(rng)));
    sim.schedule_at(at, [&net, u, v, c] { net.set_link_capacity(u, v, c); });
    sim.schedule_at(at + seconds(2), [&net, u, v, c = t.graph[*e].capacity] { net.set_link_capacity(u, v, c); });
  }
  for (int k = 1; k <= 8; ++k)
    sim.schedule_at(seconds(2.5 * k), [&net, &out, k] {
      for (auto& [record, callback] :
           net.cancel_flows([k](const FlowRecord& f) { return f.id % 11 == static_cast<uint64_t>(k); }))
        out.records.push_back(record);
    });
  sim.run();
  EXPECT_EQ(net.active_flows(), 0u);
  out.resolved = net.flows_resolved();
  out.loose_saturations = net.loose_saturations();
  return out;
}

void expect_same(const Drive& skipped, const Drive& kept) {
  ASSERT_EQ(skipped.records.size(), kept.records.size());
  for (size_t i = 0; i < kept.records.size(); ++i) {
    const FlowRecord &x = skipped.records[i], &y = kept.records[i];
    ASSERT_EQ(x.id, y.id) << i;
    EXPECT_EQ(x.drain_start, y.drain_start) << "flow " << x.id;
    EXPECT_EQ(x.finish, y.finish) << "flow " << x.id;
    EXPECT_EQ(x.lost, y.lost) << "flow " << x.id;
  }
}

// The claim of sim/network.h: a resource whose capacity exceeds the sum of
// its flows' bottlenecks is never saturated, and leaving it out of groups
// and of the filling changes no finish time, to the nanosecond. Checked on
// networks where loose and saturated resources mix (geo: 10 Gbit/s
// intra-region links, saturated backbones and access links; a random
// regular graph whose 1 Gbit/s links turn tight under load) and on a star
// of equal capacities, where shares tie exactly, with both flow models,
// two seeds each (GOSSIPSIM_STRESS=1: 40); the run that keeps them counts
// the loose ones that saturate (none), and on the first two the one that
// skips them must re-solve fewer flows (or the comparison shows nothing).
TEST(Network, LeavingLooseResourcesOutChangesNoFinishTime) {
  struct Case {
    std::string name;
    Topology t;
    bool prunes;  // whether loose resources must save work (a star's shares tie exactly, which is what it is for)
  };
  const std::vector<Case> cases = {
      {"geo", test::topology_from(R"({"generator": "geo", "nodes": 40})"), true},
      {"random-regular", test::topology_from(R"({"generator": "random-regular", "nodes": 30, "degree": 4})"), true},
      {"star", test::topology_from(R"({"generator": "star", "nodes": 12})"), false},
  };
  FlowModel tcp;
  tcp.tcp = true;
  const int seeds = std::getenv("GOSSIPSIM_STRESS") ? 40 : 2;  // 40: a longer run by hand
  for (const Case& c : cases)
    for (const FlowModel& model : {FlowModel{}, tcp}) {
      uint64_t skipped_resolved = 0, kept_resolved = 0;
      for (int seed = 7; seed < 7 + seeds; ++seed) {
        SCOPED_TRACE(c.name + (model.tcp ? " tcp" : " maxmin") + " seed " + std::to_string(seed));
        const Drive skipped = drive(c.t, model, true, seed), kept = drive(c.t, model, false, seed);
        expect_same(skipped, kept);
        EXPECT_EQ(kept.loose_saturations, 0u);
        EXPECT_GT(kept.records.size(), 1400u);
        skipped_resolved += skipped.resolved;
        kept_resolved += kept.resolved;
      }
      if (c.prunes) EXPECT_LT(skipped_resolved, kept_resolved) << c.name;
    }
}

// A rate so small that a flow could not end within any run (a link of
// 1e-290 B/s; tcp's bandwidth factor at 1e-300 gives the like) leaves it
// without a finish, instead of a finish time that overflows the clock and
// ends it at the next completion; a flow elsewhere still ends on time.
TEST(Network, AFlowTooSlowToEverEndHasNoFinish) {
  Net n;
  Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6), c = n.node(1e6, 1e6), d = n.node(1e6, 1e6);
  n.link(a, b, 1e-290, Time::zero());
  n.link(c, d, 1e7, Time::zero());
  Simulator sim;
  Network net(sim, n.t);
  bool slow_ended = false;
  Time fast_end;
  net.start_flow(0, 1, bytes(320808), [&](const FlowRecord&) { slow_ended = true; });
  net.start_flow(2, 3, bytes(1'000'000), [&](const FlowRecord& f) { fast_end = f.finish; });
  sim.run();
  EXPECT_EQ(fast_end, seconds(1));
  EXPECT_FALSE(slow_ended);
  EXPECT_EQ(net.active_flows(), 1u);
  EXPECT_DOUBLE_EQ(net.rate(1).bytes_per_second(), 1e-290);
}

// By hand: two flows a->b and c->d share a 10 MB/s link; their access links
// are 1 MB/s, so the link is loose (2 MB/s of bottlenecks) and a change to
// one pair re-solves that pair alone. Ten more flows c->d make the link
// tight (12 MB/s): a change to a->b now reaches c->d's flows through it.
TEST(Network, ALooseLinkDoesNotJoinGroupsAndATightOneDoes) {
  Net n;
  Vertex a = n.node(1e6, 1e6), b = n.node(1e6, 1e6), c = n.node(1e6, 1e6), d = n.node(1e6, 1e6);
  Vertex r = n.router(), s = n.router();
  n.link(a, r, 1e9, Time::zero());
  n.link(c, r, 1e9, Time::zero());
  n.link(r, s, 1e7, Time::zero());
  n.link(s, b, 1e9, Time::zero());
  n.link(s, d, 1e9, Time::zero());
  Simulator sim;
  Network net(sim, n.t);
  net.start_flow(0, 1, bytes(1'000'000'000), {});
  net.start_flow(2, 3, bytes(1'000'000'000), {});
  uint64_t before = net.flows_resolved();
  net.start_flow(0, 1, bytes(1000), {});
  EXPECT_EQ(net.flows_resolved() - before, 2u);  // the new flow and the other a->b
  sim.run(seconds(1));                           // it ends: the same again
  for (int k = 0; k < 10; ++k) net.start_flow(2, 3, bytes(1'000'000'000), {});
  before = net.flows_resolved();
  net.start_flow(0, 1, bytes(1000), {});
  EXPECT_EQ(net.flows_resolved() - before, 13u);  // both a->b, and all 11 c->d through the tight link
  // Max-min still gives c->d 1 MB/s in all (its downlink) and a->b its 1 MB/s.
  sim.run(seconds(2));
  EXPECT_DOUBLE_EQ(net.rate(1).bytes_per_second(), 1e6);
  EXPECT_DOUBLE_EQ(net.rate(2).bytes_per_second(), 1e6 / 11);
}

}  // namespace
}  // namespace gossipsim
