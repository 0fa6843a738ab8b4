#include "sim/sweep.h"

#include "analysis/sweep_csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <functional>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/methods/registry.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

fs::path temp(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("gossipsim-sweep-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

fs::path write_sweep(const nlohmann::json& axes) {
  fs::path p = temp("sweep.json");
  nlohmann::json s = {{"name", "t"},
                      {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
                      {"set", {{"/stop/virtual_s", 3}, {"/methods", {"gossip", "gossip-scheduled"}}}},
                      {"axes", axes}};
  std::ofstream(p) << s.dump();
  return p;
}

int run(const std::string& args, std::string* output = nullptr, const std::string& env = "") {
  return test::run_shell(env + (env.empty() ? "" : " ") + std::string(GOSSIPSIM_BINARY) + " sweep " + args +
                             " --kernels none",
                         output);
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Sweep, GridCountsWithTheLastAxisFastest) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}, {{"path", "/compute/jitter"}, {"values", {0, 0.1, 0.2}}}});
  Sweep s = load_sweep(f.string());
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s.values(4)["/seed"], 2);
  EXPECT_EQ(s.values(4)["/compute/jitter"], 0.1);
  auto o = s.overrides(5);
  EXPECT_NE(std::find(o.begin(), o.end(), "/compute/jitter=0.2"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "/stop/virtual_s=3"), o.end());
  fs::remove_all(f.parent_path());
}

TEST(Sweep, ShardsCoverTheGridExactlyOnce) {
  for (size_t total : {1u, 7u, 12u})
    for (size_t n : {1u, 2u, 3u, 5u}) {
      std::multiset<size_t> seen;
      for (size_t i = 0; i < n; ++i)
        for (size_t p : shard_points(total, i, n)) seen.insert(p);
      ASSERT_EQ(seen.size(), total);
      for (size_t p = 0; p < total; ++p) EXPECT_EQ(seen.count(p), 1u);
    }
  EXPECT_EQ(parse_shard("2/5"), std::make_pair(size_t(2), size_t(5)));
  EXPECT_THROW(parse_shard("5/5"), InputError);
  EXPECT_THROW(parse_shard("x"), InputError);
}

// 1 while some `gossipsim run` writes below out/points/, else 0. (The
// pattern's bracket keeps it from matching the shell that runs pgrep.)
int point_runs_alive(const fs::path& out) {
  return test::run_shell("pgrep -f -- '[-]-out " + out.string() + "/points/' > /dev/null") == 0 ? 1 : 0;
}

// Kills a sweep started by a test when the test ends, also when an assertion
// ended it early (its point runs die with it), so a failure leaves nothing running.
// (Only while its exit code is not written: after that the pid may be another's.)
struct KillAtEnd {
  int pid = 0;
  std::string rc_file;
  ~KillAtEnd() {
    if (pid > 0 && !fs::exists(rc_file)) ::kill(pid, SIGKILL);
  }
};

bool wait_until(const std::function<bool()>& done, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    ::usleep(50000);
  }
  return done();
}

// A sweep killed with SIGKILL takes its point runs with it (they used to go
// on as orphans, writing into its folder); started again, it finds a
// consistent folder and finishes. The point runs hold at their start
// (GOSSIPSIM_TEST_HOLD) so that the kill certainly finds them running.
TEST(Sweep, PointRunsDieWithAKilledSweepAndTheRestartFinishes) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}});
  fs::path out = temp("killed-sweep");
  const std::string cmd = std::string(GOSSIPSIM_BINARY) + " sweep " + f.string() + " --kernels none --jobs 2 --out " +
                          out.string();
  test::run_shell("GOSSIPSIM_TEST_HOLD=60 " + cmd + " > /dev/null 2>&1 & echo $! > " + (out.string() + ".pid"));
  ASSERT_TRUE(wait_until([&] { return point_runs_alive(out) == 1; }, 30)) << "no point run started";
  std::ifstream pid_file(out.string() + ".pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_TRUE(wait_until([&] { return point_runs_alive(out) == 0; }, 10)) << "point runs outlived their sweep";
  std::string text;
  ASSERT_EQ(test::run_shell(cmd, &text), 0) << text;
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  for (const auto& e : fs::directory_iterator(out / "points"))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "left behind: " << e.path();
  fs::remove_all(f.parent_path());
}

// SIGTERM stops a sweep cleanly: no new point starts, the running ones stop,
// and it exits 128 + 15; started again, it finishes.
TEST(Sweep, SigtermStopsTheSweepAndItsPointRuns) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}});
  fs::path out = temp("stopped-sweep");
  const std::string cmd = std::string(GOSSIPSIM_BINARY) + " sweep " + f.string() + " --kernels none --jobs 2 --out " +
                          out.string();
  const std::string o = out.string();
  test::run_shell("(GOSSIPSIM_TEST_HOLD=60 " + cmd + " > " + o + ".log 2>&1 & echo $! > " + o + ".pid; wait $!; echo $? > " +
                  o + ".rc.tmp; mv " + o + ".rc.tmp " + o + ".rc) > /dev/null 2>&1 &");
  ASSERT_TRUE(wait_until([&] { return point_runs_alive(out) == 1; }, 30)) << "no point run started";
  std::ifstream pid_file(o + ".pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  KillAtEnd guard{pid, o + ".rc"};
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(out.string() + ".rc") && fs::file_size(out.string() + ".rc") > 0; },
                         30));
  std::ifstream rc(out.string() + ".rc");
  int code = 0;
  rc >> code;
  EXPECT_EQ(code, 128 + SIGTERM);
  EXPECT_EQ(point_runs_alive(out), 0);
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  std::string text;
  ASSERT_EQ(test::run_shell(cmd, &text), 0) << text;
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  fs::remove_all(f.parent_path());
}

