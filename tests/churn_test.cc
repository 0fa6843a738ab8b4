// Churn, cross-traffic, and latencies and compute speeds that change in
// time, checked against hand computations to the nanosecond, and the
// invariants every method must keep when peers go down: a node that is down
// never computes, never sends and never merges; a crashed sender's transfer
// is never merged; the same seed gives the same files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/summary.h"
#include "analysis/writers.h"
#include "input/wan_reader.h"
#include "method_invariants.h"
#include "sim/methods/registry.h"
#include "sim/network.h"
#include "sim/recorder.h"
#include "sim/runner.h"
#include "sim/simulator.h"
#include "sim/wan_dynamics.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

nlohmann::json scenario(const std::string& generator, int nodes, const std::string& method, double stop_s) {
  return test::hand_scenario(generator, nodes, method, stop_s);
}

MethodRun run(const nlohmann::json& j, int64_t model_bytes = 1'000'000, size_t method = 0) {
  Scenario sc = test::scenario_from(j);
  NullLearner learner(sc.topology.node_count(), bytes(model_bytes));
  RunOptions opts;
  opts.trace = true;
  return run_method(sc, sc.methods[method], learner, opts);
}

std::vector<const NetworkEventRow*> events_of(const MethodRun& r, const std::string& kind) {
  std::vector<const NetworkEventRow*> out;
  for (const auto& e : r.recorder.network_events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

TEST(Churn, ACrashedSendersTransferIsNeverMergedAndADownNodeNeverComputes) {
  // Both nodes send their first model at 0.1 s (due at 1.11 s); node 0
  // crashes at 0.45 s and joins again at 2 s.
  nlohmann::json j = scenario("complete", 2, "gossip-overlap", 2.95);
  j["churn"] = {{{"nodes", {0}}, {"events", {{0.45, "crash"}, {2, "join"}}}}};
  MethodRun r = run(j);
  const auto& t = r.recorder.transfers;
  ASSERT_GE(t.size(), 2u);
  EXPECT_EQ(t[0].src, 0);
  EXPECT_TRUE(t[0].lost);
  EXPECT_FALSE(t[0].merged);
  EXPECT_TRUE(t[1].lost);
  EXPECT_FALSE(t[1].merged);
  auto lost = events_of(r, "lost");
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[0]->time, seconds(0.45));
  EXPECT_EQ(lost[0]->target, "n0->n1");
  EXPECT_EQ(lost[0]->detail, "sender crashed");
  EXPECT_EQ(lost[1]->target, "n1->n0");
  EXPECT_EQ(lost[1]->detail, "receiver crashed");
  // After the join each sends again (node 1 at 2 s, node 0 at 2.1 s): both
  // still in flight at 2.95 s. Nothing was ever merged.
  EXPECT_EQ(method_summary(r)["merges"], 0);
  EXPECT_EQ(method_summary(r)["transfers_lost"], 2);
  EXPECT_EQ(method_summary(r)["transfers_in_flight"], 2);
  EXPECT_EQ(method_summary(r)["crashes"], 1);
  EXPECT_EQ(method_summary(r)["joins"], 1);
  // Node 0: 4 iterations before the crash (the fifth is abandoned), 9 after
  // the join (2.1 ... 2.9 s); node 1 never stops: 29.
  EXPECT_EQ(r.recorder.nodes[0].iterations, 13);
  EXPECT_EQ(r.recorder.nodes[1].iterations, 29);
  EXPECT_EQ(r.recorder.nodes[0].down, seconds(1.55));
  for (const auto& e : r.recorder.trace)
    if (e.node == 0 && e.name == "compute")
      EXPECT_TRUE(e.ts + e.dur <= seconds(0.45) || e.ts >= seconds(2)) << e.ts.seconds();
}

TEST(Churn, AGracefulLeaveDeliversWhatItSentAndCutsWhatItWasSent) {
  nlohmann::json j = scenario("complete", 2, "gossip-overlap", 1.5);
  j["churn"] = {{{"nodes", {0}}, {"events", {{0.45, "leave"}}}}};
  MethodRun r = run(j);
  const auto& t = r.recorder.transfers;
  ASSERT_EQ(t.size(), 2u);
  // 0 -> 1 still arrives, at 1.11 s, and node 1 merges it at the end of the
  // iteration it is computing then (1.1 to 1.2 s).
  EXPECT_FALSE(t[0].lost);
  EXPECT_TRUE(t[0].finished);
  EXPECT_EQ(t[0].finish, seconds(1.11));
  EXPECT_TRUE(t[0].merged);
  EXPECT_EQ(t[0].merge, seconds(1.2));
  EXPECT_TRUE(t[1].lost);
  ASSERT_EQ(events_of(r, "lost").size(), 1u);
  EXPECT_EQ(events_of(r, "lost")[0]->detail, "receiver left");
  EXPECT_EQ(method_summary(r)["leaves"], 1);
}

TEST(Churn, EveryMethodKeepsDownNodesSilent) {
  // Whatever each method does, a node that is down computes nothing, starts
  // no transfer and merges nothing, and the run never throws; every entry
  // of the invariant suite but the methods that train alone (no network,
  // no churn).
  for (const std::string& entry : test::every_method_entry()) {
    const nlohmann::json method = nlohmann::json::parse(entry);
    Scenario sc = test::scenario_from(test::invariant_scenario(entry));
    if (sc.methods[0].type->trains_alone) continue;
    for (const char* how : {"crash", "leave"}) test::expect_down_nodes_silent(method, how);
  }
}

TEST(Churn, TheSameSeedGivesIdenticalFiles) {
  nlohmann::json j = scenario("ring", 8, "gossip-scheduled", 30);
  j["churn"] = {{{"fraction", 0.25},
                 {"cycle",
                  {{"up_s", {{"dist", "exponential"}, {"mean", 5}}},
                   {"down_s", {{"dist", "exponential"}, {"mean", 3}}},
                   {"until_s", 30}}}}};
  j["network"]["cross_traffic"] = {{{"from", {{"all", true}}},
                                    {"to", {{"all", true}}},
                                    {"size_mb", 0.5},
                                    {"interarrival_s", {{"dist", "exponential"}, {"mean", 0.5}}},
                                    {"until_s", 30}}};
  auto files = [&](const std::string& tag) {
    fs::path dir = fs::temp_directory_path() / ("gossipsim-churn-" + tag + std::to_string(::getpid()));
    fs::create_directories(dir);
    MethodRun r = run(j, 300'000);
    write_transfers_csv(dir / "transfers.csv", r);
    write_events_csv(dir / "events.csv", r);
    write_nodes_csv(dir / "nodes.csv", r);
    std::string all;
    for (const char* f : {"transfers.csv", "events.csv", "nodes.csv"}) {
      std::ifstream in(dir / f);
      all += std::string(std::istreambuf_iterator<char>(in), {});
    }
    fs::remove_all(dir);
    return all;
  };
  const std::string a = files("a"), b = files("b");
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find(",crash,"), std::string::npos);
  EXPECT_NE(a.find(",cross-traffic,"), std::string::npos);
  // Another seed draws other churn.
  j["seed"] = 2;
  EXPECT_NE(files("c"), a);
}

TEST(Churn, AllReduceReformsItsRingWithoutTheCrashedNode) {
  // 4 nodes, a 1.2 MB model: chunks of 300 kB; a step takes 0.1 + 6 (0.01 +
  // 0.3) = 1.96 s. Node 3 crashes at 5 s, inside the third step: the step is
  // abandoned and a ring of three starts at once: its iteration ends at
  // 5.1 s and its chunks are 400 kB. Node 3 joins at 10 s and is back in
  // the first step that starts after.
  nlohmann::json j = scenario("complete", 4, "allreduce", 20);
  j["churn"] = {{{"nodes", {3}}, {"events", {{5, "crash"}, {10, "join"}}}}};
  MethodRun r = run(j, 1'200'000);
  const auto& t = r.recorder.transfers;
  Time first_after_crash = Time::max(), first_with_3_again = Time::max();
  for (const auto& row : t) {
    if (row.start < seconds(5)) {
      EXPECT_EQ(row.bytes, 300'000);
    } else if (row.src != 3 && row.dst != 3 && row.bytes == 400'000) {
      first_after_crash = std::min(first_after_crash, row.start);
    } else {
      EXPECT_GE(row.start, seconds(10)) << "node 3 in a ring while down";
      EXPECT_EQ(row.bytes, 300'000);
      first_with_3_again = std::min(first_with_3_again, row.start);
    }
  }
  EXPECT_EQ(first_after_crash, seconds(5.1));
  // Steps of three take 0.1 + 4 (0.01 + 0.4) = 1.74 s: 5, 6.74, 8.48, 10.22;
  // the first step with four starts at 10.22 and sends at 10.32 s.
  EXPECT_EQ(first_with_3_again, seconds(10.32));
  bool abandoned = false;
  for (const auto* e : events_of(r, "lost")) abandoned |= e->detail == "all-reduce step abandoned";
  EXPECT_TRUE(abandoned);
}

TEST(Churn, NodesThatStartDownJoinLater) {
  // A flash join: nodes 2 and 3 are down until 1 s.
  nlohmann::json j = scenario("ring", 4, "gossip-overlap", 1.95);
  j["churn"] = {{{"range", {2, 3}}, {"events", {{1, "join"}}}, {"model", "fresh"}}};
  MethodRun r = run(j);
  EXPECT_EQ(r.recorder.nodes[0].iterations, 19);
  EXPECT_EQ(r.recorder.nodes[2].iterations, 9);
  EXPECT_EQ(r.recorder.nodes[2].down, seconds(1));
  ASSERT_EQ(events_of(r, "join").size(), 2u);
  EXPECT_EQ(events_of(r, "join")[0]->detail, "fresh");
}

TEST(Churn, EveryoneDownIsAQuietRunNotACrash) {
  // Every node crashes at 1 s and only node 0 comes back, at 3 s, with no
  // peer to talk to: each method waits (allreduce trains a ring of one).
  for (const char* method :
       {"gossip", "gossip-overlap", "gossip-scheduled", "gosgd", "dpsgd", "adpsgd", "sgp", "osgp", "allreduce"}) {
    nlohmann::json j = scenario("ring", 4, method, 5);
    j["churn"] = {{{"all", true}, {"events", {{1, "crash"}}}},
                  {{"nodes", {0}}, {"events", {{3, "join"}}}, {"model", "stale"}}};
    MethodRun r = run(j);
    EXPECT_EQ(method_summary(r)["crashes"], 4) << method;
    EXPECT_EQ(r.recorder.nodes[1].down, seconds(4)) << method;
    for (const auto& t : r.recorder.transfers) EXPECT_LT(t.start, seconds(1)) << method << ": nobody to send to";
    // Node 0 computes alone from 3 s on, back to back (allreduce: a ring of
    // one, no chunks): 3.1, 3.2, ..., 5.0 s. Nobody else computes after 1 s.
    int alone = 0;
    for (const auto& e : r.recorder.trace)
      if (e.name == "compute" && e.ts >= seconds(1)) {
        EXPECT_EQ(e.node, 0) << method;
        EXPECT_GE(e.ts, seconds(3)) << method;
        ++alone;
      }
    EXPECT_EQ(alone, 20) << method;
  }
}

// Profiles played on the two-node network of wan_test: a -- b at 1 MB/s.
struct TwoNodes {
  Topology t;
  TwoNodes() {
    fs::path f = fs::temp_directory_path() / ("gossipsim-churn-" + std::to_string(::getpid()) + ".json");
    std::ofstream(f) << test::two_nodes(800, 800, 8, 10);
    t = test::topology_from(nlohmann::json{{"generator", "file"}, {"path", f.string()}}.dump());
    fs::remove(f);
  }
};

TEST(Wan, ALatencyChangeReachesTheFlowsThatStartAfterIt) {
  TwoNodes two;
  auto p = parse_profiles(
      JsonReader(nlohmann::json::parse(R"([{"link": ["a", "b"], "latency_ms": {"points": [[0.5, 200]]}}])"),
                 "test.json", "/network/profiles"),
      two.t, Streams(1));
  Simulator sim;
  Network net(sim, two.t);
  Recorder recorder;
  WanDynamics wan(sim, net, recorder, p, {}, {}, 1);
  wan.start();
  FlowRecord first, second;
  net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { first = f; });
  sim.schedule_at(seconds(2),
                  [&] { net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { second = f; }); });
  sim.run();
  EXPECT_EQ(first.finish, seconds(1.01));  // its 10 ms were spent before the change
  EXPECT_EQ(second.finish, seconds(3.2));  // 2 + 0.2 + 1
  ASSERT_EQ(recorder.network_events.size(), 1u);
  EXPECT_EQ(recorder.network_events[0].kind, "latency");
}

// The flows a cross-traffic entry makes are bounded while they are made, not
// only by the count its gaps predict: one past the bound is an InputError
// naming the entry's gaps, at the virtual time it came.
TEST(Wan, CrossTrafficFlowsAreBoundedAsTheyAreMade) {
  TwoNodes two;
  auto traffic = parse_cross_traffic(
      JsonReader(nlohmann::json::parse(R"([{"from": {"nodes": ["a"]}, "to": {"nodes": ["b"]}, "size_mb": 0.001,
                                             "interarrival_s": 0.1, "until_s": 100}])"),
                 "test.json", "/network/cross_traffic"),
      two.t, Streams(1));
  EXPECT_NEAR(traffic[0].expected_flows, 1000, 1e-6);
  Simulator sim;
  Network net(sim, two.t);
  Recorder recorder;
  WanDynamics wan(sim, net, recorder, {}, traffic, {}, 1, /*max_cross_flows=*/25);
  wan.start();
  try {
    sim.run();
    FAIL() << "no bound";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "test.json: /network/cross_traffic/0/interarrival_s: expected gaps that make at most 25 cross-traffic "
              "flows in a run; its draws made more by 2.6 virtual s (about 1e+03 were expected over [start_s, "
              "until_s])");
  }
  EXPECT_EQ(wan.cross_flows_started(), 26);
}

