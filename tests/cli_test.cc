// The command line, end to end: the binary is run on files the test writes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::Result;

Result gossipsim(const std::string& args) {
  Result r;
  r.code = test::run_shell(std::string(GOSSIPSIM_BINARY) + " " + args, &r.out);
  return r;
}

// This process's folder for test files, removed at exit.
fs::path temp(const std::string& name) { return test::process_temp_dir("cli") / name; }

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    std::string c;
    while (std::getline(l, c, ',')) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

TEST(NetReplay, ReproducesTheClosedFormsToTheNanosecond) {
  fs::path topo = temp("dumbbell.json"), replay = temp("replay.json"), out = temp("replay.csv");
  std::ofstream(topo) << test::kDumbbell;
  nlohmann::json r = {{"topology", {{"generator", "file"}, {"path", topo.string()}}},
                      {"transfers",
                       {
                           // one flow alone: 10 ms + 1 MB / 1 MB/s
                           {{"src", 0}, {"dst", 1}, {"bytes", 1000000}, {"start_s", 0}},
                           // two flows sharing the middle link from 10 s: each at 0.5 MB/s; the
                           // short one ends at 10 + 0.01 + 1 = 11.01 s, the long one speeds up and
                           // ends at 11.01 + 0.5 = 11.51 s
                           {{"src", 0}, {"dst", 1}, {"bytes", 1000000}, {"start_s", 10}},
                           {{"src", 2}, {"dst", 1}, {"bytes", 500000}, {"start_s", 10}},
                           // max-min: from 20 s a->d is held to 0.5 MB/s by d's downlink
                           // (4 Mbit/s), so c->b gets the other 0.5 MB/s of the middle link,
                           // not an equal split of what is left
                           {{"src", 0}, {"dst", 3}, {"bytes", 500000}, {"start_s", 20}},
                           {{"src", 2}, {"dst", 1}, {"bytes", 500000}, {"start_s", 20}},
                           {{"src", 0}, {"dst", 1}, {"control", true}, {"start_s", 30}},
                       }}};
  std::ofstream(replay) << r.dump();
  Result res = gossipsim("net replay " + replay.string() + " --out " + out.string());
  ASSERT_EQ(res.code, 0) << res.out;
  std::ifstream in(out);
  auto rows = csv_rows(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0][6], "finish_s");
  EXPECT_EQ(rows[1][6], "1.010000000");
  EXPECT_EQ(rows[2][6], "11.510000000");
  EXPECT_EQ(rows[3][6], "11.010000000");
  EXPECT_EQ(rows[4][6], "21.010000000");
  EXPECT_EQ(rows[5][6], "21.010000000");
  EXPECT_EQ(rows[6][6], "30.010000000");
  fs::remove_all(topo.parent_path());
}

TEST(NetReplay, TheTcpModelFollowsLv08ByHand) {
  // The dumbbell's a -> b alone under /network/model tcp: 13.01 x 10 ms of
  // latency phase, then 1 MB at 0.97 x 1 MB/s (the window bound,
  // 4194304 B / 20 ms, is far above). Control messages keep the plain
  // latency: they model no TCP transfer.
  fs::path topo = temp("dumbbell.json"), replay = temp("replay.json"), out = temp("replay.csv");
  std::ofstream(topo) << test::kDumbbell;
  nlohmann::json r = {{"topology", {{"generator", "file"}, {"path", topo.string()}}},
                      {"network", {{"model", "tcp"}}},
                      {"transfers",
                       {{{"src", 0}, {"dst", 1}, {"bytes", 1000000}, {"start_s", 0}},
                        {{"src", 0}, {"dst", 1}, {"control", true}, {"start_s", 30}}}}};
  std::ofstream(replay) << r.dump();
  Result res = gossipsim("net replay " + replay.string() + " --out " + out.string());
  ASSERT_EQ(res.code, 0) << res.out;
  std::ifstream in(out);
  auto rows = csv_rows(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][6], fmt::format("{:.9f}", (130'100'000 + std::llround(1e6 * 1e9 / 0.97e6)) / 1e9));
  EXPECT_EQ(rows[2][6], "30.010000000");
  r["network"] = {{"tcp", {{"window_bytes", 1000}}}};
  std::ofstream(replay) << r.dump();
  res = gossipsim("net replay " + replay.string() + " --out " + out.string() + "-2");
  EXPECT_EQ(res.code, 2);
  EXPECT_NE(res.out.find("/network/tcp: expected these options with \"model\": \"tcp\" only"), std::string::npos)
      << res.out;
  fs::remove_all(topo.parent_path());
}