// A stop that comes while the points are between fork and exec stops them
// too: they used to run the sweep's inherited handler there, exec as if
// nothing had happened and hold for their 60 s, and the sweep waited for them.
TEST(Sweep, SigtermWhilePointsStartStopsThemToo) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}});
  fs::path out = temp("stopped-at-start");
  const std::string o = out.string();
  test::run_shell("(GOSSIPSIM_TEST_HOLD=60 GOSSIPSIM_TEST_HOLD_BEFORE_EXEC=3 " + std::string(GOSSIPSIM_BINARY) +
                  " sweep " + f.string() + " --kernels none --jobs 2 --out " + o + " > " + o + ".log 2>&1 & echo $! > " +
                  o + ".pid; wait $!; echo $? > " + o + ".rc.tmp; mv " + o + ".rc.tmp " + o + ".rc) > /dev/null 2>&1 &");
  // The sweep says how many points it runs just before it starts them.
  ASSERT_TRUE(wait_until([&] { return read(o + ".log").find("to run") != std::string::npos; }, 30)) << read(o + ".log");
  ::usleep(500000);
  EXPECT_EQ(point_runs_alive(out), 0) << "a point exec'd before its hold ended";
  std::ifstream pid_file(o + ".pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  KillAtEnd guard{pid, o + ".rc"};
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  // Within the 3 s hold plus the sweep's own exit, far short of the 60 s hold.
  ASSERT_TRUE(wait_until([&] { return fs::exists(o + ".rc") && fs::file_size(o + ".rc") > 0; }, 30)) << read(o + ".log");
  std::ifstream rc(o + ".rc");
  int code = 0;
  rc >> code;
  EXPECT_EQ(code, 128 + SIGTERM) << read(o + ".log");
  EXPECT_EQ(point_runs_alive(out), 0);
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  fs::remove_all(f.parent_path());
}

// A point stopped mid-run by SIGTERM leaves a last checkpoint beside its
// folder; the sweep, started again, resumes it (a fresh run of the point
// used to refuse that folder, and the point failed).
TEST(Sweep, APointStoppedWithACheckpointIsResumedWhenTheSweepStartsAgain) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}});
  fs::path out = temp("resumed-point");
  std::string text;
  ASSERT_EQ(run(f.string() + " --jobs 1 --out " + out.string(), &text), 0) << text;
  const std::string straight = read(out / "points/1/gossip/metrics.csv");
  ASSERT_FALSE(straight.empty());
  // Point 1 again, as the sweep runs it, stopped by SIGTERM after its 2nd checkpoint.
  fs::remove_all(out / "points/1");
  const std::string point = std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
                            "/scenarios/teaching/synthetic-4.json --quiet --kernels none --out " +
                            (out / "points/1").string() +
                            " --set /stop/virtual_s=3 --set '/methods=[\"gossip\",\"gossip-scheduled\"]' --set /seed=2"
                            " --checkpoint-every 0.5";
  EXPECT_EQ(test::run_shell("GOSSIPSIM_TEST_RAISE=2:15 " + point, &text), 128 + SIGTERM) << text;
  ASSERT_TRUE(fs::exists(out.string() + "/points/1.checkpoint/checkpoint.json"));
  fs::remove(out / "sweep.csv");
  ASSERT_EQ(run(f.string() + " --jobs 1 --out " + out.string(), &text), 0) << text;
  EXPECT_NE(text.find("point 1 done"), std::string::npos) << text;
  EXPECT_EQ(read(out / "points/1/gossip/metrics.csv"), straight);
  EXPECT_FALSE(fs::exists(out.string() + "/points/1.checkpoint"));
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  fs::remove_all(f.parent_path());
}

// A point that fails as it runs (here killed as its method starts, by a
// test hook) does not stop the others. (A value the base scenario refuses
// is refused before any point runs: AValueTheBaseRefusesIsNamedWhereTheSweepWroteIt.)
TEST(Sweep, AFailingPointDoesNotStopTheOthers) {
  fs::path f = temp("failing.json");
  std::ofstream(f) << nlohmann::json{
      {"name", "t"},
      {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
      {"set", {{"/stop/virtual_s", 3}}},
      {"axes",
       {{{"path", "/methods"},
         {"values", {{"gossip"}, {{{"name", "gossip"}, {"label", "boom"}}}, {"gossip-scheduled"}}}}}}}.dump();
  fs::path out = temp("failing");
  std::string text;
  EXPECT_EQ(run(f.string() + " --out " + out.string() + " --jobs 1", &text, "GOSSIPSIM_TEST_RAISE_AT=boom:9"), 3);
  EXPECT_NE(text.find("point 1 failed"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out / "points/0/summary.json"));
  EXPECT_FALSE(fs::exists(out / "points/1"));
  EXPECT_TRUE(fs::exists(out / "points/2/summary.json"));
  // A failed sweep leaves no folder that looks like a whole result: no
  // sweep.csv, and its marker says it is not complete.
  EXPECT_FALSE(fs::exists(out / "sweep.csv"));
  EXPECT_NE(read(out / ".gossipsim").find("\"complete\": false"), std::string::npos);
  std::string plotted;
  EXPECT_NE(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + out.string(), &plotted), 0);
  EXPECT_NE(plotted.find("a finished sweep"), std::string::npos) << plotted;
  // Started again without the hook, it runs the failed point alone and gathers.
  ASSERT_EQ(run(f.string() + " --out " + out.string(), &text), 0) << text;
  EXPECT_NE(text.find("2 done already, 1 to run"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  fs::remove_all(f.parent_path());
}

TEST(Sweep, ShardedAndResumedRunsGatherTheSameCsvAsOneStraightRun) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}, {{"path", "/compute/jitter"}, {"values", {0, 0.2}}}});
  fs::path straight = temp("straight"), pieces = temp("pieces");
  ASSERT_EQ(run(f.string() + " --jobs 2 --out " + straight.string()), 0);
  // Two of three shards, then the whole sweep again: it only runs what is missing.
  ASSERT_EQ(run(f.string() + " --shard 0/3 --out " + pieces.string()), 0);
  ASSERT_EQ(run(f.string() + " --shard 2/3 --out " + pieces.string()), 0);
  EXPECT_FALSE(fs::exists(pieces / "points/1"));
  std::string text;
  ASSERT_EQ(run(f.string() + " --out " + pieces.string(), &text), 0);
  EXPECT_NE(text.find("4 done already, 2 to run"), std::string::npos) << text;
  std::string csv = read(straight / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6 * 2 * 3);  // header + points x methods x targets
  EXPECT_EQ(csv, read(pieces / "sweep.csv"));
  // Each row carries its method's merges and mean staleness as point 0's
  // summary.json gives them (the mechanism a sweep map is read by).
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  const std::vector<std::string> names = split(header);
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[names.size() - 4], "merges");
  EXPECT_EQ(names[names.size() - 3], "staleness_mean_s");
  EXPECT_EQ(names[names.size() - 2], "partners");
  EXPECT_EQ(names.back(), "starved_cuts");
  const nlohmann::json summary = nlohmann::json::parse(read(straight / "points/0/summary.json"));
  int checked = 0;
  while (std::getline(lines, row)) {
    const std::vector<std::string> cells = split(row);
    ASSERT_EQ(cells.size(), names.size()) << row;
    if (cells[0] != "0") continue;
    for (const auto& m : summary["methods"])
      if (m["label"] == cells[4]) {
        EXPECT_EQ(std::stoll(cells[cells.size() - 4]), m["merges"].get<int64_t>()) << row;
        EXPECT_GT(m["merges"].get<int64_t>(), 0);
        EXPECT_NEAR(std::stod(cells[cells.size() - 3]), m["staleness"]["seconds"]["mean"].get<double>(), 1e-5) << row;
        // 4 nodes: each hears from between 1 and 3 others.
        EXPECT_GE(std::stod(cells[cells.size() - 2]), 1.0) << row;
        EXPECT_LE(std::stod(cells[cells.size() - 2]), 3.0) << row;
        EXPECT_EQ(cells.back(), std::to_string(m["starved_cuts"].size())) << row;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 2 * 3);  // two methods, three targets
  fs::remove_all(f.parent_path());
}

// --set, --trace and --workers reach every point (run's options, which the
// sweep lacked); a --set on an axis's path and a resume with other settings
// are refused in one line.
// Who talks to whom, by hand: n0 hears from n1 and n2 once each (2
// partners), n1 three times from n0 and never from n2 (1), n2 once from n1
// and three times from n0 (shares 1/4, 3/4: exp(-(1/4 ln 1/4 + 3/4 ln 3/4))
// = 1.7548); the mean is 1.5849.
TEST(Sweep, EffectivePartnersAreTheExpOfEachReceiversEntropy) {
  const fs::path dir = temp("partners");
  fs::create_directories(dir);
  std::ofstream(dir / "comm_matrix.csv") << "method,src,dst,transfers,bytes,lost\n"
                                            "m,n1,n0,1,10,0\nm,n2,n0,1,10,0\nm,n0,n1,3,30,0\nm,n2,n1,0,0,2\n"
                                            "m,n1,n2,1,10,0\nm,n0,n2,3,30,0\n";
  const double third = std::exp(-(0.25 * std::log(0.25) + 0.75 * std::log(0.75)));
  EXPECT_NEAR(third, 1.7548, 1e-4);
  EXPECT_NEAR(effective_partners((dir / "comm_matrix.csv").string()), (2 + 1 + third) / 3, 1e-12);
  std::ofstream(dir / "empty.csv") << "method,src,dst,transfers,bytes,lost\nm,n0,n1,0,0,1\n";
  EXPECT_TRUE(std::isnan(effective_partners((dir / "empty.csv").string())));
  EXPECT_TRUE(std::isnan(effective_partners((dir / "missing.csv").string())));
  fs::remove_all(dir);
}

TEST(Sweep, SetTraceAndWorkersReachEveryPoint) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}});
  fs::path out = temp("options");
  std::string text;
  ASSERT_EQ(run(f.string() + " --out " + out.string() + " --set /stop/virtual_s=1.5 --trace --workers 2", &text), 0)
      << text;
  for (int p : {0, 1}) {
    nlohmann::json sc = nlohmann::json::parse(read(out / "points" / std::to_string(p) / "scenario.json"));
    EXPECT_EQ(sc["stop"]["virtual_s"], 1.5);  // the file's "set" said 3: the command line comes after it
    EXPECT_EQ(sc["seed"], p + 1);
    EXPECT_TRUE(fs::exists(out / "points" / std::to_string(p) / "gossip" / "trace.json"));
  }
  EXPECT_NE(run(f.string() + " --out " + out.string() + " --set /stop/virtual_s=2", &text), 0);
  EXPECT_NE(text.find("the settings it was swept with"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(run(f.string() + " --out " + temp("axis").string() + " --set /seed=4", &text), 0);
  EXPECT_NE(text.find("--set /seed=4: a path that is not an axis of the sweep"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(temp("axis")));
  EXPECT_NE(run(f.string() + " --out " + temp("bad").string() + " --set /stop/virtual_s=-1", &text), 0);
  EXPECT_NE(text.find("/stop/virtual_s"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(run(f.string() + " --out " + temp("w").string() + " --workers 0", &text), 0);
  EXPECT_NE(text.find("--workers"), std::string::npos) << text;
  fs::remove_all(f.parent_path());
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// The map of where scheduling wins (#23): two axes besides /seed, a cell
// per pair of values, the speed-up over the seeds. The map's cells from a
// sweep.csv written here. Scheduling reaches the target at 10 s on the
// average model and 20 s on the node mean in every seed; overlap's times are
// listed per cell (empty: never), the same on both. So on the average model
// (8, a) is 2x in every seed, (8, b) has ratios 1, 0.5, 2 (geometric mean 1,
// interval around 1), (16, a) is 0.5x, (16, b) has one seed where both
// reached it; on the node mean every ratio halves.
TEST(Sweep, TheMapMarksTheCellsWhoseIntervalExcludesOne) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-map-" + std::to_string(::getpid()));
  fs::create_directories(dir / "points");
  {
    std::ofstream csv(dir / "sweep.csv");
    csv << "point,/topology/nodes,/x,/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,"
           "bytes_sent,transfers,target,time_to_target_s,time_to_target_node_mean_s,time_to_target_node_min_s,"
           "merges,staleness_mean_s,partners\n";
    const std::map<std::pair<int, std::string>, std::vector<std::string>> overlap = {
        {{8, "a"}, {"20", "20", "20"}}, {{8, "b"}, {"10", "5", "20"}}, {{16, "a"}, {"5", "5", "5"}},
        {{16, "b"}, {"", "", "10"}}};
    int point = 0;
    for (const auto& [cell, times] : overlap)
      for (int s = 0; s < 3; ++s, ++point) {
        csv << point << "," << cell.first << "," << cell.second << "," << s + 1
            << ",gossip-scheduled,gossip-scheduled,1,0.9,0.9,40,1,1,1,0.8,10,20,,300,0.2,2\n";
        csv << point << "," << cell.first << "," << cell.second << "," << s + 1
            << ",gossip-overlap,gossip-overlap,0,0.9,0.9,40,1,1,1,0.8," << times[s] << "," << times[s] << ",,"
            << 100 * (s + 1) << ",0.4," << s + 4 << "\n";
      }
  }
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 0) << out;
  std::ifstream in(dir / "figures.json");
  const nlohmann::json figures = nlohmann::json::parse(in);
  for (const char* name : {"sweep-map.png", "sweep-map-node_mean.png"}) {
    SCOPED_TRACE(name);
    const double k = std::string(name) == "sweep-map.png" ? 1.0 : 0.5;
    const nlohmann::json facts = figures[name];
    EXPECT_EQ(facts["reference"], "gossip-scheduled");
    std::map<std::pair<std::string, std::string>, nlohmann::json> cells;
    for (const auto& c : facts["cells"]) cells[{c["/topology/nodes"], c["/x"]}] = c;
    auto cell = [&](const char* nodes, const char* x) { return cells[{nodes, x}]; };
    ASSERT_EQ(cells.size(), 3u) << facts.dump();  // (16, b) has one pair: no cell value
    EXPECT_NEAR(cell("8", "a")["speedup"].get<double>(), 2.0 * k, 1e-12);
    EXPECT_NEAR(cell("8", "a")["low"].get<double>(), 2.0 * k, 1e-12);  // three equal ratios: no spread
    EXPECT_NEAR(cell("8", "b")["speedup"].get<double>(), 1.0 * k, 1e-12);
    EXPECT_LT(cell("8", "b")["low"].get<double>(), 1.0 * k);
    EXPECT_GT(cell("8", "b")["high"].get<double>(), 1.0 * k);
    EXPECT_NEAR(cell("16", "a")["speedup"].get<double>(), 0.5 * k, 1e-12);
    EXPECT_NEAR(cell("16", "a")["high"].get<double>(), 0.5 * k, 1e-12);
    EXPECT_EQ(cell("8", "a")["reference_reached"], 3);
    EXPECT_EQ(cell("8", "a")["other_reached"], 3);
    EXPECT_EQ(cell("8", "a")["of"], 3);
    EXPECT_TRUE(fs::exists(dir / name));
  }
  // The cells as text: (8, b)'s logs are 0, -ln 2, ln 2 (sd ln 2), so its
  // interval is exp(+-4.303 ln 2 / sqrt 3) = [0.18, 5.60]; in (16, b) both
  // reached it in one seed (ratio 1), scheduling in 3 and overlap in 1.
  const std::string text = read(dir / "sweep-map.md");
  EXPECT_NE(text.find("| 8 | 2.00x [2.00, 2.00] **+** | 1.00x [0.18, 5.60] |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 16 | 0.50x [0.50, 0.50] **-** | 1.00x, one seed (3 vs 1 of 3) |"), std::string::npos) << text;
  EXPECT_NE(read(dir / "sweep-map-node_mean.md").find("| 16 | 0.25x [0.25, 0.25] **-** | 0.50x, one seed (3 vs 1 of 3) |"),
            std::string::npos);
  // And why, per cell: scheduling merges 300 times in every seed, overlap
  // 100, 200, 300 (ratios 3, 1.5, 1: geometric mean 4.5^(1/3) = 1.65);
  // staleness 0.2 s against 0.4 s (0.50x); 2 partners against 4, 5, 6
  // (mean 5).
  const size_t why = text.find("### why: gossip-scheduled's merges and their mean staleness over gossip-overlap's");
  ASSERT_NE(why, std::string::npos) << text;
  EXPECT_NE(text.find("| 8 | merges 1.65x, staleness 0.50x, partners 2.0 vs 5.0 | merges 1.65x, staleness 0.50x, partners 2.0 vs 5.0 |", why), std::string::npos)
      << text;
  // The cells against their mechanism: one point per cell with an
  // interval, at the merges (1.65x) and partners (2 over 5) computed above.
  const nlohmann::json against = figures["sweep-map-why.png"];
  ASSERT_EQ(against["points"].size(), 3u) << against.dump();
  for (const auto& p : against["points"]) {
    EXPECT_NEAR(p["merges"].get<double>(), std::cbrt(4.5), 1e-9);
    EXPECT_NEAR(p["partners"].get<double>(), 2.0 / 5.0, 1e-12);
  }
  EXPECT_TRUE(fs::exists(dir / "sweep-map-why.png"));
  fs::remove_all(dir);
}

// A damaged sweep.csv (a merges cell that is no number, a negative partners
// cell) is refused in one line naming the file, its line and column, and is
// left as it was.
TEST(Sweep, PlotRefusesADamagedSweepCsvNamingItsLineAndColumn) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-damaged-" + std::to_string(::getpid()));
  fs::create_directories(dir / "points");
  const std::string header =
      "point,/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,bytes_sent,transfers,"
      "target,time_to_target_s,time_to_target_node_mean_s,time_to_target_node_min_s,merges,staleness_mean_s,partners\n";
  for (const auto& [row, expected] :
       std::vector<std::pair<std::string, std::string>>{{"0,1,a,a,1,0.9,0.9,40,1,1,1,0.8,10,,,abc,0.2,2\n", "merges"},
                                                        {"0,1,a,a,1,0.9,0.9,40,1,1,1,0.8,10,,,3,0.2,-1\n", "partners"}}) {
    const std::string text = header + "0,1,b,b,0,0.9,0.9,40,1,1,1,0.8,10,,,3,0.2,2\n" + row;
    std::ofstream(dir / "sweep.csv") << text;
    std::string out;
    EXPECT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 2) << out;
    EXPECT_NE(out.find((dir / "sweep.csv").string() + " line 3: " + expected + ": expected a number"),
              std::string::npos)
        << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(read(dir / "sweep.csv"), text);
  }
  fs::remove_all(dir);
}

TEST(Sweep, PlotGivesIntervalsOverSeedsAndAVerdictPerSpeedUp) {
  // A sweep.csv written here: three seeds, two methods, two targets.
  // Scheduling reaches 0.8 at 10, 12, 14 s and overlap at 20, 18, 28 s:
  // mean 12, sd 2, t(0.975, 2) = 4.303, half-width 4.303 * 2 / sqrt(3).
  // Per-seed speed-ups 2, 1.5, 2: the geometric mean and its interval come
  // from the logs, here computed independently of plot.py. Overlap reaches
  // 0.85 in two seeds only.
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-stats-" + std::to_string(::getpid()));
  fs::create_directories(dir / "points");  // with sweep.csv: a finished sweep
  {
    std::ofstream csv(dir / "sweep.csv");
    csv << "point,/workload/partition,/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,"
           "bytes_sent,transfers,target,time_to_target_s\n";
    const double sched[3] = {10, 12, 14}, overlap[3] = {20, 18, 28}, finals[3] = {0.86, 0.87, 0.88};
    for (int s = 0; s < 3; ++s) {
      csv << s << ",iid," << s + 1 << ",gossip-scheduled,gossip-scheduled,1," << finals[s] << ",0.9,40,1,1,1,0.8," << sched[s] << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-scheduled,gossip-scheduled,1," << finals[s] << ",0.9,40,1,1,1,0.85," << sched[s] + 10 << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-overlap,gossip-overlap,0,0.85,0.9,40,1,1,1,0.8," << overlap[s] << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-overlap,gossip-overlap,0,0.85,0.9,40,1,1,1,0.85," << (s < 2 ? "30" : "") << "\n";
    }
  }
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 0) << out;
  std::ifstream in(dir / "time_to_accuracy.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const double half = 4.303 * 2 / std::sqrt(3.0);
  const double logs[3] = {std::log(2.0), std::log(1.5), std::log(2.0)};
  const double m = (logs[0] + logs[1] + logs[2]) / 3;
  double var = 0;
  for (double l : logs) var += (l - m) * (l - m) / 2;
  const double lh = 4.303 * std::sqrt(var) / std::sqrt(3.0);
  const double finals_sd = 0.01;  // of 0.86, 0.87, 0.88
  EXPECT_NE(md.find("## /workload/partition = iid"), std::string::npos) << md;
  EXPECT_NE(md.find(fmt::format("| gossip-scheduled | {:.3f} ± {:.3f} | {:.1f} ± {:.1f} | {:.1f} ± {:.1f} |", 0.87,
                                4.303 * finals_sd / std::sqrt(3.0), 12.0, half, 22.0, half)),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(fmt::format("| 30.0 ± 0.0 (2/3) |")), std::string::npos) << md;
  EXPECT_NE(md.find(fmt::format("| gossip-overlap | {:.2f}x [{:.2f}, {:.2f}]: scheduling faster |", std::exp(m),
                                std::exp(m - lh), std::exp(m + lh))),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("only scheduling reached it (in 1 of 3 seeds)"), std::string::npos) << md;

  // With the nodes' own times (time_to_target_node_mean_s), each
  // combination gets a node-mean table after its average one: here every
  // node-mean time is the average's plus 1 s.
  {
    std::ifstream in_csv(dir / "sweep.csv");
    std::string line, text;
    std::getline(in_csv, line);
    text = line + ",time_to_target_node_mean_s,time_to_target_node_min_s\n";
    while (std::getline(in_csv, line)) {
      const std::string t = line.substr(line.rfind(',') + 1);
      text += line + "," + (t.empty() ? "" : fmt::format("{:g}", std::stod(t) + 1)) + ",\n";
    }
    std::ofstream(dir / "sweep.csv") << text;
  }
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 0) << out;
  std::ifstream in2(dir / "time_to_accuracy.md");
  const std::string md2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  const size_t average = md2.find("## /workload/partition = iid; time to target on the average model (average)");
  const size_t node = md2.find("## /workload/partition = iid; time to target on the nodes' own models, mean over nodes "
                               "(node_mean)");
  ASSERT_NE(average, std::string::npos) << md2;
  ASSERT_NE(node, std::string::npos) << md2;
  EXPECT_LT(average, node);
  EXPECT_NE(md2.find(fmt::format("| {:.1f} ± {:.1f} | {:.1f} ± {:.1f} |", 13.0, half, 23.0, half), node),
            std::string::npos)
      << md2;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

TEST(Sweep, EveryPointOfTheShippedSweepsIsAValidScenario) {
  // scripts/reproduce runs these: a bad point would fail an hour into it.
  int points = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(GOSSIPSIM_SOURCE_DIR) / "scenarios/paper/sweeps")) {
    if (entry.path().extension() != ".json") continue;
    const Sweep s = load_sweep(entry.path().string());
    for (size_t i = 0; i < s.size(); ++i, ++points) {
      Scenario sc = load_scenario(s.base, s.overrides(i));
      EXPECT_FALSE(sc.methods.empty()) << entry.path() << " point " << i;
    }
  }
  EXPECT_GE(points, 36 + 10 + 10 + 5);
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// scripts/reproduce, the one command that reruns the paper's figures, end
// to end on every point of every sweep it uses, for 2 virtual seconds
// without kernels: a sweep over every method once could not gather, and
// nothing noticed.
TEST(Sweep, ReproduceRunsEverySweepItUsesAndDrawsTheirTables) {
  const fs::path out = fs::temp_directory_path() / ("gossipsim-reproduce-" + std::to_string(::getpid()));
  std::string text;
  ASSERT_EQ(test::run_shell("GOSSIPSIM=" + std::string(GOSSIPSIM_BINARY) + " " + GOSSIPSIM_SOURCE_DIR +
                                "/scripts/reproduce --smoke --out " + out.string(),
                            &text),
            0)
      << text;
  for (const char* name : {"homogeneous", "heterogeneous", "geo-thin-link", "model-size"}) {
    SCOPED_TRACE(name);
    const Sweep sweep =
        load_sweep(std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/paper/sweeps/reproduce-" + name + ".json");
    const std::string csv = read(out / name / "sweep.csv");
    // Every method of the sweep, in every point.
    const nlohmann::json methods = sweep.fixed["/methods"];
    ASSERT_FALSE(methods.empty());
    for (const auto& m : methods) {
      const std::string label = m.is_string() ? m.get<std::string>() : m.value("label", m.value("name", ""));
      size_t rows = 0;
      for (size_t at = csv.find("," + label + ","); at != std::string::npos; at = csv.find("," + label + ",", at + 1))
        ++rows;
      EXPECT_GE(rows, sweep.size()) << label;
    }
    EXPECT_TRUE(fs::exists(out / name / "time_to_accuracy.md"));
    EXPECT_TRUE(fs::exists(out / name / "sweep.png"));
  }
  fs::remove_all(out);
}

TEST(Sweep, ReproduceRefusesWhatItDoesNotKnowBeforeBuildingAnything) {
  const std::string script = std::string(GOSSIPSIM_SOURCE_DIR) + "/scripts/reproduce";
  std::string out;
  EXPECT_EQ(test::run_shell(script + " --only everything", &out), 2);
  EXPECT_NE(out.find("--only: expected one of homogeneous heterogeneous geo-thin-link model-size"), std::string::npos)
      << out;
  EXPECT_EQ(test::run_shell(script + " --seeds 3", &out), 2);
  EXPECT_NE(out.find("usage: scripts/reproduce"), std::string::npos) << out;
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// The cells of one CSV line (no quoted commas in these files).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

// A number of a summary written as sweep.csv writes it: empty for null.
std::string as_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  return fmt::format("{:.6g}", v.get<double>());
}

// Every registered method in one sweep, gathered: methods that merge
// nothing (allreduce, single) have no staleness, and the gather used to
// fail on it after every point had run ("cannot use value() with null"),
// so scripts/reproduce could not finish.
TEST(Sweep, EveryRegisteredMethodRunsAndIsGathered) {
  std::vector<std::string> methods = method_names();
  ASSERT_GE(methods.size(), 10u);
  fs::path f = temp("all-methods.json");
  std::ofstream(f) << nlohmann::json{
      {"name", "all"},
      {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
      {"set", {{"/stop/virtual_s", 2}, {"/methods", methods}}},
      {"axes", {{{"path", "/seed"}, {"values", {1, 2}}}}}}.dump();
  fs::path out = temp("all-methods");
  std::string text;
  ASSERT_EQ(run(f.string() + " --out " + out.string(), &text), 0) << text;
  std::istringstream lines(read(out / "sweep.csv"));
  std::string header, line;
  std::getline(lines, header);
  const std::vector<std::string> names = cells_of(header);
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  ASSERT_LT(column("starved_cuts"), names.size()) << header;
  std::map<std::string, int> rows;  // per method
  while (std::getline(lines, line)) {
    const std::vector<std::string> c = cells_of(line);
    ASSERT_EQ(c.size(), names.size()) << line;
    ++rows[c[column("method")]];
    // Each cell as the point's summary.json says, read here without the gather's reader.
    const nlohmann::json summary =
        nlohmann::json::parse(read(out / "points" / c[column("point")] / "summary.json"));
    for (const auto& m : summary["methods"]) {
      if (m["label"] != c[column("label")]) continue;
      EXPECT_EQ(c[column("merges")], std::to_string(m["merges"].get<int64_t>())) << line;
      const auto& seconds = m["staleness"]["seconds"];
      EXPECT_EQ(c[column("staleness_mean_s")], seconds.is_null() ? "" : as_cell(seconds["mean"])) << line;
      EXPECT_EQ(c[column("final_accuracy")], as_cell(m["final_accuracy"])) << line;
      EXPECT_EQ(c[column("starved_cuts")], std::to_string(m["starved_cuts"].size())) << line;
      const auto& hit = m["time_to_accuracy"][c[column("target")]];
      EXPECT_EQ(c[column("time_to_target_s")], hit.is_null() ? "" : as_cell(hit["virtual_s"])) << line;
    }
  }
  for (const std::string& m : methods) EXPECT_EQ(rows[m], 2 * 3) << m;  // two seeds, three targets
  // What made the points, beside sweep.csv: one build and host, both points.
  const nlohmann::json made = nlohmann::json::parse(read(out / "provenance.json"));
  ASSERT_EQ(made["provenances"].size(), 1u) << made.dump();
  EXPECT_EQ(made["provenances"][0]["points"], nlohmann::json({0, 1}));
  EXPECT_EQ(made["provenances"][0]["provenance"]["kernels"], "none");
  EXPECT_EQ(made["provenances"][0]["provenance"],
            nlohmann::json::parse(read(out / "points/1/summary.json"))["provenance"]);
  fs::remove_all(f.parent_path());
}

// The README's way to use several machines: shards of one sweep started
// together into one folder. They were refused by the folder's lock. Each
// point now has a claim of its own: two shards, and two plain sweeps started
// together, run every point once, and the last to finish gathers.
TEST(Sweep, ShardsStartedTogetherIntoOneFolderRunEveryPointOnce) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3, 4}}}});
  fs::path straight = temp("together-straight"), out = temp("together");
  ASSERT_EQ(run(f.string() + " --out " + straight.string()), 0);
  const std::string sweep = std::string(GOSSIPSIM_BINARY) + " sweep " + f.string() + " --kernels none --jobs 1 --out ";
  for (const std::string& shards : {std::string("--shard 0/2|--shard 1/2"), std::string("|")}) {
    SCOPED_TRACE(shards);
    fs::remove_all(out);
    const std::string a = shards.substr(0, shards.find('|')), b = shards.substr(shards.find('|') + 1);
    // Each point holds 1 s at its start, so that the two overlap.
    std::string text;
    const int code = test::run_shell("{ (GOSSIPSIM_TEST_HOLD=1 " + sweep + out.string() + " " + a + " > " + out.string() +
                                         ".a 2>&1; echo $? >> " + out.string() + ".a) & GOSSIPSIM_TEST_HOLD=1 " + sweep +
                                         out.string() + " " + b + "; code=$?; wait; exit $code; }",
                                     &text);
    const std::string other = read(out.string() + ".a");
    EXPECT_EQ(code, 0) << text;
    EXPECT_EQ(other.substr(other.size() - 2), "0\n") << other;
    EXPECT_EQ(read(out / "sweep.csv"), read(straight / "sweep.csv")) << text << other;
    const std::string both = text + other;
    for (int p = 0; p < 4; ++p) {
      const std::string done = fmt::format("point {} done", p);
      size_t count = 0;
      for (size_t at = both.find(done); at != std::string::npos; at = both.find(done, at + 1)) ++count;
      EXPECT_EQ(count, 1u) << both;
    }
    for (const auto& e : fs::directory_iterator(out.parent_path()))
      EXPECT_EQ(e.path().filename().string().find(".lock"), std::string::npos) << "left behind: " << e.path();
    for (const auto& e : fs::directory_iterator(out / "points")) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(name.find("lock") == std::string::npos && name.find(".tmp-") == std::string::npos) << name;
    }
    fs::remove(out.string() + ".a");
  }
  fs::remove_all(f.parent_path());
}

