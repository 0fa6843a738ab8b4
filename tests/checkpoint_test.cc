// Checkpoints and resume, over every method: a run resumed from any of its
// checkpoints (written to files and read back) writes the same CSVs, byte
// for byte, as the run that was never interrupted, and taking checkpoints
// changes nothing. The learner here keeps one number per node, so that a
// model in flight that was not restored, or restored into the wrong
// transfer, changes the evaluations.
#include "sim/checkpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "analysis/summary.h"
#include "analysis/writers.h"
#include "base/binary_io.h"
#include "sim/runner.h"
#include "test_util.h"
#include "toy_learner.h"

namespace gossipsim {
namespace {

using test::ToyLearner;

namespace fs = std::filesystem;

// A method's JSON; "churn:" before it adds churn and cross-traffic, "geo:"
// puts the nodes in cloud regions (region matrix, consensus split) and adds
// churn too.
nlohmann::json wan(std::string method) {
  const bool geo = method.rfind("geo:", 0) == 0;
  if (geo) method = "churn:" + method.substr(4);
  const bool churn = method.rfind("churn:", 0) == 0;
  if (churn) method = method.substr(6);
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "checkpoints", "seed": 7,
    "topology": {"generator": "complete", "nodes": 5},
    "network": {"access": {"up_mbps": {"dist": "empirical", "values": [5, 50]},
                           "down_mbps": {"dist": "empirical", "values": [10, 100]}},
                "links": {"latency_ms": {"dist": "uniform", "min": 10, "max": 80}}},
    "compute": {"iteration_ms": {"dist": "uniform", "min": 20, "max": 60}, "jitter": 0.1},
    "workload": {"dataset": "synthetic", "model": "mlp"},
    "methods": [], "stop": {"virtual_s": 12}, "eval": {"every_s": 1}
  })");
  j["methods"].push_back(nlohmann::json::parse(method));
  if (churn) {
    j["churn"] = nlohmann::json::parse(R"([
      {"nodes": [1], "events": [[3.3, "leave"], [6.1, "join"]], "model": "stale"},
      {"nodes": [3, 4], "cycle": {"up_s": {"dist": "exponential", "mean": 3}, "down_s": 1.5, "until_s": 12},
       "model": "average"},
      {"nodes": [2], "events": [[8.2, "crash"], [9, "join"]], "model": "fresh"}])");
    j["network"]["cross_traffic"] = nlohmann::json::parse(R"([{"from": {"all": true}, "to": {"all": true},
      "size_mb": 0.2, "interarrival_s": {"dist": "exponential", "mean": 0.3}, "until_s": 12}])");
  }
  if (geo) j["topology"] = {{"generator", "geo"}, {"nodes", 12}, {"regions_file", "cloud8"}};
  return j;
}

// Every file a method's run writes (write_method_outputs), each named and
// concatenated; summary.json without its wall-clock figures, which no two
// runs share.
std::string csvs(const MethodRun& r, const fs::path& dir) {
  write_method_outputs(dir, r);
  std::string all;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (f.filename() == "summary.json") {
      nlohmann::json s = nlohmann::json::parse(text);
      for (const char* k : kMachineMeasures) s.erase(k);
      text = s.dump(1);
    }
    all += "== " + f.filename().string() + "\n" + text;
  }
  return all;
}

class EveryMethodResumes : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryMethodResumes, FromAnyCheckpointToTheSameBytes) {
  const fs::path tmp = fs::temp_directory_path() / ("gossipsim-ckpt-" + std::to_string(::getpid()));
  Scenario sc = test::scenario_from(wan(GetParam()));
  const MethodOptions& m = sc.methods[0];
  const int nodes = learner_nodes(sc, m);

  ToyLearner plain_learner(nodes);
  const std::string plain = csvs(run_method(sc, m, plain_learner, RunOptions{}), tmp / "plain");

  std::vector<MethodCheckpoint> taken;
  ToyLearner learner(nodes);
  RunOptions with;
  with.checkpoint_every = seconds(2.5);
  with.on_checkpoint = [&](const MethodCheckpoint& c) { taken.push_back(c); };
  EXPECT_EQ(csvs(run_method(sc, m, learner, with), tmp / "with"), plain) << "checkpoints changed the run";
  ASSERT_GE(taken.size(), 4u);

  bool some_in_flight = false;
  for (size_t i = 0; i < taken.size(); ++i) {
    SCOPED_TRACE("checkpoint " + std::to_string(i));
    // Through the files, as a resumed process reads them.
    const fs::path dir = tmp / ("c" + std::to_string(i));
    fs::create_directories(dir);
    write_method_checkpoint(dir, taken[i]);
    const MethodCheckpoint c = read_method_checkpoint(dir);
    EXPECT_GE(c.now, seconds(2.5 * (i + 1)));
    some_in_flight |= !c.snapshots.empty();
    ToyLearner fresh(nodes);
    RunOptions resume;
    resume.resume = &c;
    EXPECT_EQ(csvs(run_method(sc, m, fresh, resume), dir / "out"), plain);
  }
  if (m.name != "single" && m.name != "allreduce") EXPECT_TRUE(some_in_flight) << "no model was in flight";
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Methods, EveryMethodResumes,
                         ::testing::Values(R"("gossip")", R"("gossip-overlap")", R"("gossip-scheduled")",
                                           R"({"name":"gossip-scheduled","info":"gossiped","label":"g"})",
                                           R"({"name":"gossip-scheduled","exchange":"push-pull","label":"pp"})",
                                           R"({"name":"gossip","merge":"gosgd","local_steps":3,"label":"gs"})",
                                           R"("adpsgd")", R"("sgp")", R"("osgp")", R"("allreduce")", R"("single")"));
// Churn and cross-traffic replay too: their events are part of the run.
INSTANTIATE_TEST_SUITE_P(
    Churn, EveryMethodResumes,
    ::testing::Values(R"(churn:"gossip")", R"(churn:"gossip-overlap")",
                      R"(churn:{"name":"gossip-scheduled","info":"gossiped","exchange":"push-pull"})",
                      R"(churn:"dpsgd")", R"(churn:"adpsgd")", R"(churn:"sgp")", R"(churn:"osgp")",
                      R"(churn:"allreduce")"));
// Regions (comm_regions.csv, consensus_regions.csv with its split) and churn.
INSTANTIATE_TEST_SUITE_P(Geo, EveryMethodResumes,
                         ::testing::Values(R"(geo:"gossip")", R"(geo:"gossip-scheduled")", R"(geo:"dpsgd")",
                                           R"(geo:"adpsgd")", R"(geo:"sgp")", R"(geo:"allreduce")"));

TEST(Checkpoint, AReplayThatDoesNotArriveIsRefused) {
  Scenario sc = test::scenario_from(wan(R"("gossip-overlap")"));
  std::vector<MethodCheckpoint> taken;
  ToyLearner learner(5);
  RunOptions with;
  with.checkpoint_every = seconds(3);
  with.on_checkpoint = [&](const MethodCheckpoint& c) { taken.push_back(c); };
  run_method(sc, sc.methods[0], learner, with);
  ASSERT_FALSE(taken.empty());
  MethodCheckpoint wrong = taken[0];
  wrong.transfers += 1;  // as if written by another scenario or build
  ToyLearner fresh(5);
  RunOptions resume;
  resume.resume = &wrong;
  try {
    run_method(sc, sc.methods[0], fresh, resume);
    FAIL() << "resumed from a checkpoint it did not reach";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected the replay of gossip-overlap to reach the checkpoint"),
              std::string::npos)
        << e.what();
  }
}

TEST(Checkpoint, ACutShortFileIsAnInputError) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-ckpt-cut-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  MethodCheckpoint c;
  c.label = "x";
  c.snapshots = {{3, std::string(100, 'a')}};
  write_method_checkpoint(dir, c);
  std::filesystem::resize_file(dir / "snapshots.bin", 50);
  EXPECT_THROW(read_method_checkpoint(dir), InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim
