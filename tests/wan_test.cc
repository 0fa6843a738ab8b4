// A living WAN: capacities that change in time, checked against closed
// forms to the nanosecond, and overrides applied in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "input/wan_reader.h"
#include "sim/network.h"
#include "sim/recorder.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/wan_dynamics.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

// a -- b: 8 Mbit/s (1 MB/s) and 10 ms; access links at 800 Mbit/s, so the
// link is every flow's bottleneck.
Topology two_nodes() {
  fs::path f = fs::temp_directory_path() / ("gossipsim-wan-" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << test::two_nodes(800, 800, 8, 10);
  Topology t = test::topology_from(nlohmann::json{{"generator", "file"}, {"path", f.string()}}.dump());
  fs::remove(f);
  return t;
}

std::vector<WanProfile> profiles(const Topology& t, const nlohmann::json& j) {
  return parse_profiles(JsonReader(j, "test.json", "/network/profiles"), t, Streams(1));
}

// One flow of `size` bytes from a to b at time 0 under the given profiles.
FlowRecord lone_flow(const nlohmann::json& profile_json, int64_t size, Recorder* events = nullptr) {
  Topology t = two_nodes();
  auto p = profiles(t, profile_json);
  Simulator sim;
  Network net(sim, t);
  Recorder recorder;
  WanDynamics wan(sim, net, recorder, p, {}, {}, 1);
  wan.start();
  FlowRecord done;
  net.start_flow(0, 1, bytes(size), [&](const FlowRecord& f) { done = f; });
  sim.run(seconds(100));
  if (events) *events = recorder;
  return done;
}

TEST(Wan, AFlowWhoseLinkHalvesMidTransferFinishesAtTheHandComputedTime) {
  // Drains from 0.01 s at 1 MB/s; at 0.51 s 500,000 bytes are left and the
  // link halves to 0.5 MB/s: they take 1 s more.
  FlowRecord f = lone_flow({{{"link", {"a", "b"}}, {"capacity_mbps", {{"points", {{0.51, 4}}}}}}}, 1'000'000);
  EXPECT_EQ(f.finish, seconds(1.51));
  // Without the profile: 0.01 + 1 s.
  EXPECT_EQ(lone_flow(nlohmann::json::array(), 1'000'000).finish, seconds(1.01));
}

TEST(Wan, ACapacityOfZeroForFiveSecondsDelaysALoneFlowByExactlyFiveSeconds) {
  FlowRecord f =
      lone_flow({{{"link", {"a", "b"}}, {"capacity_mbps", {{"points", {{0.51, 0}, {5.51, 8}}}}}}}, 1'000'000);
  EXPECT_EQ(f.finish, seconds(6.01));
  // An access link at 0 stalls it the same way (the uplink of a).
  f = lone_flow({{{"access", "a"}, {"direction", "up"}, {"capacity_mbps", {{"points", {{0.51, 0}, {5.51, 800}}}}}}},
                1'000'000);
  EXPECT_EQ(f.finish, seconds(6.01));
}

// Factors (issue 22: a "halving" profile raised a link a sweep had set
// lower, since network profiles took absolute values only).
TEST(Wan, ACapacityFactorScalesTheCapacityTheRunBeganWith) {
  // The link is 8 Mbit/s: a factor of 0.5 at 0.51 s is the 4 Mbit/s of the
  // absolute test above, the same hand-computed finish.
  FlowRecord f = lone_flow({{{"link", {"a", "b"}}, {"capacity_factor", {{"points", {{0.51, 0.5}}}}}}}, 1'000'000);
  EXPECT_EQ(f.finish, seconds(1.51));
  // Factor 0 stalls, as capacity 0 does; back to 1 is the 800 Mbit/s uplink again.
  f = lone_flow({{{"access", "a"}, {"direction", "up"}, {"capacity_factor", {{"points", {{0.51, 0}, {5.51, 1}}}}}}},
                1'000'000);
  EXPECT_EQ(f.finish, seconds(6.01));
  // Of the value after overrides and --set: the link set to 3 Mbit/s, then
  // halved, is 1.5; its latency set to 40 ms, then tripled, is 120; an
  // access link for both directions scales each direction's own capacity.
  nlohmann::json s = nlohmann::json::parse(R"({
    "name": "f", "topology": {"generator": "ring", "nodes": 4},
    "network": {"access": {"up_mbps": 10, "down_mbps": 30},
                "profiles": [{"link": ["n0", "n1"], "capacity_factor": {"points": [[5, 0.5]]},
                              "latency_factor": {"points": [[6, 3]]}},
                             {"access": "n2", "capacity_factor": {"points": [[7, 0.1]]}}]},
    "overrides": [{"link": ["n0", "n1"], "bandwidth_mbps": 3, "latency_ms": 40}],
    "workload": {"dataset": "synthetic", "model": "mlp"}, "methods": ["gossip"], "stop": {"virtual_s": 1}})");
  Scenario sc = test::scenario_from(s);
  ASSERT_EQ(sc.network.profiles.size(), 4u);
  EXPECT_DOUBLE_EQ(sc.network.profiles[0].values->points[0].second, 1.5);
  EXPECT_EQ(sc.network.profiles[0].values->points[0].first, seconds(5));
  EXPECT_DOUBLE_EQ(sc.network.profiles[1].values->points[0].second, 120);
  EXPECT_EQ(sc.network.profiles[2].name, "up n2");
  EXPECT_DOUBLE_EQ(sc.network.profiles[2].values->points[0].second, 1);
  EXPECT_EQ(sc.network.profiles[3].name, "down n2");
  EXPECT_DOUBLE_EQ(sc.network.profiles[3].values->points[0].second, 3);
  // A sweep's --set reaches the factor's base too.
  s["overrides"][0]["bandwidth_mbps"] = 50;
  EXPECT_DOUBLE_EQ(test::scenario_from(s).network.profiles[0].values->points[0].second, 25);
}

