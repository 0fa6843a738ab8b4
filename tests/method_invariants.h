// The invariants every method must keep, as functions of a method's
// /methods entry, so that one suite runs them over every registered method
// (tests/methods_test.cc, EveryMethod) and a method added by a test alone
// (Registry.*) passes the very same checks. Timeline only (NullLearner).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "analysis/writers.h"
#include "sim/runner.h"
#include "test_util.h"

namespace gossipsim::test {

// The entries of /methods the invariant suite runs: every registered
// method at least once, and the options that change what a protocol does.
inline const std::vector<std::string>& every_method_entry() {
  static const std::vector<std::string> entries = {
      R"("gossip")",
      R"("gossip-overlap")",
      R"("gossip-scheduled")",
      R"({"name":"gossip-overlap","ready":"link-free","label":"olf"})",
      R"({"name":"gossip-scheduled","ready":"link-free","label":"slf"})",
      R"({"name":"gossip-scheduled","info":"gossiped","label":"g"})",
      R"({"name":"gossip-scheduled","exchange":"push-pull","label":"pp"})",
      R"({"name":"gossip-scheduled","reservation":"node","label":"n"})",
      R"({"name":"gossip-scheduled","selection":"mix","label":"mix"})",
      R"({"name":"gossip-scheduled","rotate":2,"label":"rot"})",
      R"({"name":"gossip-scheduled","cross_region_floor":0.3,"label":"fl"})",
      R"({"name":"gossip","merge":"gosgd","local_steps":3,"label":"gs"})",
      R"("gosgd")",
      R"({"name":"gosgd","push_probability":1,"label":"g1"})",
      R"({"name":"gosgd","queue":"blocking","label":"gb"})",
      R"({"name":"gosgd","queue":"unbounded","label":"gu"})",
      R"("dpsgd")",
      R"({"name":"dpsgd","local_steps":3,"label":"d3"})",
      R"("adpsgd")",
      R"({"name":"adpsgd","local_steps":2,"label":"a2"})",
      R"({"name":"adpsgd","bipartition":"regions","label":"ar"})",
      R"("sgp")",
      R"("osgp")",
      R"({"name":"osgp","tau":3,"local_steps":2,"label":"o3"})",
      R"("allreduce")",
      R"("single")"};
  return entries;
}

// A heterogeneous 6-node WAN of 30 virtual s running `method` (JSON text).
inline nlohmann::json invariant_scenario(const std::string& method) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "invariants", "seed": 4,
    "topology": {"generator": "complete", "nodes": 6},
    "network": {"access": {"up_mbps": {"dist": "empirical", "values": [5, 50]},
                           "down_mbps": {"dist": "empirical", "values": [10, 100]}},
                "links": {"latency_ms": {"dist": "uniform", "min": 10, "max": 80}, "bandwidth_mbps": 1000}},
    "compute": {"iteration_ms": {"dist": "uniform", "min": 20, "max": 60}, "jitter": 0.1},
    "workload": {"dataset": "synthetic", "model": "mlp"},
    "methods": [],
    "stop": {"virtual_s": 30},
    "eval": {"every_s": 5}
  })");
  j["methods"].push_back(nlohmann::json::parse(method));
  return j;
}

inline MethodRun run_timeline(const nlohmann::json& j, int64_t model_bytes = 400'000, bool trace = true) {
  Scenario sc = scenario_from(j);
  NullLearner learner(learner_nodes(sc, sc.methods[0]), bytes(model_bytes));
  RunOptions opts;
  opts.trace = trace;
  return run_method(sc, sc.methods[0], learner, opts);
}

// No model is merged before its transfer finished, nor snapshotted after it started.
inline void expect_merges_after_arrival(const MethodRun& r) {
  for (const auto& t : r.recorder.transfers) {
    EXPECT_LE(t.snapshot, t.start);
    if (t.merged) {
      EXPECT_TRUE(t.finished);
      EXPECT_GE(t.merge, t.finish);
    }
  }
}

// bytes_sent and transfers count exactly the finished transfers.
inline void expect_counts_match_transfers(const MethodRun& r) {
  int64_t bytes = 0, finished = 0;
  for (const auto& t : r.recorder.transfers)
    if (t.finished) {
      bytes += t.bytes;
      ++finished;
    }
  const nlohmann::json s = method_summary(r);
  EXPECT_EQ(s["bytes_sent"].get<int64_t>(), bytes);
  EXPECT_EQ(s["transfers"].get<int64_t>(), finished);
}

// Every node's compute and idle time add up to the run's length.
inline void expect_time_adds_up(const MethodRun& r, Time length) {
  for (const auto& n : r.recorder.nodes) {
    EXPECT_EQ((n.compute + n.idle).ns(), length.ns());
    EXPECT_GE(n.compute, Time::zero());
  }
}

// The same scenario and seed give the same CSV files.
inline std::string csv_files_of(const MethodRun& r) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gossipsim-det-" + std::to_string(::getpid()));
  write_method_outputs(dir, r);
  std::string all;
  for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv", "events.csv"}) {
    std::ifstream in(dir / f);
    all += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::remove_all(dir);
  return all;
}

// With half of 6 nodes on a ring cycling through crashes (or leaves) and
// joins: a node that is down computes nothing, starts no transfer and
// merges nothing; the run goes on and never throws.
inline void expect_down_nodes_silent(const nlohmann::json& method, const std::string& how) {
  nlohmann::json j = hand_scenario("ring", 6, "gossip", 40);
  j["methods"] = {method};
  j["churn"] = {
      {{"fraction", 0.5},
       {"cycle", {{"up_s", {{"dist", "exponential"}, {"mean", 4}}}, {"down_s", 2}, {"until_s", 40}, {"down", how}}},
       {"model", "average"}}};
  MethodRun r = run_timeline(j, 200'000);
  std::vector<std::vector<std::pair<Time, Time>>> down(6);  // each node's down windows, from events.csv
  for (const auto& e : r.recorder.network_events) {
    if (e.kind != "crash" && e.kind != "leave" && e.kind != "join") continue;
    const int n = std::stoi(e.target.substr(1));
    if (e.kind == "join")
      down[n].back().second = e.time;
    else
      down[n].push_back({e.time, seconds(1e9)});
  }
  auto is_down = [&](NodeId n, Time t, bool inclusive_end) {
    for (auto [a, b] : down[n])
      if (t > a && (inclusive_end ? t <= b : t < b)) return true;
    return false;
  };
  const std::string what = method.dump() + " " + how;
  const nlohmann::json s = method_summary(r);
  ASSERT_GT(s["crashes"].get<int>() + s["leaves"].get<int>(), 3) << what;
  for (const auto& e : r.recorder.trace) {
    if (e.name == "compute") {
      EXPECT_FALSE(is_down(e.node, e.ts + e.dur, true)) << what << " node " << e.node << " at " << e.ts.seconds();
      EXPECT_FALSE(is_down(e.node, e.ts, false)) << what;
    }
    if (e.name == "merge") EXPECT_FALSE(is_down(e.node, e.ts, false)) << what;
  }
  for (const auto& t : r.recorder.transfers) {
    EXPECT_FALSE(is_down(t.src, t.start, false)) << what << " a down node sent at " << t.start.seconds();
    EXPECT_FALSE(is_down(t.dst, t.start, false)) << what << " sent to a down node at " << t.start.seconds();
  }
  EXPECT_GT(s["iterations"].get<int64_t>(), 200) << what;  // it went on
}

}  // namespace gossipsim::test