TEST(NetReplay, Ns3ReplaysAFlowNoFasterThanPhysicsAllows) {
  // bench/ns3_replay exists only where ns-3 is installed. A 10 MB flow over
  // 100 Mbit/s and 0.5 ms: no packet-level run can beat the flow model's
  // latency + bytes / capacity (0.8005 s); TCP/IP headers (40 of every
  // 1,488 bytes) and slow start over so short a round trip cost a few
  // percent, not more than 25%. A transfer of 0 bytes ends at its start.
  const fs::path ns3 = fs::path(GOSSIPSIM_BINARY).parent_path() / "bench" / "ns3_replay";
  if (!fs::exists(ns3)) GTEST_SKIP() << "ns-3 is not installed (libns3-dev): bench/ns3_replay was not built";
  fs::path topo = temp("pair.json"), replay = temp("replay.json");
  std::ofstream(topo)
      << R"({"nodes":[{"name":"a","up_mbps":100,"down_mbps":100},{"name":"b","up_mbps":100,"down_mbps":100}],
    "links":[{"a":"a","b":"b","bandwidth_mbps":100,"latency_ms":0.5}]})";
  nlohmann::json r = {{"topology", {{"generator", "file"}, {"path", topo.string()}}},
                      {"transfers",
                       {{{"src", 0}, {"dst", 1}, {"bytes", 10000000}, {"start_s", 1}},
                        {{"src", 1}, {"dst", 0}, {"bytes", 0}, {"start_s", 2}}}}};
  std::ofstream(replay) << r.dump();
  std::string out;
  ASSERT_EQ(test::run_shell(ns3.string() + " " + replay.string(), &out), 0) << out;
  auto rows = csv_rows(out);
  ASSERT_EQ(rows.size(), 3u) << out;
  const double duration = std::stod(rows[1][7]);
  EXPECT_GE(duration, 0.8005) << out;
  EXPECT_LE(duration, 0.8005 * 1.25) << out;
  EXPECT_EQ(rows[2][6], "2.000000000") << out;
  fs::remove_all(topo.parent_path());
}

TEST(Cli, BadScenariosGiveTheirPathAndANonZeroExit) {
  fs::path bad = temp("bad.json");
  std::ofstream(bad) << R"({"name":"x","topology":{"generator":"ring","nodes":3},"workload":{"dataset":"synthetic"},
    "methods":["gossip","teleport"],"stop":{"virtual_s":1}})";
  Result r = gossipsim("validate " + bad.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(bad.string() + ": /methods/1: expected one of gossip"), std::string::npos) << r.out;
  std::ofstream(bad) << R"({"name":"x", "topology": )";
  r = gossipsim("validate " + bad.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("valid JSON"), std::string::npos) << r.out;
  r = gossipsim("validate /nonexistent.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("/nonexistent.json: cannot open"), std::string::npos) << r.out;
  fs::remove_all(bad.parent_path());
}