TEST(Wan, BadFactorsNameTheirPath) {
  nlohmann::json base = nlohmann::json::parse(R"({
    "name": "f", "topology": {"generator": "ring", "nodes": 4},
    "overrides": [{"link": ["n0", "n1"], "bandwidth_mbps": 1e7, "latency_ms": 5000}],
    "workload": {"dataset": "synthetic", "model": "mlp"}, "methods": ["gossip"], "stop": {"virtual_s": 1}})");
  auto error = [&](const nlohmann::json& entry) {
    nlohmann::json s = base;
    s["network"]["profiles"] = nlohmann::json::array({entry});
    try {
      test::scenario_from(s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const nlohmann::json link = {"n0", "n1"};
  auto pts = [](double t, double v) { return nlohmann::json{{"points", {{t, v}}}}; };
  EXPECT_NE(error({{"link", link}, {"capacity_factor", pts(1, -1)}})
                .find("/network/profiles/0/capacity_factor: expected point 0 (time 1 s): 0 or a value in [0.001, 1000] "
                      "(a factor)"),
            std::string::npos);
  EXPECT_NE(error({{"link", link}, {"capacity_factor", pts(1, 1e-9)}}).find("[0.001, 1000]"), std::string::npos);
  EXPECT_NE(error({{"link", link}, {"capacity_factor", nlohmann::json{{"points", {{1, "half"}}}}}})
                .find("/capacity_factor/points/0/1"),
            std::string::npos);
  // 1e7 Mbit/s x 1000 is over 1e9; 5000 ms x 1000 is over 1e6 ms.
  EXPECT_NE(error({{"link", link}, {"capacity_factor", pts(1, 1000)}})
                .find("/network/profiles/0/capacity_factor: expected point 0 (time 1 s): a factor that keeps the "
                      "capacity in 0 or a value in [0.001, 1e+09] Mbit/s (link n0--n1 has 1e+07 Mbit/s; x 1000 makes "
                      "1e+10)"),
            std::string::npos);
  EXPECT_NE(error({{"link", link}, {"latency_factor", pts(1, 1000)}}).find("/latency_factor: expected point 0"),
            std::string::npos);
  EXPECT_NE(error({{"link", link}, {"capacity_factor", pts(1, 1)}, {"capacity_mbps", pts(1, 1)}})
                .find("/network/profiles/0: expected capacity_mbps or capacity_factor, not both"),
            std::string::npos);
  EXPECT_NE(error({{"link", link}, {"latency_factor", pts(1, 1)}, {"latency_ms", pts(1, 1)}})
                .find("expected latency_ms or latency_factor, not both"),
            std::string::npos);
  EXPECT_NE(error({{"access", 0}, {"latency_factor", pts(1, 2)}, {"capacity_factor", pts(1, 1)}})
                .find("/network/profiles/0/latency_factor: expected no latency on an access target"),
            std::string::npos);
  EXPECT_NE(error({{"access", 0}}).find("/network/profiles/0: expected capacity_mbps or capacity_factor"),
            std::string::npos);
  EXPECT_NE(error({{"link", link}}).find("expected capacity_mbps or capacity_factor, latency_ms or latency_factor"),
            std::string::npos);
  EXPECT_EQ(error({{"link", link}, {"capacity_factor", pts(1, 0)}}), "accepted");
}

TEST(Wan, APeriodicProfileRepeats) {
  Recorder r;
  lone_flow({{{"link", {"a", "b"}}, {"capacity_mbps", {{"points", {{0, 8}, {0.5, 4}}}, {"period_s", 2}}}}}, 1, &r);
  ASSERT_GE(r.network_events.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(r.network_events[i].time, seconds(2.0 * (i / 2) + (i % 2 ? 0.5 : 0))) << i;
    EXPECT_EQ(r.network_events[i].value, i % 2 ? 4 : 8) << i;
    EXPECT_EQ(r.network_events[i].target, "link n0--n1");
  }
}

TEST(Wan, AFlowAtADiurnalLinkDrainsWhatTheCurveAllows) {
  // 8 Mbit/s mean, amplitude 0.5, a period of 4 s in steps of 1 s: 8, 12, 8, 4
  // Mbit/s = 1, 1.5, 1, 0.5 MB/s. 3 MB from 0.01 s: 0.99 MB by 1 s, 1.5 MB by
  // 2 s (2.49), the last 0.51 MB at 1 MB/s: 2.51 s.
  FlowRecord f =
      lone_flow({{{"link", {"a", "b"}},
                  {"capacity_mbps", {{"diurnal", {{"mean", 8}, {"amplitude", 0.5}, {"period_s", 4}, {"step_s", 1}}}}}}},
                3'000'000);
  EXPECT_EQ(f.finish, seconds(2.51));
}

TEST(Wan, RandomProfilesAreTheSameForTheSameSeed) {
  const nlohmann::json j = {
      {{"link", {"a", "b"}},
       {"capacity_mbps",
        {{"random_walk", {{"start", 8}, {"sigma", 0.3}, {"step_s", 0.5}, {"min", 1}, {"max", 50}, {"until_s", 20}}}}}},
      {{"access", 1},
       {"capacity_mbps",
        {{"on_off",
          {{"on", 100}, {"up_s", {{"dist", "exponential"}, {"mean", 2}}}, {"down_s", 1}, {"until_s", 20}}}}}}};
  Recorder a, b;
  FlowRecord fa = lone_flow(j, 5'000'000, &a), fb = lone_flow(j, 5'000'000, &b);
  EXPECT_EQ(fa.finish, fb.finish);
  ASSERT_EQ(a.network_events.size(), b.network_events.size());
  ASSERT_GT(a.network_events.size(), 40u);
  for (size_t i = 0; i < a.network_events.size(); ++i) {
    EXPECT_EQ(a.network_events[i].time, b.network_events[i].time);
    EXPECT_EQ(a.network_events[i].value, b.network_events[i].value);
  }
}

TEST(Wan, OverridesApplyInOrder) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "overrides", "topology": {"generator": "ring", "nodes": 4},
    "compute": {"iteration_ms": 50},
    "workload": {"dataset": "synthetic", "model": "mlp"},
    "methods": ["gossip-overlap"], "stop": {"virtual_s": 3}, "eval": {"every_s": 1},
    "overrides": [
      {"all": true, "iteration_ms": 100},
      {"nodes": [2], "iteration_ms": 300},
      {"range": [2, 3], "up_mbps": 5},
      {"nodes": ["n3"], "up_mbps": 7, "down_mbps": 9},
      {"link": ["n0", "n1"], "bandwidth_mbps": 3, "latency_ms": 40}
    ]})");
  Scenario sc = test::scenario_from(j);
  const auto& g = sc.topology.graph;
  EXPECT_DOUBLE_EQ(g[sc.topology.nodes[2]].up.megabits_per_second(), 5);
  EXPECT_DOUBLE_EQ(g[sc.topology.nodes[3]].up.megabits_per_second(), 7);
  EXPECT_DOUBLE_EQ(g[sc.topology.nodes[3]].down.megabits_per_second(), 9);
  EXPECT_DOUBLE_EQ(g[sc.topology.nodes[0]].up.megabits_per_second(), 100);
  auto [edge, found] = boost::edge(sc.topology.nodes[0], sc.topology.nodes[1], g);
  ASSERT_TRUE(found);
  EXPECT_DOUBLE_EQ(g[edge].capacity.megabits_per_second(), 3);
  EXPECT_EQ(g[edge].latency, milliseconds(40));
  NullLearner learner(4, bytes(1000));
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  // 3 s of iterations of 300 ms (node 2) and 100 ms (the others), no jitter.
  EXPECT_EQ(r.recorder.nodes[2].iterations, 10);
  EXPECT_EQ(r.recorder.nodes[0].iterations, 30);
  EXPECT_EQ(r.recorder.nodes[3].iterations, 30);
}