TEST(Wan, CrossTrafficSharesTheLinkByMaxMin) {
  // A 1 MB training flow from 0 s drains from 0.01 s at 1 MB/s; a 1 MB
  // background flow arrives at 0.5 s and drains from 0.51 s: both at 0.5
  // MB/s, the first ends at 0.51 + 0.5 / 0.5 = 1.51 s, the second, with
  // 0.5 MB left, at 1.51 + 0.5 = 2.01 s.
  TwoNodes two;
  auto traffic = parse_cross_traffic(
      JsonReader(nlohmann::json::parse(R"([{"from": {"nodes": ["a"]}, "to": {"nodes": ["b"]}, "size_mb": 1,
                                             "interarrival_s": 0.5, "until_s": 0.6}])"),
                 "test.json", "/network/cross_traffic"),
      two.t, Streams(1));
  Simulator sim;
  Network net(sim, two.t);
  Recorder recorder;
  WanDynamics wan(sim, net, recorder, {}, traffic, {}, 1);
  wan.start();
  FlowRecord training;
  net.start_flow(0, 1, bytes(1'000'000), [&](const FlowRecord& f) { training = f; });
  sim.run();
  EXPECT_EQ(training.finish, seconds(1.51));
  EXPECT_EQ(wan.cross_flows_started(), 1);
  EXPECT_EQ(wan.cross_flows_finished(), 1);
  EXPECT_EQ(sim.now(), seconds(2.01));
}

TEST(Wan, AComputeProfileSlowsANodeFromItsTime) {
  // Node 2's iterations from 1 s on take 3 x 100 ms: 10 by 1 s, then 1.3,
  // 1.6, ..., 2.8 s: 16 by 2.95 s. The others: 29.
  nlohmann::json j = scenario("ring", 4, "gossip-overlap", 2.95);
  j["compute"]["profiles"] = {{{"nodes", {2}}, {"factor", {{"points", {{1, 3}}}}}}};
  MethodRun r = run(j);
  EXPECT_EQ(r.recorder.nodes[2].iterations, 16);
  EXPECT_EQ(r.recorder.nodes[1].iterations, 29);
  ASSERT_EQ(events_of(r, "speed").size(), 1u);
  EXPECT_EQ(events_of(r, "speed")[0]->target, "n2");
}

// Bad churn, cross-traffic and compute profiles name their path.
TEST(Churn, BadInputNamesItsPath) {
  auto error = [](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = scenario("ring", 4, "gossip", 10);
    nlohmann::json::json_pointer ptr(key);
    j[ptr] = value;
    try {
      test::scenario_from(j);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << text;
  };
  EXPECT_TRUE(has(error("/churn", {{{"nodes", {1}}, {"events", {{-1, "crash"}}}}}),
                  "test.json: /churn/0/events/0/0: expected a time in [0, 1e9] s"));
  EXPECT_TRUE(has(error("/churn", {{{"nodes", {1}}, {"events", {{1, "explode"}}}}}),
                  "/churn/0/events/0/1: expected one of crash, leave, join"));
  // Overlapping events: node 1 crashes twice without a join between.
  EXPECT_TRUE(has(error("/churn", {{{"nodes", {1}}, {"events", {{1, "crash"}, {5, "join"}}}},
                                   {{"range", {0, 1}}, {"events", {{3, "crash"}}}}}),
                  "/churn/1/events/0: expected node 1's events to alternate down and join: a down event at 3 s "
                  "while it is down"));
  EXPECT_TRUE(
      has(error("/churn", {{{"nodes", {1}}, {"events", {{1, "crash"}}}}, {{"all", true}, {"events", {{1, "leave"}}}}}),
          "expected node 1's events at distinct times"));
  EXPECT_TRUE(has(error("/churn", {{{"nodes", {1}}}}), "/churn/0: expected exactly one of events, cycle"));
  EXPECT_TRUE(has(error("/churn", {{{"events", {{1, "crash"}}}}}), "/churn/0: expected exactly one of nodes, range"));
  EXPECT_TRUE(has(error("/churn", {{{"fraction", 0}, {"events", {{1, "crash"}}}}}),
                  "/churn/0/fraction: expected a fraction of the nodes in (0, 1]"));
  EXPECT_TRUE(has(error("/churn", {{{"all", true}, {"events", {{1, "crash"}}}, {"model", "best"}}}),
                  "/churn/0/model: expected one of average, fresh, stale"));
  EXPECT_TRUE(has(error("/churn", {{{"all", true}, {"cycle", {{"up_s", 1}, {"down_s", 1}, {"until_s", -1}}}}}),
                  "/churn/0/cycle/until_s: expected a number of seconds in (0, 1e9]"));
  EXPECT_TRUE(has(error("/churn", {{{"all", true}, {"cycle", {{"up_s", 0}, {"down_s", 1}, {"until_s", 5}}}}}),
                  "/churn/0/cycle/up_s"));
  EXPECT_TRUE(has(error("/network/cross_traffic", {{{"from", {{"nodes", {0}}}},
                                                    {"to", {{"nodes", {0}}}},
                                                    {"size_mb", 1},
                                                    {"interarrival_s", 1},
                                                    {"until_s", 5}}}),
                  "/network/cross_traffic/0/to: expected nodes other than the one sender"));
  EXPECT_TRUE(has(error("/network/cross_traffic", {{{"from", {{"nodes", {0}}}},
                                                    {"to", {{"all", true}}},
                                                    {"size_mb", 1},
                                                    {"interarrival_s", 1},
                                                    {"until_s", 0}}}),
                  "/network/cross_traffic/0/until_s: expected a number of seconds after start_s"));
  EXPECT_TRUE(has(error("/network/cross_traffic", {{{"from", {{"planet", 3}}},
                                                    {"to", {{"all", true}}},
                                                    {"size_mb", 1},
                                                    {"interarrival_s", 1},
                                                    {"until_s", 5}}}),
                  "/network/cross_traffic/0/from: expected exactly one of nodes"));
  EXPECT_TRUE(has(error("/network/cross_traffic", {{{"from", {{"all", true}}},
                                                    {"to", {{"all", true}}},
                                                    {"size_mb", 1},
                                                    {"interarrival_s", 1e-6},
                                                    {"until_s", 1e9}}}),
                  "/network/cross_traffic/0/interarrival_s: expected gaps giving at most 10000000 flows over [start_s, "
                  "until_s]; these give about 1e+15"));
  EXPECT_TRUE(has(error("/churn", {{{"all", true}, {"cycle", {{"up_s", 0.001}, {"down_s", 0.001}, {"until_s", 1e9}}}}}),
                  "/churn/0/cycle: expected at most 1000000 churn events in all"));
  EXPECT_TRUE(has(error("/compute/profiles", {{{"nodes", {0}}, {"factor", {{"points", {{1, 0}}}}}}}),
                  "/compute/profiles/0/factor: expected point 0 (time 1 s): a value in [0.01, 1000]"));
  EXPECT_TRUE(has(error("/network/profiles", {{{"link", {"n0", "n1"}}}}),
                  "/network/profiles/0: expected capacity_mbps or capacity_factor, latency_ms or latency_factor"));
  EXPECT_TRUE(has(error("/network/profiles", {{{"link", {"n0", "n1"}}, {"latency_ms", {{"points", {{1, -5}}}}}}}),
                  "/network/profiles/0/latency_ms: expected point 0 (time 1 s): a value in [0, 1e+06] ms"));
}

}  // namespace
}  // namespace gossipsim
