// Whether information mixes: the communication matrix, staleness figures and
// starved cuts, on runs simple enough to follow by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "analysis/summary.h"
#include "analysis/writers.h"
#include "sim/runner.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

// Two nodes: a 1 MB model takes 1.01 s (test::hand_scenario).
nlohmann::json two_nodes(const std::string& method, double stop_s) {
  return test::hand_scenario("complete", 2, method, stop_s);
}

MethodRun run(const nlohmann::json& j) {
  Scenario sc = test::scenario_from(j);
  NullLearner learner(sc.topology.node_count(), bytes(1'000'000));
  return run_method(sc, sc.methods[0], learner, RunOptions{});
}

std::string read(const fs::path& f) {
  std::ifstream in(f);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Time to target on the nodes' own models (/eval/target): rows written
// here, (average, node mean, worst node) at 0, 1 and 2 s of
// (0.5, 0.4, 0.3), (0.8, 0.6, 0.5), (0.9, 0.75, 0.7). Target 0.6: the
// average and the node mean reach it at 1 s, the worst node at 2 s; target
// 0.7: the average at 1 s, the other two at 2 s; 0.95: none.
TEST(Mixing, TimeToTargetUnderEachMetric) {
  std::vector<MetricRow> rows(3);
  const double values[3][3] = {{0.5, 0.4, 0.3}, {0.8, 0.6, 0.5}, {0.9, 0.75, 0.7}};
  for (int k = 0; k < 3; ++k) {
    rows[k].time = seconds(k);
    rows[k].epochs = k / 10.0;
    rows[k].eval.accuracy = values[k][0];
    rows[k].eval.per_node = true;
    rows[k].eval.node_accuracy_mean = values[k][1];
    rows[k].eval.node_accuracy_min = values[k][2];
  }
  const nlohmann::json by = time_to_accuracy_by(rows, {0.6, 0.7, 0.95});
  auto at = [&](const char* metric, const char* target) { return by[metric][target]; };
  EXPECT_EQ(at("average", "0.6")["virtual_s"], 1.0);
  EXPECT_EQ(at("node_mean", "0.6")["virtual_s"], 1.0);
  EXPECT_EQ(at("node_min", "0.6")["virtual_s"], 2.0);
  EXPECT_EQ(at("average", "0.7")["virtual_s"], 1.0);
  EXPECT_EQ(at("node_mean", "0.7")["virtual_s"], 2.0);
  EXPECT_EQ(at("node_min", "0.7")["epochs"], 0.2);
  for (const char* m : {"average", "node_mean", "node_min"}) EXPECT_TRUE(at(m, "0.95").is_null()) << m;
  EXPECT_EQ(time_to_accuracy(rows, {0.7}, TargetMetric::kNodeMin)["0.7"]["virtual_s"], 2.0);
  // Without per-node evaluations only the average is given.
  for (auto& r : rows) r.eval.per_node = false;
  EXPECT_FALSE(time_to_accuracy_by(rows, {0.6}).contains("node_mean"));

  // The option, and a node metric without per-node evaluations, refused.
  nlohmann::json j = two_nodes("gossip-overlap", 1);
  j["eval"]["target"] = "node_min";
  EXPECT_EQ(test::scenario_from(j).eval.target, TargetMetric::kNodeMin);
  for (const auto& [value, per_node, says] : std::vector<std::tuple<nlohmann::json, bool, std::string>>{
           {"node_max", true, "/eval/target: expected one of average, node_mean, node_min"},
           {1, true, "/eval/target: expected"},
           {"node_mean", false, "/eval/target: expected average when /eval/per_node is false"}}) {
    j["eval"]["target"] = value;
    j["eval"]["per_node"] = per_node;
    const std::string refused = test::refusal(j);
    EXPECT_NE(refused.find(says), std::string::npos) << refused;
  }
}

TEST(Mixing, StalenessAndTheCommunicationMatrixOfAHandRun) {
  // gossip-overlap: each node sends at 0.1 s; the model arrives at 1.11 s
  // and is merged at the end of the receiver's iteration, 1.2 s, when the
  // sender (free again) sends its next one: sends at 0.1, 1.2, 2.3 and 3.4 s,
  // merges at 1.2, 2.3, 3.4 s. Each merged model is 1.1 s old. In
  // iterations: both nodes end an iteration at 1.2 s, node 0 first (its
  // event was scheduled first): node 1 merges node 0's model after node 0's
  // 12th iteration (11 old), node 0 merges node 1's before node 1's 12th (10
  // old). By 3.5 s, 3 arrived each way and 1 is in flight.
  MethodRun r = run(two_nodes("gossip-overlap", 3.5));
  const nlohmann::json s = method_summary(r)["staleness"];
  EXPECT_EQ(s["merged"], 6);
  for (const char* k : {"mean", "p50", "p95", "max"}) EXPECT_NEAR(s["seconds"][k].get<double>(), 1.1, 1e-9) << k;
  EXPECT_EQ(s["iterations"]["mean"], 10.5);
  EXPECT_EQ(s["iterations"]["p50"], 10);  // nearest rank: the 3rd of 10 10 10 11 11 11
  EXPECT_EQ(s["iterations"]["p95"], 11);
  EXPECT_EQ(s["iterations"]["max"], 11);
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-mixing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_comm_matrix_csv(dir / "comm_matrix.csv", r);
  EXPECT_EQ(read(dir / "comm_matrix.csv"),
            "method,src,dst,transfers,bytes,lost\n"
            "gossip-overlap,n0,n1,3,3000000,0\n"
            "gossip-overlap,n1,n0,3,3000000,0\n");
  // No regions on a complete graph: no region files.
  write_region_outputs(dir, r);
  EXPECT_FALSE(fs::exists(dir / "comm_regions.csv"));
  fs::remove_all(dir);
  // Nothing crosses before the first arrivals at 1.11 s, more than a quarter
  // of the 3.5 s run: even the start of a run counts.
  ASSERT_EQ(method_summary(r)["starved_cuts"].size(), 1u);
  EXPECT_NEAR(method_summary(r)["starved_cuts"][0]["longest_gap_s"].get<double>(), 1.11, 1e-9);
}

TEST(Mixing, ACutThatNothingCrossesIsReportedStarved) {
  // Blocking gossip; node 1 is down from 1 to 3 s, which cuts both first
  // transfers. The first to cross the cut again is node 0's, sent at 3 s
  // (the join comes before its iteration's end at 3 s): it arrives at 4.01 s.
  // Node 1's, sent at 3.1 s, arrives at 4.11 s; the next ones end after 5 s.
  // The longest gap is 0 to 4.01 s, over a quarter of the 5 s run.
  nlohmann::json j = two_nodes("gossip", 5);
  j["churn"] = {{{"nodes", {1}}, {"events", {{1, "crash"}, {3, "join"}}}}};
  MethodRun r = run(j);
  const nlohmann::json cuts = method_summary(r)["starved_cuts"];
  ASSERT_EQ(cuts.size(), 1u) << cuts;
  EXPECT_EQ(cuts[0]["cut"], "n0 | n1");
  EXPECT_NEAR(cuts[0]["longest_gap_s"].get<double>(), 4.01, 1e-9);
  EXPECT_EQ(cuts[0]["from_s"], 0.0);
  EXPECT_EQ(cuts[0]["crossings"], 2);
  // A threshold above the gap silences it.
  j["eval"]["starved_s"] = 4.5;
  EXPECT_TRUE(method_summary(run(j))["starved_cuts"].empty());
}

TEST(Mixing, GeoTopologiesGetARegionMatrix) {
  // Two regions of cloud8, two nodes each: the matrix lists all four region
  // pairs, and its counts add up to the finished transfers.
  nlohmann::json j = two_nodes("gossip-overlap", 5);
  j["topology"] = {
      {"generator", "geo"}, {"nodes", 4}, {"regions_file", "cloud8"}, {"regions", {"us-east-1", "eu-west-1"}}};
  MethodRun r = run(j);
  ASSERT_EQ(r.recorder.group_names, (std::vector<std::string>{"eu-west-1", "us-east-1"}));
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-mixing-geo-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_region_outputs(dir, r);
  std::ifstream in(dir / "comm_regions.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "method,src_region,dst_region,transfers,bytes");
  int rows = 0;
  int64_t total = 0;
  while (std::getline(in, line)) {
    ++rows;
    total += std::stoll(line.substr(line.rfind(',', line.rfind(',') - 1) + 1));
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(total, method_summary(r)["transfers_finished"].get<int64_t>());
  EXPECT_TRUE(fs::exists(dir / "consensus_regions.csv"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim
