// Invariants every method must keep, checked over all of them on a
// timeline-only learner (no training), plus closed forms and a golden run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/summary.h"
#include "analysis/writers.h"
#include "method_invariants.h"
#include "sim/methods/method.h"
#include "sim/runner.h"
#include "test_util.h"
#include "toy_learner.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

nlohmann::json wan(const std::string& method) { return test::invariant_scenario(method); }

MethodRun run(const nlohmann::json& j, int64_t model_bytes = 400'000, bool trace = true) {
  return test::run_timeline(j, model_bytes, trace);
}

// The send rule, read two ways (docs/methods.md, "ready"). Starts of the
// transfers of a run, in order, as (src, dst, start in ms).
std::vector<std::tuple<NodeId, NodeId, int64_t>> starts(const MethodRun& r) {
  std::vector<std::tuple<NodeId, NodeId, int64_t>> out;
  for (const auto& t : r.recorder.transfers) out.emplace_back(t.src, t.dst, t.start.ns() / 1'000'000);
  return out;
}

MethodRun hand_run(const nlohmann::json& j) {
  Scenario sc = test::scenario_from(j);
  NullLearner learner(sc.topology.node_count(), bytes(1'000'000));
  return run_method(sc, sc.methods[0], learner, RunOptions{});
}

class EveryMethod : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryMethod, NoModelIsMergedBeforeItsTransferFinished) {
  test::expect_merges_after_arrival(run(wan(GetParam())));
}

TEST_P(EveryMethod, BytesSentAreTransfersTimesTheirSize) {
  MethodRun r = run(wan(GetParam()));
  test::expect_counts_match_transfers(r);
  if (GetParam().find("gossip") != std::string::npos) {
    int64_t finished = 0;
    for (const auto& t : r.recorder.transfers)
      if (t.finished) {
        EXPECT_EQ(t.bytes, 400'000);
        ++finished;
      }
    EXPECT_GT(finished, 10);
  }
}

TEST_P(EveryMethod, SameSeedGivesIdenticalCsvFiles) {
  const std::string a = test::csv_files_of(run(wan(GetParam())));
  EXPECT_GT(a.size(), 200u);
  EXPECT_EQ(a, test::csv_files_of(run(wan(GetParam()))));
}

TEST_P(EveryMethod, ComputeAndIdleTimeAddUpToTheRun) { test::expect_time_adds_up(run(wan(GetParam())), seconds(30)); }

INSTANTIATE_TEST_SUITE_P(Methods, EveryMethod, ::testing::ValuesIn(test::every_method_entry()));

// A method registered without an entry in the invariant suite fails here.
TEST(Registry, EveryRegisteredMethodIsInTheInvariantSuite) {
  std::set<std::string> covered = {"toy-push"};  // a test's own method: Registry.AToyMethod... runs its invariants
  for (const auto& e : test::every_method_entry()) {
    const nlohmann::json j = nlohmann::json::parse(e);
    covered.insert(j.is_string() ? j.get<std::string>() : j["name"].get<std::string>());
  }
  for (const std::string& name : method_names())
    EXPECT_TRUE(covered.count(name)) << name << " is registered but not in test::every_method_entry()";
}

// A toy protocol written in the test and added through the registry alone:
// after each iteration, a node with nothing of its own in flight pushes to
// a random neighbour that is up. No other file knows of it.
class ToyPush : public NodeLoops {
 public:
  explicit ToyPush(Cluster& c) : NodeLoops(c) {}

 private:
  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      if (c_.outgoing(n) == 0)
        if (const std::optional<NodeId> peer = c_.up_peer(n)) c_.send(n, *peer);
      compute(n);
    });
  }
};

void register_toy() {
  if (find_method_type("toy-push")) return;
  MethodType t;
  t.name = "toy-push";
  t.summary = "a test's own method";
  t.make = [](Cluster& c) { return std::make_unique<ToyPush>(c); };
  register_method(std::move(t));
}

TEST(Registry, AToyMethodAddedThroughTheRegistryAlonePassesEveryInvariant) {
  register_toy();
  for (const char* entry : {R"("toy-push")", R"({"name":"toy-push","merge":"gosgd","label":"t2"})"}) {
    MethodRun r = run(wan(entry));
    EXPECT_GT(r.recorder.transfers.size(), 100u) << entry;
    test::expect_merges_after_arrival(r);
    test::expect_counts_match_transfers(r);
    test::expect_time_adds_up(r, seconds(30));
    EXPECT_EQ(test::csv_files_of(r), test::csv_files_of(run(wan(entry))));
    for (const char* how : {"crash", "leave"}) test::expect_down_nodes_silent(nlohmann::json::parse(entry), how);
  }
  EXPECT_EQ(method_summary(run(wan(R"("toy-push")")))["traits"]["merge"], "average");
}

TEST(Registry, RefusesATakenNameAndARowWithoutAFactory) {
  MethodType dup;
  dup.name = "gossip";
  dup.make = [](Cluster& c) { return std::make_unique<ToyPush>(c); };
  EXPECT_THROW(register_method(dup), std::invalid_argument);
  MethodType empty;
  empty.name = "no-factory";
  EXPECT_THROW(register_method(empty), std::invalid_argument);
  EXPECT_EQ(find_method_type("no-factory"), nullptr);
}