#ifdef GOSSIPSIM_KERNELS_MODULE
// LibTorch is loaded, with the kernels' module, by the commands that train
// and by nothing else (the dynamic loader's own log says which files it
// opened); without its module beside it, a command that trains says so in
// one line naming the file, and one that does not train still runs.
TEST(Cli, OnlyCommandsThatTrainLoadLibTorch) {
  const fs::path bad = temp("unfinished.json");
  std::ofstream(bad) << "{\"name\":";
  const std::string scenario = std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/quickstart.json";
  const std::string module = fs::path(GOSSIPSIM_KERNELS_MODULE).filename().string();
  auto opened = [&](const std::string& args) {
    Result r;
    r.code = test::run_shell("LD_DEBUG=files " + std::string(GOSSIPSIM_BINARY) + " " + args, &r.out);
    return r;
  };
  Result refused = opened("validate " + bad.string());
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_EQ(refused.out.find(module), std::string::npos) << refused.out;
  EXPECT_EQ(refused.out.find("libtorch"), std::string::npos) << refused.out;
  Result timeline = opened("validate " + scenario + " --kernels none");
  EXPECT_EQ(timeline.code, 0) << timeline.out;
  EXPECT_EQ(timeline.out.find(module), std::string::npos) << timeline.out;
  EXPECT_EQ(timeline.out.find("libtorch"), std::string::npos) << timeline.out;
  Result trains = opened("validate " + scenario);  // the model's size is counted on LibTorch's model
  EXPECT_EQ(trains.code, 0) << trains.out;
  EXPECT_NE(trains.out.find(module), std::string::npos) << trains.out;
  EXPECT_NE(trains.out.find("libtorch_cpu"), std::string::npos) << trains.out;

  const fs::path lonely = temp("lonely");
  fs::create_directories(lonely);
  fs::copy_file(GOSSIPSIM_BINARY, lonely / "gossipsim", fs::copy_options::overwrite_existing);
  Result missing;
  missing.code = test::run_shell((lonely / "gossipsim").string() + " validate " + scenario, &missing.out);
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_NE(missing.out.find("cannot load the kernels"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find((lonely / module).string()), std::string::npos) << missing.out;
  EXPECT_EQ(std::count(missing.out.begin(), missing.out.end(), '\n'), 1) << missing.out;
  missing.code =
      test::run_shell((lonely / "gossipsim").string() + " validate " + scenario + " --kernels none", &missing.out);
  EXPECT_EQ(missing.code, 0) << missing.out;
  fs::remove_all(lonely);
  fs::remove(bad);
}
#endif

TEST(Cli, MissingDatasetFailsWithoutLeavingAResultFolder) {
  fs::path sc = temp("missing.json"), out = temp("results");
  std::ofstream(sc) << R"({"name":"x","topology":{"generator":"ring","nodes":3},
    "workload":{"dataset":"fashion-mnist","data_dir":"/nonexistent/data"},"methods":["gossip"],"stop":{"virtual_s":1}})";
  Result r = gossipsim("run " + sc.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("dataset-fashion-mnist"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find("results"), std::string::npos) << e.path();
  fs::remove_all(sc.parent_path());
}

// A staging folder whose run has ended is removed by the next run into the
// same folder, also when that run's process is a zombie not yet reaped (a
// point run killed with its sweep, before init comes by); one whose run is
// alive is left alone.
TEST(Cli, StagingOfEndedRunsIsRemovedEvenBeforeTheyAreReaped) {
  const fs::path out = temp("staged");
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  ASSERT_GT(zombie, 0);
  ASSERT_TRUE(test::wait_until(
      [&] {
        std::ifstream stat("/proc/" + std::to_string(zombie) + "/stat");
        std::string text;
        std::getline(stat, text);
        return text.find(") Z") != std::string::npos;
      },
      10));
  const fs::path dead = out.string() + ".tmp-" + std::to_string(zombie);
  const fs::path alive = out.string() + ".tmp-" + std::to_string(::getpid());
  fs::create_directories(dead);
  fs::create_directories(alive);
  Result r =
      gossipsim("run " + std::string(GOSSIPSIM_SOURCE_DIR) +
                "/scenarios/quickstart.json --kernels none --methods gossip --set /stop/virtual_s=1 --quiet --out " +
                out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  ::waitpid(zombie, nullptr, 0);
  fs::remove_all(out);
  fs::remove_all(alive);
}

TEST(Cli, NewMethodsRunOnTheQuickstartAndTheTeachingScenarios) {
  for (const char* scenario : {"quickstart.json", "teaching/synthetic-4.json", "teaching/hotspot.json"}) {
    fs::path out = temp("new-methods");
    Result r = gossipsim(
        "run " + std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/" + scenario +
        " --kernels none --quiet --set '/methods=[\"gosgd\", \"dpsgd\", \"adpsgd\", \"sgp\", \"osgp\"]' --out " +
        out.string() + " --set /stop/virtual_s=10");
    ASSERT_EQ(r.code, 0) << scenario << ": " << r.out;
    for (const char* m : {"gosgd", "dpsgd", "adpsgd", "sgp", "osgp"}) {
      std::ifstream in(out / m / "summary.json");
      auto s = nlohmann::json::parse(in);
      EXPECT_GT(s["merges"].get<int64_t>(), 10) << scenario << " " << m;
    }
    fs::remove_all(out);
  }
}

TEST(Cli, TimelineOnlyRunWritesEveryOutput) {
  fs::path out = temp("timeline");
  Result r = gossipsim("run " + std::string(GOSSIPSIM_SOURCE_DIR) +
                       "/scenarios/teaching/synthetic-4.json --kernels none --trace --quiet --out " + out.string() +
                       " --set /stop/virtual_s=5");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* m : {"gossip", "gossip-overlap", "gossip-scheduled", "allreduce", "single"})
    for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv", "summary.json", "trace.json"})
      EXPECT_TRUE(fs::exists(out / m / f)) << m << "/" << f;
  std::ifstream trace(out / "gossip" / "trace.json");
  auto j = nlohmann::json::parse(trace);
  EXPECT_GT(j["traceEvents"].size(), 50u);
  std::ifstream s(out / "summary.json");
  auto summary = nlohmann::json::parse(s);
  EXPECT_EQ(summary["methods"].size(), 5u);
  fs::remove_all(out.parent_path());
}