TEST(Wan, TopologyDotShowsTheOverriddenValues) {
  fs::path f = fs::temp_directory_path() / ("gossipsim-wan-dot-" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << R"({"name": "dot", "topology": {"generator": "ring", "nodes": 3},
    "workload": {"dataset": "synthetic", "model": "mlp"}, "methods": ["gossip"], "stop": {"virtual_s": 1},
    "overrides": [{"nodes": [1], "up_mbps": 2.5}]})";
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " topology " + f.string() + " --dot", &out), 0) << out;
  EXPECT_NE(out.find("label=\"n1\", up_mbps=2.5,"), std::string::npos) << out;
  fs::remove(f);
}

// Every bad profile or override names its file and JSON path.
TEST(Wan, BadProfilesAndOverridesNameTheirPath) {
  Topology t = two_nodes();
  auto error = [&](const nlohmann::json& j) {
    try {
      profiles(t, j);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto link = [](nlohmann::json profile) {
    return nlohmann::json::array({{{"link", {"a", "b"}}, {"capacity_mbps", profile}}});
  };
  EXPECT_NE(error(link({{"points", {{-1, 8}}}}))
                .find("test.json: /network/profiles/0/capacity_mbps: expected point 0 "
                      "(time -1 s): a time in [0, 1e9] s"),
            std::string::npos);
  EXPECT_NE(error(link({{"points", {{1, 8}, {1, 4}}}})).find("point 1 (time 1 s): a time after the previous point's"),
            std::string::npos);
  EXPECT_NE(error(link({{"points", {{1, 8}}}, {"period_s", 1}})).find("a time within the period"), std::string::npos);
  EXPECT_NE(error(link({{"points", {{1, -3}}}})).find("0 or a value in [0.001, 1e+09] Mbit/s"), std::string::npos);
  EXPECT_NE(error(link({{"csv", "/nonexistent/trace.csv"}})).find("/capacity_mbps/csv: expected an existing CSV file"),
            std::string::npos);
  EXPECT_NE(error(link({{"points", {{1, 8}}}, {"csv", "x.csv"}})).find("exactly one of points, csv"),
            std::string::npos);
  EXPECT_NE(error({{{"link", {"a", "zz"}}, {"capacity_mbps", {{"points", {{0, 1}}}}}}})
                .find("/network/profiles/0/link/1: expected the name of a vertex"),
            std::string::npos);
  EXPECT_NE(error({{{"access", 7}, {"capacity_mbps", {{"points", {{0, 1}}}}}}})
                .find("/network/profiles/0/access: expected a node id in [0, 2)"),
            std::string::npos);
  EXPECT_NE(error({{{"access", 0}, {"link", {"a", "b"}}, {"capacity_mbps", {{"points", {{0, 1}}}}}}})
                .find("expected exactly one target"),
            std::string::npos);
  // A CSV with a bad row names the CSV's line.
  fs::path csv = fs::temp_directory_path() / ("gossipsim-wan-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(csv) << "time_s,mbps\n0,8\n1;4\n";
  EXPECT_NE(error(link({{"csv", csv.string()}})).find(csv.string() + ": line 3: expected two fields, time_s,value"),
            std::string::npos);
  fs::remove(csv);

  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "o", "topology": {"generator": "ring", "nodes": 4},
    "workload": {"dataset": "synthetic", "model": "mlp"}, "methods": ["gossip"], "stop": {"virtual_s": 1}})");
  auto scenario_error = [&](const nlohmann::json& overrides) {
    nlohmann::json s = j;
    s["overrides"] = overrides;
    try {
      test::scenario_from(s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(scenario_error({{{"nodes", {9}}, {"iteration_ms", 5}}}).find("/overrides/0/nodes/0: expected a node id"),
            std::string::npos);
  EXPECT_NE(scenario_error({{{"range", {3, 1}}, {"jitter", 0.1}}})
                .find("/overrides/0/range/1: expected a node id >= the first"),
            std::string::npos);
  EXPECT_NE(scenario_error({{{"all", true}, {"jitter", 2}}}).find("/overrides/0/jitter: expected a number in [0, 0.9]"),
            std::string::npos);
  EXPECT_NE(scenario_error({{{"all", true}, {"colour", 2}}}).find("/overrides/0/colour: unknown key"),
            std::string::npos);
  EXPECT_NE(scenario_error({{{"iteration_ms", 5}}}).find("/overrides/0: expected exactly one of nodes"),
            std::string::npos);
}

}  // namespace
}  // namespace gossipsim