// --shard, axes and /set read strictly: the number parser stopped at the
// first non-digit (0/1e9 ran as 0/1, 1/2/3 as 1/2), a repeated axis ran
// every point twice, and an axis that /set also fixed was taken.
TEST(Sweep, ShardsAxesAndSetsAreReadStrictly) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}});
  std::string text;
  for (const char* shard : {"0/1e9", "1/2/3", "2/2", "-1/2", "0/0", "0x1/2", "1", "/2", "0/2 "}) {
    EXPECT_EQ(run(f.string() + " --out " + temp("shard").string() + " --shard '" + shard + "'", &text), 2) << shard;
    EXPECT_NE(text.find("--shard " + std::string(shard) + ": expected i/n, two whole numbers with 0 <= i < n"),
              std::string::npos)
        << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  }
  EXPECT_FALSE(fs::exists(temp("shard")));
  EXPECT_EQ(parse_shard("3/8"), std::make_pair(size_t(3), size_t(8)));
  auto refusal = [&](const nlohmann::json& axes, const nlohmann::json& set = nlohmann::json::object()) {
    fs::path p = temp("strict.json");
    std::ofstream(p) << nlohmann::json{{"name", "t"}, {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
                                       {"set", set}, {"axes", axes}}
                            .dump();
    try {
      load_sweep(p.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string file = temp("strict.json").string();
  EXPECT_EQ(refusal({{{"path", "/seed"}, {"values", {1, 2}}}, {{"path", "/seed"}, {"values", {3}}}}),
            file + ": /axes/1/path: expected a path no other axis sets (/axes/0 sets /seed; merge the two axes)");
  EXPECT_EQ(refusal({{{"path", "/network"}, {"values", {nlohmann::json::object()}}},
                     {{"path", "/network/model"}, {"values", {"tcp"}}}}),
            file + ": /axes/1/path: expected a path no other axis sets (/axes/0 sets /network; merge the two axes)");
  EXPECT_EQ(refusal({{{"path", "/seed"}, {"values", {1, 2, 1}}}}),
            file + ": /axes/0/values/2: expected a value not listed already (it is /axes/0/values/0: the points "
                   "would run twice)");
  EXPECT_EQ(refusal({{{"path", "/seed"}, {"values", {1}}}}, {{"/seed", 3}}),
            file + ": /axes/0/path: expected a path that /set does not fix (it sets /seed; keep it in one of the two)");
  EXPECT_EQ(refusal({{{"path", "/net"}, {"values", {1}}}}, {{"/network/model", "tcp"}}), "accepted");
  fs::remove_all(f.parent_path());
}

// A value the base scenario does not take was reported against the base,
// as if the base were wrong, and without the fix: it is named where the
// sweep file wrote it, before any point runs.
TEST(Sweep, AValueTheBaseRefusesIsNamedWhereTheSweepWroteIt) {
  const std::string base = std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json";
  auto refusal = [&](const nlohmann::json& axes, const nlohmann::json& set = nlohmann::json::object()) {
    fs::path p = temp("values.json");
    std::ofstream(p) << nlohmann::json{{"name", "t"}, {"base", base}, {"set", set}, {"axes", axes}}.dump();
    std::string text;
    EXPECT_EQ(run(p.string() + " --out " + temp("values").string(), &text), 2) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_FALSE(fs::exists(temp("values")));
    return text;
  };
  const std::string file = temp("values.json").string();
  EXPECT_NE(refusal({{{"path", "/seed"}, {"values", {1}}}, {{"path", "/netwrk/model"}, {"values", {"tcp"}}}})
                .find(file + ": /axes/1/path: a JSON pointer to a value of the base scenario; " + base +
                      " says: /netwrk: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal({{{"path", "/network/links/bandwidth_mbps"}, {"values", {1000, -5}}}})
                .find(file + ": /axes/0/values/1: a value the base scenario takes at /network/links/bandwidth_mbps; "
                             "with it, " + base + " says: /network/links/bandwidth_mbps: expected a number >= 0.001"),
            std::string::npos);
  // A flow-model axis against a block /set pins for one model only.
  const std::string conflict = refusal({{{"path", "/network/model"}, {"values", {"slowstart", "maxmin"}}}},
                                       {{"/network/slowstart", {{"connections", "warm"}}}});
  EXPECT_NE(conflict.find(file + ": /axes/0/values/1: a value of /network/model that fits the rest of the sweep; with "
                                 "it, " + base + " says: /network/slowstart: expected these options with \"model\": "
                                 "\"slowstart\" only (/set/~1network~1slowstart sets it: sweep the two together"),
            std::string::npos)
      << conflict;
  EXPECT_NE(refusal({{{"path", "/seed"}, {"values", {1}}}}, {{"/stop/virtual_s", -1}})
                .find(file + ": /set/~1stop~1virtual_s: a value the base scenario takes at /stop/virtual_s"),
            std::string::npos);
  fs::remove_all(temp("values.json").parent_path());
}

}  // namespace
}  // namespace gossipsim