TEST(GoSgd, SumWeightsMergesFollowTheHandComputation) {
  // Two nodes, p = 1: each pushes after every iteration (100 ms); a 1 kB
  // model takes 10 ms + 1 ms, so it arrives during the receiver's next
  // iteration and is merged at its end. ToyLearner: x_0 += 1, x_1 += 1.1.
  //   0.1 s: x = (1, 1.1); both halve their weight (0.5) and push.
  //   0.2 s: node 0 steps to 2, merges (0.5 * 2 + 0.5 * 1.1) / 1 = 1.55,
  //          weight 1, pushes 1.55 with 0.5; node 1 steps to 2.2, merges
  //          node 0's 1 from 0.1 s: 1.6, pushes it.
  //   0.3 s: node 0: 2.55 merged with 1.6 -> 2.075; node 1: 2.7 with 1.55 -> 2.125.
  nlohmann::json j = test::hand_scenario("complete", 2, {{"name", "gosgd"}, {"push_probability", 1}}, 0.35);
  j["eval"]["every_s"] = 0.1;
  Scenario sc = test::scenario_from(j);
  test::ToyLearner learner(2, 1000);
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  // Rows at 0, 0.1, 0.2, 0.3 s: accuracy is the mean of x, loss is x_0, the
  // node range is min and max.
  ASSERT_GE(r.recorder.metrics.size(), 4u);
  const Evaluation& e2 = r.recorder.metrics[2].eval;
  EXPECT_DOUBLE_EQ(e2.loss, 1.55);
  EXPECT_DOUBLE_EQ(e2.node_accuracy_max, 1.6);
  const Evaluation& e3 = r.recorder.metrics[3].eval;
  EXPECT_DOUBLE_EQ(e3.loss, 2.075);
  EXPECT_DOUBLE_EQ(e3.node_accuracy_max, 2.125);
  EXPECT_EQ(method_summary(r)["merges"], 4);
}