TEST(Cli, TopologyPrintsDot) {
  fs::path spec = temp("topo.json");
  std::ofstream(spec) << R"({"generator":"torus","rows":2,"cols":3})";
  Result r = gossipsim("topology " + spec.string() + " --dot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("graph topology {"), std::string::npos);
  EXPECT_NE(r.out.find("latency_ms=10"), std::string::npos);
  fs::remove_all(spec.parent_path());
}

// FNV-1a, 64 bits: the digest tests/golden/transfers-digests.json holds.
std::string fnv1a64(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

// The network and the runner must keep results to the nanosecond unless a
// change means to move them: the quickstart (every method, both flow
// models), the bench scenarios (one geo group of hundreds of flows; 1,000
// nodes), a changing WAN and churn (crashes, leaves, nodes that start down,
// every method) are rerun and every CSV a method writes is compared with
// digests written by an earlier binary (the file says which).
TEST(Cli, OutputsMatchTheCommittedDigests) {
  const fs::path src = GOSSIPSIM_SOURCE_DIR, file = src / "tests/golden/transfers-digests.json";
  nlohmann::json golden = JsonReader::parse_file(file.string());
  const bool update = std::getenv("GOSSIPSIM_UPDATE_GOLDEN") != nullptr;
  for (auto& c : golden["cases"]) {
    const std::string name = c["name"];
    std::string args;
    for (const auto& a : c["args"]) args += " '" + a.get<std::string>() + "'";  // paths relative to the source tree
    fs::path out = temp("digests");
    Result r;
    r.code = test::run_shell("cd '" + src.string() + "' && " + GOSSIPSIM_BINARY + " run" + args +
                                 " --kernels none --quiet --force --out " + out.string(),
                             &r.out);
    ASSERT_EQ(r.code, 0) << name << ": " << r.out;
    nlohmann::json produced = nlohmann::json::object();
    for (const auto& e : fs::directory_iterator(out)) {
      if (!fs::exists(e.path() / "transfers.csv")) continue;
      for (const char* csv : {"transfers.csv", "metrics.csv", "nodes.csv", "events.csv", "comm_matrix.csv"}) {
        std::ifstream in(e.path() / csv, std::ios::binary);
        produced[e.path().filename().string()][csv] = fnv1a64(std::string(std::istreambuf_iterator<char>(in), {}));
      }
    }
    if (update) c["files"] = produced;
    EXPECT_EQ(produced, c["files"]) << name;
    fs::remove_all(out);
  }
  if (update) std::ofstream(file) << golden.dump(1) << "\n";
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// `gossipsim run ... 2>&1 | head -1`: the closed pipe used to kill the run
// with SIGPIPE (exit 141, no word), leaving its lock and staging folder and
// no result. The messages stop; the run finishes and writes its results.
TEST(Cli, AReaderThatGoesAwayStopsTheMessagesNotTheRun) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-pipe-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "r", rc = dir / "rc";
  std::string first;
  ASSERT_EQ(test::run_shell("{ " + std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
                                "/scenarios/teaching/synthetic-4.json --kernels none --set /stop/virtual_s=20 --out " +
                                out.string() + " 2>&1; echo $? > " + rc.string() + "; } | head -1",
                            &first),
            0);
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 1) << first;
  std::ifstream in(rc);
  int code = -1;
  in >> code;
  EXPECT_EQ(code, 0);
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  EXPECT_EQ(summary["methods"].size(), 5u);
  EXPECT_TRUE(summary["complete"].get<bool>());
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "r" || name == "rc") << "left behind: " << name;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim
