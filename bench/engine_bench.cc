// Engine and network-model figures, printed as JSON on stdout:
//   events_per_s           empty events through the queue, one core
//   flow_change_us_geo     cost of one flow start or end, 1,000 nodes on the
//                          geo topology with 10,000 concurrent flows, and
//                          how many flows each change re-solves; _all_resources:
//                          the same with loose resources kept in the solve
//                          (the solver before they were left out), side by side
//   flow_change_us_groups  the same when flows form disjoint groups of 20, at
//                          two total flow counts (it must not grow with them)
//   flow_change_us_geo_200_<model>  one flow change on the geo topology with
//                          200 concurrent flows under maxmin, slowstart and
//                          slowstart with queues (bbr, cubic; and each with
//                          round_sending acked; bbr paced), side by side,
//                          the rounds of slowstart's flows between changes
//                          included; events_per_change_: the simulator
//                          events each costs
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "sim/network.h"
#include "sim/simulator.h"
#include "topologies/builder.h"

using namespace gossipsim;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A self-rescheduling population of `pending` empty events.
static double events_per_second(int pending, uint64_t total) {
  Simulator sim;
  Rng rng(1);
  uint64_t left = total;
  std::function<void()> tick = [&] {
    if (left-- > static_cast<uint64_t>(pending)) sim.schedule(nanoseconds(1 + uniform_index(rng, 1000)), tick);
  };
  for (int k = 0; k < pending; ++k) sim.schedule(nanoseconds(k), tick);
  auto t = Clock::now();
  sim.run();
  return sim.executed() / since(t);
}

// Starts `background` long flows, lets them all drain, then times `probes`
// short flows: each costs one change at its start and one at its end.
static double change_cost_us(const Topology& topo, int background, int probes,
                             const std::function<std::pair<NodeId, NodeId>(int)>& pair_of,
                             double* flows_per_change = nullptr, bool skip_loose = true, const FlowModel& model = {},
                             Time step = seconds(60), double* events_per_change = nullptr) {
  Simulator sim;
  Network net(sim, topo, model);
  net.set_skip_loose(skip_loose);
  for (int k = 0; k < background; ++k) {
    auto [s, d] = pair_of(k);
    net.start_flow(s, d, bytes(int64_t(1) << 50), {});
  }
  sim.run(seconds(5));  // past every latency: all draining
  const uint64_t changes_before = net.changes(), resolved_before = net.flows_resolved(), events_before = sim.executed();
  auto t = Clock::now();
  for (int k = 0; k < probes; ++k) {
    auto [s, d] = pair_of(k * 7919 % background);
    net.start_flow(s, d, bytes(1000), {});
    sim.run(sim.now() + step);  // the probe activates and finishes
  }
  double wall = since(t);
  const double changes = static_cast<double>(net.changes() - changes_before);
  if (flows_per_change) *flows_per_change = static_cast<double>(net.flows_resolved() - resolved_before) / changes;
  if (events_per_change) *events_per_change = static_cast<double>(sim.executed() - events_before) / changes;
  return wall / changes * 1e6;
}

int main() {
  nlohmann::json out;
  out["events_per_s"] = events_per_second(1000, 20'000'000);
  out["events_per_s_100k_pending"] = events_per_second(100'000, 20'000'000);

  nlohmann::json spec = {{"generator", "geo"}, {"nodes", 1000}};
  Topology geo = build_topology(JsonReader(spec, "bench"), LinkDefaults{}, Streams(1));
  Rng rng(2);
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (int k = 0; k < 10000; ++k) {
    NodeId a = uniform_index(rng, 1000), b = uniform_index(rng, 999);
    pairs.emplace_back(a, b >= a ? b + 1 : b);
  }
  double resolved = 0;
  out["flow_change_us_geo"] = change_cost_us(
      geo, 10000, 200, [&](int k) { return pairs[k]; }, &resolved);
  out["flows_resolved_per_change_geo"] = resolved;
  out["flow_change_us_geo_all_resources"] = change_cost_us(
      geo, 10000, 200, [&](int k) { return pairs[k]; }, nullptr, false);

  // The flow models side by side: 200 flows, probes 2 s apart (slowstart's
  // rounds go on between them: a change's cost includes them).
  for (auto [name, model] :
       std::vector<std::pair<std::string, FlowModel>>{{"maxmin", FlowModel{}},
                                                      {"slowstart",
                                                       [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         return m;
                                                       }()},
                                                      {"bbr",
                                                       [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         m.congestion = FlowModel::Congestion::kBbr;
                                                         return m;
                                                       }()},
                                                      {"cubic",
                                                       [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         m.congestion = FlowModel::Congestion::kCubic;
                                                         return m;
                                                       }()},
                                                      {"bbr_acked",
                                                       [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         m.congestion = FlowModel::Congestion::kBbr;
                                                         m.round_sending = FlowModel::RoundSending::kAcked;
                                                         return m;
                                                       }()},
                                                      {"cubic_acked",
                                                       [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         m.congestion = FlowModel::Congestion::kCubic;
                                                         m.round_sending = FlowModel::RoundSending::kAcked;
                                                         return m;
                                                       }()},
                                                      {"bbr_paced", [] {
                                                         FlowModel m;
                                                         m.slow_start = true;
                                                         m.congestion = FlowModel::Congestion::kBbr;
                                                         m.round_sending = FlowModel::RoundSending::kPaced;
                                                         return m;
                                                       }()}}) {
    double events = 0;
    out["flow_change_us_geo_200_" + name] = change_cost_us(
        geo, 200, 50, [&](int k) { return pairs[k]; }, nullptr, true, model, seconds(2), &events);
    out["events_per_change_geo_200_" + name] = events;
  }

  // Disjoint groups: node pairs joined by their own link, 20 flows per pair.
  for (int groups : {50, 500}) {
    Topology t;
    for (int g = 0; g < groups; ++g) {
      Vertex a = boost::add_vertex(VertexInfo{"a", true, "", mbps(100), mbps(100)}, t.graph);
      Vertex b = boost::add_vertex(VertexInfo{"b", true, "", mbps(100), mbps(100)}, t.graph);
      t.nodes.push_back(a);
      t.nodes.push_back(b);
      boost::add_edge(a, b, EdgeInfo{mbps(1000), milliseconds(10)}, t.graph);
    }
    int flows = groups * 20;
    out[fmt::format("flow_change_us_groups_{}_flows", flows)] = change_cost_us(
        t, flows, 200, [](int k) { return std::make_pair(NodeId(2 * (k / 20)), NodeId(2 * (k / 20) + 1)); });
  }
  fmt::print("{}\n", out.dump(2));
}