TEST(DPsgd, MetropolisHastingsMixingFollowsTheHandComputation) {
  // A path a - b - c (nodes 0, 1, 2): degrees 1, 2, 1, so W_01 = 1/3, W_00 =
  // 2/3; W_10 = W_12 = W_11 = 1/3; W_21 = 1/3, W_22 = 2/3. A 1 kB model takes
  // 11 ms over a link. Round 1: the steps give x = (1, 1.1, 1.2) at 0.1 s;
  // every node holds its neighbours' models at 0.111 s and mixes:
  //   x_0 = (2 * 1 + 1.1) / 3, x_1 = (1 + 1.1 + 1.2) / 3, x_2 = (2 * 1.2 + 1.1) / 3.
  // Round 2 steps at 0.211 s (+1, +1.1, +1.2) and mixes at 0.222 s.
  const fs::path file = fs::temp_directory_path() / ("gossipsim-path-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                            "links": [{"a": "a", "b": "b"}, {"a": "b", "b": "c"}]})";
  nlohmann::json j = test::hand_scenario("complete", 3, "dpsgd", 0.25);
  j["topology"] = {{"generator", "file"}, {"path", file.string()}};
  j["eval"]["every_s"] = 0.15;
  Scenario sc = test::scenario_from(j);
  fs::remove(file);
  test::ToyLearner learner(3, 1000);
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  ASSERT_GE(r.recorder.metrics.size(), 2u);
  const Evaluation& e = r.recorder.metrics[1].eval;  // at 0.15 s; loss is x_0
  const double x0 = (2 * 1 + 1.1) / 3, x1 = (1 + 1.1 + 1.2) / 3, x2 = (2 * 1.2 + 1.1) / 3;
  EXPECT_NEAR(e.loss, x0, 1e-12);
  EXPECT_NEAR(e.accuracy, (x0 + x1 + x2) / 3, 1e-12);
  EXPECT_NEAR(e.node_accuracy_max, x2, 1e-12);
  EXPECT_EQ(method_summary(r)["merges"], 8);  // 4 a round, 2 rounds by 0.25 s
  const double y0 = x0 + 1, y1 = x1 + 1.1, y2 = x2 + 1.2;
  const Evaluation& last = r.recorder.metrics.back().eval;  // at 0.25 s
  EXPECT_NEAR(last.loss, (2 * y0 + y1) / 3, 1e-12);
  EXPECT_NEAR(last.node_accuracy_max, (2 * y2 + y1) / 3, 1e-12);
  EXPECT_NEAR(last.accuracy, ((2 * y0 + y1) / 3 + (y0 + y1 + y2) / 3 + (2 * y2 + y1) / 3) / 3, 1e-12);
  // Rounds are synchronous per neighbourhood: every merge is 11 ms after its snapshot.
  for (const auto& t : r.recorder.transfers)
    if (t.merged) EXPECT_EQ(t.merge - t.snapshot, milliseconds(11));
}

TEST(GoSgd, WeightsSumToTheNodeCountAtAllTimes) {
  // Whenever the run stops, the nodes' weights and those of the models not
  // yet merged (in flight, in an inbox, or held by the method for a later
  // round) add up to N: halving and merging only move weight (churn, which
  // loses weight by design, is left out). So for push-sum (sgp, osgp).
  for (const char* method :
       {R"({"name":"gosgd","push_probability":0.5})", R"("sgp")", R"("osgp")", R"({"name":"osgp","tau":4})"})
    for (double stop : {0.37, 1.0, 4.2, 9.95}) {
      nlohmann::json j = wan(method);
      j["stop"]["virtual_s"] = stop;
      MethodRun r = run(j, 400'000, false);
      double total = 0;
      int unmerged = 0;
      for (const auto& n : r.recorder.nodes) total += n.weight;
      for (const auto& t : r.recorder.transfers)
        if (!t.merged) total += t.weight, ++unmerged;
      EXPECT_NEAR(total, 6.0, 1e-12) << method << " " << stop;
      EXPECT_GT(unmerged, 0) << method << " " << stop;  // some weight was in flight: the check has something to add
    }
}

fs::path path_of_three() {
  const fs::path file = fs::temp_directory_path() / ("gossipsim-path-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                            "links": [{"a": "a", "b": "b"}, {"a": "b", "b": "c"}]})";
  return file;
}

TEST(AdPsgd, PairwiseAveragingFollowsTheHandComputation) {
  // A path a - b - c: b is passive, a and c active; both ask b, which serves
  // one pair at a time. 100 ms iterations, a 1 kB model takes 11 ms.
  // ToyLearner: x_n += 1 + n/10.
  //   0.1: x = (1, 1.1, 1.2); a and c send their models to b (arrive 0.111,
  //        a's first), b is computing: it serves at its boundary.
  //   0.2: x = (2, 2.2, 2.4). b serves a: sends 2.2 to a, x_b = (2.2 + 1) / 2 = 1.6.
  //   0.211: the reply reaches a (merged at 0.3); b may serve again.
  //   0.3: a steps to 3, merges 2.2: 2.6, asks b again with 2.6. b steps to
  //        2.7, serves c: sends 2.7, x_b = (2.7 + 1.2) / 2 = 1.95. c steps to 3.6.
  //   0.4: a steps to 3.6 (its request is in progress). b steps to 3.05,
  //        serves a: sends 3.05, x_b = (3.05 + 2.6) / 2 = 2.825. c steps to
  //        4.8, merges 2.7: 3.75, asks b with 3.75.
  const fs::path file = path_of_three();
  nlohmann::json j = test::hand_scenario("complete", 3, "adpsgd", 0.45);
  j["topology"] = {{"generator", "file"}, {"path", file.string()}};
  j["eval"]["every_s"] = 0.25;
  Scenario sc = test::scenario_from(j);
  fs::remove(file);
  test::ToyLearner learner(3, 1000);
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  ASSERT_EQ(r.recorder.metrics.size(), 3u);  // 0, 0.25, 0.45 s
  const Evaluation& e = r.recorder.metrics[1].eval;
  EXPECT_NEAR(e.loss, 2, 1e-12);
  EXPECT_NEAR(e.accuracy, (2 + 1.6 + 2.4) / 3, 1e-12);
  const Evaluation& last = r.recorder.metrics[2].eval;
  EXPECT_NEAR(last.loss, 3.6, 1e-12);
  EXPECT_NEAR(last.accuracy, (3.6 + 2.825 + 3.75) / 3, 1e-12);
  EXPECT_NEAR(last.node_accuracy_min, 2.825, 1e-12);
  EXPECT_EQ(method_summary(r)["merges"], 5);
  EXPECT_EQ(method_summary(r)["transfers_started"], 7);
  // Only active nodes ask, only the passive one answers, and b's replies
  // never overlap: it serves one pair at a time.
  std::vector<std::pair<Time, Time>> replies;
  for (const auto& t : r.recorder.transfers) {
    if (t.src == 1)
      replies.push_back({t.start, t.finished ? t.finish : seconds(1)});
    else
      EXPECT_EQ(t.dst, 1);
  }
  ASSERT_EQ(replies.size(), 3u);
  for (size_t k = 1; k < replies.size(); ++k) EXPECT_GE(replies[k].first, replies[k - 1].second);
}

TEST(Sgp, PushSumOverTheExponentialGraphFollowsTheHandComputation) {
  // Three nodes: rounds alternate offsets 1 and 2 (2^1 <= N - 1 = 2). A
  // node halves its weight to send; the receiver merges by sum-weights.
  //   0.1: x = (1, 1.1, 1.2), weights 1/2; round 0: 0 -> 1, 1 -> 2, 2 -> 0.
  //   0.111: each merges its message and starts round 1:
  //          x = ((1 + 1.2) / 2, (1.1 + 1) / 2, (1.2 + 1.1) / 2) = (1.1, 1.05, 1.15), weights 1.
  //   0.211: x = (2.1, 2.15, 2.35); round 1: 0 -> 2, 1 -> 0, 2 -> 1.
  //   0.222: x = (2.125, 2.25, 2.225).
  nlohmann::json j = test::hand_scenario("complete", 3, "sgp", 0.25);
  j["eval"]["every_s"] = 0.15;
  Scenario sc = test::scenario_from(j);
  test::ToyLearner learner(3, 1000);
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  ASSERT_EQ(r.recorder.metrics.size(), 3u);
  const Evaluation& e = r.recorder.metrics[1].eval;  // 0.15 s
  EXPECT_NEAR(e.loss, 1.1, 1e-12);
  EXPECT_NEAR(e.node_accuracy_min, 1.05, 1e-12);
  EXPECT_NEAR(e.node_accuracy_max, 1.15, 1e-12);
  const Evaluation& last = r.recorder.metrics[2].eval;  // 0.25 s
  EXPECT_NEAR(last.loss, 2.125, 1e-12);
  EXPECT_NEAR(last.node_accuracy_max, 2.25, 1e-12);
  EXPECT_NEAR(last.accuracy, 2.2, 1e-12);
  EXPECT_EQ(method_summary(r)["merges"], 6);
  for (const auto& n : r.recorder.nodes) EXPECT_DOUBLE_EQ(n.weight, 1);
  std::set<std::pair<NodeId, NodeId>> round0, round1;
  for (const auto& t : r.recorder.transfers) {
    (t.snapshot < milliseconds(150) ? round0 : round1).insert({t.src, t.dst});
    EXPECT_EQ(t.merge - t.snapshot, milliseconds(11));
  }
  EXPECT_EQ(round0, (std::set<std::pair<NodeId, NodeId>>{{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_EQ(round1, (std::set<std::pair<NodeId, NodeId>>{{0, 2}, {1, 0}, {2, 1}}));
}

TEST(Osgp, OverlapMergesAtTheNextBoundaryWithinTheDelayBound) {
  // As above with tau = 1: nobody waits for round 0's message; it arrives
  // at 0.111 during the next iteration and is merged at 0.2, after the
  // sender of round 1 has halved its weight again:
  //   0.2: node 0 steps to 2 (weight 1/2), sends round 1 with weight 1/4,
  //        merges node 2's 1.2 (weight 1/2): (2/4 + 1.2/2) / (3/4) = 22/15.
  //   node 1: 2.2 merged with node 0's 1: (2.2/4 + 1/2) / (3/4) = 1.4.
  //   node 2: 2.4 merged with node 1's 1.1: (2.4/4 + 1.1/2) / (3/4) = 23/15.
  nlohmann::json j = test::hand_scenario("complete", 3, "osgp", 0.25);
  j["eval"]["every_s"] = 0.25;
  Scenario sc = test::scenario_from(j);
  test::ToyLearner learner(3, 1000);
  MethodRun r = run_method(sc, sc.methods[0], learner, RunOptions{});
  const Evaluation& e = r.recorder.metrics.back().eval;
  EXPECT_NEAR(e.loss, 22.0 / 15, 1e-12);
  EXPECT_NEAR(e.node_accuracy_min, 1.4, 1e-12);
  EXPECT_NEAR(e.node_accuracy_max, 23.0 / 15, 1e-12);
  for (const auto& n : r.recorder.nodes) EXPECT_DOUBLE_EQ(n.weight, 0.75);
  EXPECT_EQ(method_summary(r)["merges"], 3);
  EXPECT_EQ(method_summary(r)["iterations"], 6);  // 2 each: nobody waited
}

TEST(Osgp, NoNodeRunsMoreThanTauRoundsAheadOfAMessage) {
  // A node starts round k + 1 only once the messages of rounds <= k - tau
  // are merged. With local_steps 1 a round is an iteration: the message a
  // sender snapshots after its iteration k (0-based) is merged before its
  // receiver starts iteration k + tau + 1, and a message never merged means
  // the receiver never started it. Iteration starts come from the trace.
  for (int tau : {1, 2, 5}) {
    nlohmann::json j = wan(nlohmann::json({{"name", "osgp"}, {"tau", tau}}).dump());
    MethodRun r = run(j, 100'000, true);
    std::vector<std::vector<Time>> starts(6);
    for (const auto& e : r.recorder.trace)
      if (e.name == "compute") starts[e.node].push_back(e.ts);
    for (auto& s : starts) std::sort(s.begin(), s.end());
    int checked = 0, waited_for = 0;
    for (const auto& t : r.recorder.transfers) {
      const size_t deadline = t.sender_iterations_at_snapshot - 1 + tau + 1;
      if (deadline >= starts[t.dst].size()) continue;
      ++checked;
      ASSERT_TRUE(t.merged) << tau;
      EXPECT_LE(t.merge, starts[t.dst][deadline]) << tau;
      if (t.merge == starts[t.dst][deadline]) ++waited_for;  // the receiver was blocked on it
    }
    EXPECT_GT(checked, 500) << tau;
    EXPECT_GT(waited_for, 10) << tau;  // the bound binds: 100 kB models over 5-50 Mbit/s uplinks
  }
}

TEST(GoSgd, PushesWithTheGivenProbability) {
  // Each iteration pushes with probability p: over thousands of iterations
  // the share of iterations that pushed is p within sampling error.
  for (double p : {0.1, 0.5}) {
    nlohmann::json j = wan(R"("gosgd")");
    j["methods"][0] = {{"name", "gosgd"}, {"push_probability", p}, {"queue", "unbounded"}};
    MethodRun r = run(j, 10'000, false);
    const double n = method_summary(r)["iterations"].get<double>(),
                 pushes = method_summary(r)["transfers_started"].get<double>();
    ASSERT_GT(n, 2000);
    EXPECT_NEAR(pushes / n, p, 4 * std::sqrt(p * (1 - p) / n)) << p;
  }
}

TEST(GoSgd, TheQueueBoundsPushesInFlightAsHandComputed) {
  // Two nodes, p = 1 (a push drawn after every 100 ms iteration), a 1 MB
  // model takes 1.01 s. one: the push at 0.1 s is in flight until 1.11 s;
  // those drawn at 0.2 ... 1.1 s wait, each replacing the last, and one
  // leaves at 1.11 s with the newest model: 0.1, 1.11, 2.12, 3.13 s.
  // blocking: the node waits for its push, computes 1.11-1.21 s, pushes:
  // 0.1, 1.21, 2.32, 3.43 s. unbounded: a push every iteration.
  for (const auto& [queue, times] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"one", {100, 1110, 2120, 3130}}, {"blocking", {100, 1210, 2320, 3430}}}) {
    MethodRun r = hand_run(
        test::hand_scenario("complete", 2, {{"name", "gosgd"}, {"push_probability", 1}, {"queue", queue}}, 3.5));
    std::vector<std::tuple<NodeId, NodeId, int64_t>> expected;
    for (int64_t t : times) expected.insert(expected.end(), {{0, 1, t}, {1, 0, t}});
    auto got = starts(r);  // the two nodes' pushes at one time come in either order
    std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<2>(a), std::get<0>(a)) < std::tie(std::get<2>(b), std::get<0>(b));
    });
    EXPECT_EQ(got, expected) << queue;
    for (const auto& t : r.recorder.transfers) EXPECT_EQ(t.snapshot, t.start) << queue;  // the newest model
  }
  MethodRun r = hand_run(
      test::hand_scenario("complete", 2, {{"name", "gosgd"}, {"push_probability", 1}, {"queue", "unbounded"}}, 1.05));
  EXPECT_EQ(r.recorder.transfers.size(), 20u);  // 10 iterations each, a push after each
}

TEST(GoSgd, NoNodeHasTwoPushesInFlightUnlessUnbounded) {
  for (const char* queue : {"one", "blocking", "unbounded"}) {
    nlohmann::json j = wan(R"("gosgd")");
    j["methods"][0] = {{"name", "gosgd"}, {"push_probability", 0.5}, {"queue", queue}};
    MethodRun r = run(j, 400'000, false);
    int overlaps = 0;
    std::map<NodeId, std::vector<std::pair<Time, Time>>> out_of;
    for (const auto& t : r.recorder.transfers) out_of[t.src].emplace_back(t.start, t.finished ? t.finish : Time::max());
    for (auto& [node, spans] : out_of) {
      std::sort(spans.begin(), spans.end());
      for (size_t k = 1; k < spans.size(); ++k) overlaps += spans[k].first < spans[k - 1].second;
    }
    if (std::string(queue) == "unbounded")
      EXPECT_GT(overlaps, 10);
    else
      EXPECT_EQ(overlaps, 0) << queue;
  }
}

// Two regions of 4 (n0-n3 in A, n4-n7 in B) behind two routers rA and rB,
// 100 Mbit/s to each router and a thin link between them (2 Mbit/s, 50 ms):
// a topology file written for the test, named by `name`.
fs::path two_regions_file(const std::string& name) {
  const fs::path file = fs::temp_directory_path() / ("gossipsim-" + name + "-" + std::to_string(::getpid()) + ".json");
  nlohmann::json t = {{"nodes", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
  for (int n = 0; n < 8; ++n) {
    t["nodes"].push_back({{"name", fmt::format("n{}", n)}, {"region", n < 4 ? "A" : "B"}});
    t["links"].push_back({{"a", fmt::format("n{}", n)}, {"b", n < 4 ? "rA" : "rB"}, {"bandwidth_mbps", 100}});
  }
  t["nodes"].push_back({{"name", "rA"}, {"router", true}});
  t["nodes"].push_back({{"name", "rB"}, {"router", true}});
  t["links"].push_back({{"a", "rA"}, {"b", "rB"}, {"bandwidth_mbps", 2}, {"latency_ms", 50}});
  std::ofstream(file) << t.dump();
  return file;
}

TEST(AdPsgd, ARegionBipartitionDoesNotFallOnTheCutBetweenRegions) {
  // Two regions of 4 (n0-n3 in A, n4-n7 in B) behind two routers: every
  // node is every node's peer. max-cut colours n0 alone, then the local
  // improvement flips n1, n2, n3 (each had more peers of its own colour):
  // the colours are the regions, and every averaging crosses the cut.
  // regions alternates within each region: n0, n2, n4, n6 active, the odd
  // ones passive; each node has 3 peers of its colour of 7, so nothing
  // moves: every pair is even-odd, and some stay within a region.
  const fs::path file = two_regions_file("regions");
  for (const char* how : {"max-cut", "regions"}) {
    nlohmann::json j = wan(R"("adpsgd")");
    j["topology"] = {{"generator", "file"}, {"path", file.string()}};
    j["methods"][0] = {{"name", "adpsgd"}, {"bipartition", how}};
    MethodRun r = run(j, 100'000, false);
    int crossing = 0, within = 0;
    for (const auto& t : r.recorder.transfers) {
      ((t.src < 4) != (t.dst < 4) ? crossing : within) += 1;
      if (std::string(how) == "regions") EXPECT_NE(t.src % 2, t.dst % 2) << t.src << " " << t.dst;
    }
    ASSERT_GT(crossing + within, 20) << how;
    if (std::string(how) == "max-cut")
      EXPECT_EQ(within, 0);
    else
      EXPECT_GT(within, 10);
  }
  fs::remove(file);
  nlohmann::json j = wan(R"("adpsgd")");
  j["methods"][0] = {{"name", "adpsgd"}, {"bipartition", "halves"}};
  const std::string refused = test::refusal(j);
  EXPECT_NE(refused.find("/methods/0/bipartition: expected one of max-cut, regions"), std::string::npos) << refused;
}

TEST(Gossip, ABlockedSenderNeverComputes) {
  MethodRun r = run(wan(R"("gossip")"));
  std::map<NodeId, std::vector<std::pair<Time, Time>>> sending;
  for (const auto& t : r.recorder.transfers) sending[t.src].emplace_back(t.start, t.finished ? t.finish : Time::max());
  int spans = 0;
  for (const auto& e : r.recorder.trace) {
    if (e.ph != 'X' || e.track != kComputeTrack) continue;
    ++spans;
    for (auto [s, f] : sending[e.node]) EXPECT_TRUE(e.ts + e.dur <= s || e.ts >= f) << "node " << e.node;
  }
  EXPECT_GT(spans, 100);
}

TEST(GossipScheduled, OracleNeverStartsATransferToABusyPeer) {
  for (const char* m : {R"("gossip-scheduled")", R"({"name":"gossip-scheduled","selection":"random-enabled"})",
                        R"({"name":"gossip-scheduled","selection":"weighted"})"}) {
    MethodRun r = run(wan(m));
    std::map<NodeId, std::vector<std::pair<Time, Time>>> into, out_of;
    for (const auto& t : r.recorder.transfers) {
      into[t.dst].emplace_back(t.start, t.finished ? t.finish : Time::max());
      out_of[t.src].emplace_back(t.start, t.finished ? t.finish : Time::max());
    }
    for (auto* side : {&into, &out_of})
      for (auto& [node, spans] : *side) {
        std::sort(spans.begin(), spans.end());
        for (size_t k = 1; k < spans.size(); ++k)
          EXPECT_GE(spans[k].first, spans[k - 1].second) << m << " node " << node;
      }
  }
}

TEST(GossipOverlap, SendersDoShareReceivers) {
  // The naive overlap knows nothing of receivers: some transfers into one node overlap.
  MethodRun r = run(wan(R"("gossip-overlap")"));
  std::map<NodeId, std::vector<std::pair<Time, Time>>> into;
  for (const auto& t : r.recorder.transfers)
    if (t.finished) into[t.dst].emplace_back(t.start, t.finish);
  int overlaps = 0;
  for (auto& [node, spans] : into) {
    std::sort(spans.begin(), spans.end());
    for (size_t k = 1; k < spans.size(); ++k) overlaps += spans[k].first < spans[k - 1].second;
  }
  EXPECT_GT(overlaps, 0);
}

TEST(GossipOverlap, LinkFreeSendsTheMomentItsTransferEnds) {
  // Two nodes, 100 ms iterations, a 1 MB model takes 1.01 s each way.
  // iteration-end: sent at 0.1 s, it ends at 1.11 s; the next send waits
  // for the iteration that ends at 1.2 s: 0.1, 1.2, 2.3, 3.4 s.
  // link-free: the next send starts at 1.11 s itself: 0.1, 1.11, 2.12, 3.13 s,
  // each with the model of the last finished iteration (snapshot = start).
  for (const auto& [ready, times] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"iteration-end", {100, 1200, 2300, 3400}}, {"link-free", {100, 1110, 2120, 3130}}}) {
    MethodRun r = hand_run(test::hand_scenario("complete", 2, {{"name", "gossip-overlap"}, {"ready", ready}}, 3.5));
    std::vector<std::tuple<NodeId, NodeId, int64_t>> expected;
    for (int64_t t : times) expected.insert(expected.end(), {{0, 1, t}, {1, 0, t}});
    EXPECT_EQ(starts(r), expected) << ready;
    for (const auto& t : r.recorder.transfers) EXPECT_EQ(t.snapshot, t.start) << ready;
    EXPECT_EQ(method_summary(r)["traits"]["ready"], ready);
  }
  // The default is iteration-end, and the summary says so.
  EXPECT_EQ(method_summary(hand_run(test::hand_scenario("complete", 2, "gossip-overlap", 1)))["traits"]["ready"],
            "iteration-end");
}

TEST(GossipScheduled, LinkFreePlansTheMomentItsTransferEnds) {
  // A line n0 - n1 - n2: 1 MB takes 1.01 s on n0-n1 (10 ms) and 1.02 s on
  // n1-n2 (20 ms). At 0.1 s the three plan in order: n0 -> n1 (0.1-1.11);
  // n1 -> n0 (finish 1.11 beats 1.12 to n2); n2 -> n1 whose receiving side
  // is booked until 1.11 (1.11-2.13).
  // link-free, at 1.11: n0 plans at once, n1's receiving side is booked
  // until 2.13 (n0 -> n1 at 2.13); n1 plans at once, to n0 (1.11-2.12, which
  // beats 2.13 to n2), and again at 2.12, to n0 (3.13 beats 3.14).
  // iteration-end: both plan at the iteration's end, 1.2: n0 -> n1 at 2.13;
  // n1 -> n0 at 1.2 (2.21), then at the iteration end after it, 2.3.
  const fs::path line = fs::temp_directory_path() / ("gossipsim-line3-" + std::to_string(::getpid()) + ".json");
  std::ofstream(line) << R"({"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
    "links": [{"a": "a", "b": "b", "bandwidth_mbps": 8, "latency_ms": 10},
              {"a": "b", "b": "c", "bandwidth_mbps": 8, "latency_ms": 20}]})";
  const std::vector<std::tuple<NodeId, NodeId, int64_t>> link_free = {{0, 1, 100},  {1, 0, 100},  {2, 1, 1110},
                                                                      {1, 0, 1110}, {1, 0, 2120}, {0, 1, 2130}};
  const std::vector<std::tuple<NodeId, NodeId, int64_t>> iteration_end = {{0, 1, 100},  {1, 0, 100},  {2, 1, 1110},
                                                                          {1, 0, 1200}, {0, 1, 2130}, {1, 0, 2300}};
  for (const auto& [ready, expected] :
       std::vector<std::pair<std::string, std::vector<std::tuple<NodeId, NodeId, int64_t>>>>{
           {"link-free", link_free}, {"iteration-end", iteration_end}}) {
    nlohmann::json j = test::hand_scenario("complete", 3, {{"name", "gossip-scheduled"}, {"ready", ready}}, 2.5);
    j["topology"] = {{"generator", "file"}, {"path", line.string()}};
    MethodRun r = hand_run(j);
    EXPECT_EQ(starts(r), expected) << ready;
    for (const auto& t : r.recorder.transfers)
      if (t.finished) EXPECT_EQ((t.finish - t.start).ns() / 1'000'000, t.src + t.dst == 3 ? 1020 : 1010);
  }
  fs::remove(line);
}

// The peers node `src` sent to, in the order of its transfers.
std::vector<NodeId> receivers_of(const MethodRun& r, NodeId src) {
  std::vector<NodeId> out;
  for (const auto& t : r.recorder.transfers)
    if (t.src == src) out.push_back(t.dst);
  return out;
}

TEST(GossipScheduled, MixAndRotateFollowTheHandComputationOnAStar) {
  // A star: hub a, leaves b, c, d at 10, 15 and 100 ms; 1 MB over 8 Mbit/s
  // links takes 1.01, 1.015 and 1.1 s. The leaves send only to the hub (its
  // receiving side), so every plan of the hub finds b, c and d free and
  // f_j - now = est(a, j) = those times (observed = nominal, alone on each
  // link). min-finish: always b. mix, slack 0.05: the cheap set is b, c
  // (1.015 <= 1.05 x 1.01 = 1.0605 < 1.1), least recently planned first,
  // never-planned in finish order: b, c, b, c. slack 0.1 (1.111 >= 1.1) and
  // slack 1e6: all three in turn. rotate 1: b, then the best but b: c, then
  // the best but c: b. rotate 2: b, c, d. rotate 5, more than the peers:
  // every peer is out, so the least recently planned stays: b, c, d again.
  const fs::path star = test::process_temp_dir("methods") / "star.json";
  std::ofstream(star) << R"({"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}],
    "links": [{"a": "a", "b": "b", "bandwidth_mbps": 8, "latency_ms": 10},
              {"a": "a", "b": "c", "bandwidth_mbps": 8, "latency_ms": 15},
              {"a": "a", "b": "d", "bandwidth_mbps": 8, "latency_ms": 100}]})";
  const std::vector<NodeId> b_only = {1, 1, 1, 1, 1, 1}, b_c = {1, 2, 1, 2, 1, 2}, b_c_d = {1, 2, 3, 1, 2, 3};
  for (const auto& [options, expected] :
       std::vector<std::pair<nlohmann::json, std::vector<NodeId>>>{{nlohmann::json::object(), b_only},
                                                                   {{{"selection", "mix"}, {"slack", 0.05}}, b_c},
                                                                   {{{"selection", "mix"}, {"slack", 0.1}}, b_c_d},
                                                                   {{{"selection", "mix"}, {"slack", 1e6}}, b_c_d},
                                                                   {{{"rotate", 1}}, b_c},
                                                                   {{{"rotate", 2}}, b_c_d},
                                                                   {{{"rotate", 5}}, b_c_d}}) {
    nlohmann::json m = {{"name", "gossip-scheduled"}};
    m.update(options);
    nlohmann::json j = test::hand_scenario("complete", 4, m, 8);
    j["topology"] = {{"generator", "file"}, {"path", star.string()}};
    MethodRun r = hand_run(j);
    std::vector<NodeId> sent = receivers_of(r, 0);
    ASSERT_GE(sent.size(), expected.size()) << m.dump();
    sent.resize(expected.size());
    EXPECT_EQ(sent, expected) << m.dump();
    const std::vector<int64_t> latency_ms = {0, 10, 15, 100};
    for (const auto& t : r.recorder.transfers)
      if (t.finished && t.src == 0) EXPECT_EQ((t.finish - t.start).ns() / 1'000'000, 1000 + latency_ms[t.dst]);
  }
}

TEST(GossipScheduled, RotateAndAWideMixNeverRepeatAPeerWithinTheirWindow) {
  // Six nodes, a complete graph: five peers each. rotate k: no k + 1
  // consecutive sends of a node repeat a peer; mix with an unbounded slack
  // sends round the five. min-finish does repeat (the test has teeth).
  auto repeats_within = [](const std::vector<NodeId>& sent, size_t window) {
    int repeats = 0;
    for (size_t k = 0; k < sent.size(); ++k)
      for (size_t l = k + 1; l < std::min(sent.size(), k + window); ++l) repeats += sent[k] == sent[l];
    return repeats;
  };
  for (const auto& [entry, window] : std::vector<std::pair<std::string, size_t>>{
           {R"({"name":"gossip-scheduled","rotate":3})", 4},
           {R"({"name":"gossip-scheduled","rotate":1,"selection":"weighted"})", 2},
           {R"({"name":"gossip-scheduled","selection":"mix","slack":1e6})", 5}}) {
    MethodRun r = run(wan(entry), 400'000, false);
    for (NodeId n = 0; n < 6; ++n) {
      const std::vector<NodeId> sent = receivers_of(r, n);
      EXPECT_GT(sent.size(), 10u) << entry;
      EXPECT_EQ(repeats_within(sent, window), 0) << entry << " node " << n;
    }
  }
  MethodRun plain = run(wan(R"("gossip-scheduled")"), 400'000, false);
  int repeats = 0;
  for (NodeId n = 0; n < 6; ++n) repeats += repeats_within(receivers_of(plain, n), 4);
  EXPECT_GT(repeats, 10);
}

TEST(GossipScheduled, MixWithNoSlackIsMinFinish) {
  // With no slack the cheap set is min-finish's ties, so on a network
  // without ties every choice, and so every transfer, is the same.
  const MethodRun a = run(wan(R"("gossip-scheduled")"), 400'000, false);
  const MethodRun b = run(wan(R"({"name":"gossip-scheduled","selection":"mix","slack":0})"), 400'000, false);
  EXPECT_GT(a.recorder.transfers.size(), 100u);
  EXPECT_EQ(starts(a), starts(b));
  // A slack makes a difference on the same network.
  EXPECT_NE(starts(a), starts(run(wan(R"({"name":"gossip-scheduled","selection":"mix"})"), 400'000, false)));
}

TEST(GossipScheduled, ACrossRegionFloorHoldsOnEveryPrefixOfANodesSends) {
  // Two regions of 4 behind two routers joined by a thin link: min-finish
  // keeps within its region. With cross_region_floor p every node's first n
  // sends hold at least p n that cross, for every n.
  const fs::path file = two_regions_file("floor");
  auto prefixes_below = [&](const nlohmann::json& method, double floor) {
    nlohmann::json j = wan("\"gossip-scheduled\"");
    j["topology"] = {{"generator", "file"}, {"path", file.string()}};
    j["methods"][0] = method;
    MethodRun r = run(j, 100'000, false);
    int below = 0;
    for (NodeId n = 0; n < 8; ++n) {
      const std::vector<NodeId> sent = receivers_of(r, n);
      EXPECT_GT(sent.size(), 5u) << method.dump();
      int crossing = 0;
      for (size_t k = 0; k < sent.size(); ++k) {
        crossing += (sent[k] < 4) != (n < 4);
        below += crossing < floor * static_cast<double>(k + 1);
      }
    }
    return below;
  };
  EXPECT_GT(prefixes_below({{"name", "gossip-scheduled"}}, 0.25), 8);
  EXPECT_EQ(prefixes_below({{"name", "gossip-scheduled"}, {"cross_region_floor", 0.25}}, 0.25), 0);
  EXPECT_EQ(prefixes_below({{"name", "gossip-scheduled"}, {"cross_region_floor", 1}}, 1), 0);
  EXPECT_EQ(prefixes_below({{"name", "gossip-scheduled"}, {"cross_region_floor", 0.5}, {"rotate", 2}}, 0.5), 0);
  fs::remove(file);
}

TEST(SendRule, OnlyTheOverlappingGossipsTakeReady) {
  nlohmann::json j = test::hand_scenario("complete", 2, {{"name", "gossip"}, {"ready", "link-free"}}, 1);
  std::string refused = test::refusal(j);
  EXPECT_NE(refused.find("/methods/0/ready: unknown key"), std::string::npos) << refused;
  j["methods"][0] = {{"name", "gossip-overlap"}, {"ready", "asap"}};
  refused = test::refusal(j);
  EXPECT_NE(refused.find("/methods/0/ready: expected one of iteration-end, link-free"), std::string::npos) << refused;
  j["methods"][0] = {{"name", "gossip-scheduled"}, {"ready", 1}};
  EXPECT_NE(test::refusal(j), "accepted");
}

TEST(AllReduce, StepTimeMatchesItsClosedFormOnAHomogeneousRing) {
  // N = 4, model 4 MB: chunks of 1 MB over links of 8 Mbit/s (1 MB/s) with
  // 10 ms latency. Step = 100 ms + 2 (N - 1) (10 ms + 1 s) = 6.16 s.
  nlohmann::json j = wan(R"("allreduce")");
  j["topology"] = {{"generator", "ring"}, {"nodes", 4}};
  j["network"] = {{"access", {{"up_mbps", 1000}, {"down_mbps", 1000}}},
                  {"links", {{"latency_ms", 10}, {"bandwidth_mbps", 8}}}};
  j["compute"] = {{"iteration_ms", 100}};
  MethodRun r = run(j, 4'000'000);
  const auto& t = r.recorder.transfers;
  ASSERT_GE(t.size(), 48u);
  EXPECT_EQ(t[0].start, milliseconds(100));
  EXPECT_EQ(t[0].finish, milliseconds(1110));
  EXPECT_EQ(t[23].finish, milliseconds(6160));
  EXPECT_EQ(t[24].start, milliseconds(6260));    // the next step's first chunk
  EXPECT_EQ(r.recorder.nodes[0].iterations, 5);  // steps started at 0, 6.16, ..., 24.64 s
}

TEST(Golden, EventTimestampsMatchTheCommittedReference) {
  const fs::path src = GOSSIPSIM_SOURCE_DIR;
  nlohmann::json j = JsonReader::parse_file((src / "tests/golden/golden.json").string());
  Scenario sc = parse_scenario(j, (src / "tests/golden/golden.json").string());
  std::string produced;
  for (const auto& m : sc.methods) {
    NullLearner learner(learner_nodes(sc, m), bytes(320'808));
    MethodRun r = run_method(sc, m, learner, {});
    fs::path tmp = fs::temp_directory_path() / ("gossipsim-golden-" + std::to_string(::getpid()));
    write_transfers_csv(tmp, r);
    std::ifstream in(tmp);
    produced += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::remove(tmp);
  }
  const fs::path reference = src / "tests/golden/golden.transfers.csv";
  if (std::getenv("GOSSIPSIM_UPDATE_GOLDEN")) std::ofstream(reference) << produced;
  std::ifstream in(reference);
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(produced, expected);
}

}  // namespace
}  // namespace gossipsim
