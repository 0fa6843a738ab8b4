#include "input/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/sweep_csv.h"
#include "base/error.h"
#include "sim/methods/registry.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::wait_until;

fs::path temp(const std::string& name) { return test::process_temp_dir("sweep") / name; }

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
  return test::run_shell(
      env + (env.empty() ? "" : " ") + std::string(GOSSIPSIM_BINARY) + " sweep " + args + " --kernels none", output);
}

// A CSV line's cells (no quoted commas in these files); a trailing comma
// ends in an empty cell.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Sweep, GridCountsWithTheLastAxisFastest) {
  fs::path f =
      write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}, {{"path", "/compute/jitter"}, {"values", {0, 0.1, 0.2}}}});
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

// A sweep killed with SIGKILL takes its point runs with it (they used to go
// on as orphans, writing into its folder); started again, it finds a
// consistent folder and finishes. The point runs hold at their start
// (GOSSIPSIM_TEST_HOLD) so that the kill certainly finds them running.
TEST(Sweep, PointRunsDieWithAKilledSweepAndTheRestartFinishes) {
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}});
  fs::path out = temp("killed-sweep");
  const std::string cmd =
      std::string(GOSSIPSIM_BINARY) + " sweep " + f.string() + " --kernels none --jobs 2 --out " + out.string();
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
  const std::string cmd =
      std::string(GOSSIPSIM_BINARY) + " sweep " + f.string() + " --kernels none --jobs 2 --out " + out.string();
  const std::string o = out.string();
  test::run_shell("(GOSSIPSIM_TEST_HOLD=60 " + cmd + " > " + o + ".log 2>&1 & echo $! > " + o +
                  ".pid; wait $!; echo $? > " + o + ".rc.tmp; mv " + o + ".rc.tmp " + o + ".rc) > /dev/null 2>&1 &");
  ASSERT_TRUE(wait_until([&] { return point_runs_alive(out) == 1; }, 30)) << "no point run started";
  std::ifstream pid_file(o + ".pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  KillAtEnd guard{pid, o + ".rc"};
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_TRUE(
      wait_until([&] { return fs::exists(out.string() + ".rc") && fs::file_size(out.string() + ".rc") > 0; }, 30));
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
                  " sweep " + f.string() + " --kernels none --jobs 2 --out " + o + " > " + o +
                  ".log 2>&1 & echo $! > " + o + ".pid; wait $!; echo $? > " + o + ".rc.tmp; mv " + o + ".rc.tmp " + o +
                  ".rc) > /dev/null 2>&1 &");
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
  ASSERT_TRUE(wait_until([&] { return fs::exists(o + ".rc") && fs::file_size(o + ".rc") > 0; }, 30))
      << read(o + ".log");
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
  // Each point says how far the run is, and the time left at its pace.
  EXPECT_NE(text.find("point 0 done (1 of 2 this run, eta "), std::string::npos) << text;
  EXPECT_NE(text.find("point 1 done (2 of 2 this run): "), std::string::npos) << text;
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
  // The only point this run ran, with its progress: no time left to estimate.
  EXPECT_NE(text.find("point 1 done (1 of 1 this run): "), std::string::npos) << text;
  EXPECT_EQ(read(out / "points/1/gossip/metrics.csv"), straight);
  EXPECT_FALSE(fs::exists(out.string() + "/points/1.checkpoint"));
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
  fs::remove_all(f.parent_path());
}

// A point another process holds is left to it, and the count of the
// points this run runs drops by one (it used to stop short: "1 of 2").
TEST(Sweep, APointAnotherProcessHoldsIsLeftOutOfTheProgressCount) {
  if (test::run_shell("command -v flock") != 0) GTEST_SKIP() << "flock (util-linux) is not installed";
  fs::path f = write_sweep({{{"path", "/seed"}, {"values", {1, 2}}}});
  fs::path out = temp("held-point");
  std::string text;
  ASSERT_EQ(run(f.string() + " --jobs 1 --out " + out.string(), &text), 0) << text;
  fs::remove_all(out / "points/0");
  fs::remove_all(out / "points/1");
  fs::remove(out / "sweep.csv");
  // Another process holds point 0's claim for 30 s (or until killed).
  const fs::path lock = out / "points/0.sweep-lock", pid = out / "holder.pid";
  ASSERT_EQ(test::run_shell("(flock -x " + lock.string() + " sh -c 'echo $$ > " + pid.string() +
                            "; exec sleep 30') > /dev/null 2>&1 &"),
            0);
  ASSERT_TRUE(wait_until([&] { return fs::exists(pid) && fs::file_size(pid) > 0; }, 10));
  // The holder gathers once it is done (it never will be: the test's).
  EXPECT_EQ(run(f.string() + " --jobs 1 --out " + out.string(), &text), 0) << text;
  EXPECT_NE(text.find("point 0 skipped: process"), std::string::npos) << text;
  EXPECT_NE(text.find("point 1 done (1 of 1 this run): "), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 points done; 1 running in other processes"), std::string::npos) << text;
  int holder = 0;
  std::ifstream(pid) >> holder;
  if (holder > 0) ::kill(holder, SIGKILL);
  fs::remove_all(f.parent_path());
}

// A point that fails as it runs (here killed as its method starts, by a
// test hook) does not stop the others. (A value the base scenario refuses
// is refused before any point runs: AValueTheBaseRefusesIsNamedWhereTheSweepWroteIt.)
TEST(Sweep, AFailingPointDoesNotStopTheOthers) {
  fs::path f = temp("failing.json");
  std::ofstream(f)
      << nlohmann::json{{"name", "t"},
                        {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
                        {"set", {{"/stop/virtual_s", 3}}},
                        {"axes",
                         {{{"path", "/methods"},
                           {"values", {{"gossip"}, {{{"name", "gossip"}, {"label", "boom"}}}, {"gossip-scheduled"}}}}}}}
             .dump();
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
  fs::path f =
      write_sweep({{{"path", "/seed"}, {"values", {1, 2, 3}}}, {{"path", "/compute/jitter"}, {"values", {0, 0.2}}}});
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
  const std::vector<std::string> names = cells_of(header);
  auto column = [&](const std::string& name) {
    const auto at = std::find(names.begin(), names.end(), name);
    EXPECT_NE(at, names.end()) << name;
    return static_cast<size_t>(at - names.begin());
  };
  const size_t merges = column("merges"), staleness = column("staleness_mean_s"), partners = column("partners"),
               cuts = column("starved_cuts"), target = column("target"), step = column("time_to_target_s"),
               crossed = column("time_to_target_interp_s"), node_mean = column("final_accuracy_node_mean"),
               regions = column("cross_region");
  const nlohmann::json summary = nlohmann::json::parse(read(straight / "points/0/summary.json"));
  int checked = 0;
  while (std::getline(lines, row)) {
    const std::vector<std::string> cells = cells_of(row);
    ASSERT_EQ(cells.size(), names.size()) << row;
    if (cells[0] != "0") continue;
    for (const auto& m : summary["methods"])
      if (m["label"] == cells[4]) {
        EXPECT_EQ(std::stoll(cells[merges]), m["merges"].get<int64_t>()) << row;
        EXPECT_GT(m["merges"].get<int64_t>(), 0);
        EXPECT_NEAR(std::stod(cells[staleness]), m["staleness"]["seconds"]["mean"].get<double>(), 1e-5) << row;
        // 4 nodes: each hears from between 1 and 3 others.
        EXPECT_GE(std::stod(cells[partners]), 1.0) << row;
        EXPECT_LE(std::stod(cells[partners]), 3.0) << row;
        EXPECT_EQ(cells[cuts], std::to_string(m["starved_cuts"].size())) << row;
        // The time the accuracy crossed the target, between evaluations,
        // and the evaluation that saw it: never later than that one.
        const nlohmann::json& hit = m["time_to_accuracy"][cells[target]];
        if (hit.is_null()) {
          EXPECT_EQ(cells[crossed], "") << row;
        } else {
          EXPECT_NEAR(std::stod(cells[crossed]), hit["interpolated_s"].get<double>(), 1e-5) << row;
          EXPECT_LE(std::stod(cells[crossed]), std::stod(cells[step]) + 1e-9) << row;
        }
        EXPECT_EQ(cells[regions], "") << row;  // a complete graph names no regions
        const nlohmann::json& finals = m["final_accuracy_by"];
        if (finals.contains("node_mean") && !finals["node_mean"].is_null())
          EXPECT_NEAR(std::stod(cells[node_mean]), finals["node_mean"].get<double>(), 1e-5) << row;
        else
          EXPECT_EQ(cells[node_mean], "") << row;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 2 * 3);  // two methods, three targets
  fs::remove_all(f.parent_path());
}

// On two regions (n0 and n2 in us-east-1, n1 and n3 in eu-west-1: placed
// round-robin), cross_region is the share of the finished transfers in the
// point's transfers.csv whose ends are of different parity; a floor of 1
// sends every model across.
TEST(Sweep, TheCsvSaysHowMuchCrossedBetweenRegions) {
  fs::path f = temp("regions.json");
  nlohmann::json s = {
      {"name", "t"},
      {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
      {"set",
       {{"/stop/virtual_s", 3},
        {"/topology",
         {{"generator", "geo"}, {"nodes", 4}, {"regions_file", "cloud8"}, {"regions", {"us-east-1", "eu-west-1"}}}},
        {"/methods",
         {"gossip-overlap", {{"name", "gossip-scheduled"}, {"cross_region_floor", 1}, {"label", "floor"}}}}}},
      {"axes", {{{"path", "/seed"}, {"values", {1}}}}}};
  std::ofstream(f) << s.dump();
  const fs::path out = temp("regions-out");
  ASSERT_EQ(run(f.string() + " --out " + out.string()), 0);
  std::istringstream lines(read(out / "sweep.csv"));
  std::string header, row;
  std::getline(lines, header);
  const auto names = cells_of(header);
  const size_t label = std::find(names.begin(), names.end(), "label") - names.begin();
  const size_t share = std::find(names.begin(), names.end(), "cross_region") - names.begin();
  ASSERT_LT(share, names.size());
  int checked = 0;
  while (std::getline(lines, row)) {
    const auto cells = cells_of(row);
    std::istringstream transfers(read(out / "points/0" / cells[label] / "transfers.csv"));
    std::string t;
    std::getline(transfers, t);  // method,src,dst,bytes,snapshot_s,start_s,finish_s,...
    int finished = 0, across = 0;
    while (std::getline(transfers, t)) {
      const auto c = cells_of(t);
      if (c[6].empty()) continue;
      ++finished;
      across += (std::stoi(c[1].substr(1)) % 2) != (std::stoi(c[2].substr(1)) % 2);
    }
    ASSERT_GT(finished, 0) << cells[label];
    EXPECT_NEAR(std::stod(cells[share]), static_cast<double>(across) / finished, 1e-3) << row;
    if (cells[label] == "floor") EXPECT_EQ(cells[share], "1") << row;
    ++checked;
  }
  EXPECT_GE(checked, 2);
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

// Between regions, by hand: 3 + 1 = 4 of the 2 + 3 + 1 + 4 = 10 finished
// transfers cross (2 and 4 stay in their region), 0.4.
TEST(Sweep, TheCrossRegionShareCountsTransfersBetweenTwoRegions) {
  const fs::path dir = temp("regions");
  fs::create_directories(dir);
  std::ofstream(dir / "comm_regions.csv") << "method,src_region,dst_region,transfers,bytes\n"
                                             "m,eu-west-1,eu-west-1,2,20\nm,eu-west-1,us-east-1,3,30\n"
                                             "m,us-east-1,eu-west-1,1,10\nm,us-east-1,us-east-1,4,40\n";
  EXPECT_DOUBLE_EQ(cross_region_share((dir / "comm_regions.csv").string()), 0.4);
  std::ofstream(dir / "none.csv") << "method,src_region,dst_region,transfers,bytes\nm,a,b,0,0\nm,a,a,0,0\n";
  EXPECT_TRUE(std::isnan(cross_region_share((dir / "none.csv").string())));
  EXPECT_TRUE(std::isnan(cross_region_share((dir / "missing.csv").string())));
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
  EXPECT_NE(text.find("--set /seed=4: expected a path that is not an axis of the sweep"), std::string::npos) << text;
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

// The map of where scheduling wins (#23), under the statistics of issue 34:
// two axes besides /seed, a cell per pair of values, every seed kept. The
// map's cells from a sweep.csv written here, 8 seeds a cell, runs of 40 s.
// Scheduling reaches the target at 10 s on the average model (20 s on the
// node mean) in every seed; overlap's times per cell, the same on both:
//   (8, a): 20 in every seed: ratio 2 in all 8, exact p 2/256 = 0.0078;
//   (8, b): 5 and 20 in turn: ratios 0.5 and 2, log sum 0, p 1;
//   (16, a): 5 everywhere: ratio 0.5, p 0.0078;
//   (16, b): never in seeds 1-7 (their end, 40 s, counts: ratio 4), 10 in
//            seed 8 (a tie): geometric mean 4^(7/8), p 4/256 = 0.0156 (the
//            old map dropped the 7 seeds and showed "one seed").
// Benjamini-Hochberg over the 4 cells: 0.0156, 1, 0.0156, 0.0208: (8, a),
// (16, a) and (16, b) are called, (8, b) is not. And a (32, a) cell of two
// seeds where scheduling is twice as fast in both: the old map marked such
// cells from 2 seeds (their t-interval excluded 1); its p is 2/4 = 0.5, and
// it is never called.
TEST(Sweep, TheMapCallsOnlyTheCellsWhoseAdjustedExactPSurvives) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-map-" + std::to_string(::getpid()));
  fs::create_directories(dir / "points");
  {
    std::ofstream csv(dir / "sweep.csv");
    csv << "point,/topology/nodes,/x,/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,"
           "bytes_sent,transfers,target,time_to_target_s,time_to_target_node_mean_s,time_to_target_node_min_s,"
           "merges,staleness_mean_s,partners\n";
    auto times = [](int nodes, const std::string& x, int s) -> std::string {
      if (nodes == 8) return x == "a" ? "20" : s % 2 ? "20" : "5";
      if (nodes == 16) return x == "a" ? "5" : s == 7 ? "10" : "";
      return "20";  // (32, a)
    };
    int point = 0;
    for (const auto& [nodes, x, seeds] : std::vector<std::tuple<int, std::string, int>>{
             {8, "a", 8}, {8, "b", 8}, {16, "a", 8}, {16, "b", 8}, {32, "a", 2}})
      for (int s = 0; s < seeds; ++s, ++point) {
        csv << point << "," << nodes << "," << x << "," << s + 1
            << ",gossip-scheduled,gossip-scheduled,1,0.9,0.9,40,1,1,1,0.8,10,20,,300,0.2,2\n";
        const std::string t = times(nodes, x, s);
        csv << point << "," << nodes << "," << x << "," << s + 1
            << ",gossip-overlap,gossip-overlap,0,0.9,0.9,40,1,1,1,0.8," << t << "," << t << ",," << 100 * (s % 3 + 1)
            << ",0.4," << s % 3 + 4 << "\n";
      }
  }
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 0) << out;
  std::ifstream in(dir / "figures.json");
  const nlohmann::json figures = nlohmann::json::parse(in);
  const nlohmann::json facts = figures["sweep-map.png"];
  EXPECT_EQ(facts["reference"], "gossip-scheduled");
  std::map<std::pair<std::string, std::string>, nlohmann::json> cells;
  for (const auto& c : facts["cells"]) cells[{c["/topology/nodes"], c["/x"]}] = c;
  auto cell = [&](const char* nodes, const char* x) { return cells[{nodes, x}]; };
  ASSERT_EQ(cells.size(), 5u) << facts.dump();
  EXPECT_NEAR(cell("8", "a")["speedup"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(cell("8", "a")["p"].get<double>(), 2.0 / 256, 1e-15);
  EXPECT_NEAR(cell("8", "a")["low"].get<double>(), 2.0, 1e-9);  // eight equal ratios: no spread
  EXPECT_NEAR(cell("8", "b")["speedup"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(cell("8", "b")["p"].get<double>(), 1.0);
  EXPECT_NEAR(cell("16", "a")["speedup"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(cell("16", "b")["speedup"].get<double>(), std::pow(4.0, 7.0 / 8), 1e-12);
  EXPECT_NEAR(cell("16", "b")["p"].get<double>(), 4.0 / 256, 1e-15);
  // Benjamini-Hochberg over 5 cells, by hand: p sorted 2/256, 2/256, 4/256,
  // 1/2, 1; this cell is third, so 4/256 x 5/3 (no later rank gives less).
  EXPECT_NEAR(cell("16", "b")["p_adjusted"].get<double>(), 4.0 / 256 * 5 / 3, 1e-15);
  EXPECT_NEAR(cell("8", "a")["p_adjusted"].get<double>(), 2.0 / 256 * 5 / 2, 1e-15);
  EXPECT_NEAR(cell("32", "a")["p_adjusted"].get<double>(), 0.5 * 5 / 4, 1e-15);
  EXPECT_NEAR(cell("32", "a")["p"].get<double>(), 0.5, 1e-15);
  for (const auto& [key, called] : std::vector<std::pair<std::pair<const char*, const char*>, bool>>{
           {{"8", "a"}, true}, {{"8", "b"}, false}, {{"16", "a"}, true}, {{"16", "b"}, true}, {{"32", "a"}, false}})
    EXPECT_EQ(cell(key.first, key.second)["called"], called) << key.first << " " << key.second;
  EXPECT_EQ(cell("16", "b")["reference_reached"], 8);
  EXPECT_EQ(cell("16", "b")["other_reached"], 1);
  EXPECT_TRUE(fs::exists(dir / "sweep-map.png"));
  EXPECT_TRUE(fs::exists(dir / "sweep-map-node_mean.png"));
  // The cells as text, with their p and adjusted p.
  const std::string text = read(dir / "sweep-map.md");
  EXPECT_NE(text.find("| 8 | 2.00x [2.00, 2.00], p 0.00781 (adj. 0.0195) **+** | 1.00x ["), std::string::npos) << text;
  EXPECT_NE(text.find("| 32 | 2.00x, p 0.5 (adj. 0.625) |"), std::string::npos) << text;
  EXPECT_NE(text.find("(8 vs 1 of 8 reached it)"), std::string::npos) << text;
  // And why, per cell: scheduling merges 300 times in every seed, overlap
  // 100, 200, 300 in turn; 2 partners against 4, 5, 6.
  const size_t why = text.find("### why: gossip-scheduled's merges and their mean staleness over gossip-overlap's");
  ASSERT_NE(why, std::string::npos) << text;
  const nlohmann::json against = figures["sweep-map-why.png"];
  EXPECT_EQ(against["points"].size(), 5u) << against.dump();
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
  for (const auto& [row, expected] : std::vector<std::pair<std::string, std::string>>{
           {"0,1,a,a,1,0.9,0.9,40,1,1,1,0.8,10,,,abc,0.2,2\n", "merges"},
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

TEST(Sweep, PlotGivesCensoredTimesExactTestsAndAdjustedVerdicts) {
  // A sweep.csv written here: three seeds, two methods, two targets, runs of
  // 40 virtual s. Scheduling reaches 0.8 at 10, 12, 14 s and 0.85 at 20, 22,
  // 24; overlap reaches 0.8 at 20, 18, 28 and 0.85 at 30, 30 and never in
  // the third seed, which counts its end, 40 s (censored, not dropped).
  // By hand: scheduling's restricted means 12 and 22, each +- 4.303 x 2 /
  // sqrt(3); overlap's to 0.85 (30 + 30 + 40) / 3 = 33.33 +- 4.303 x
  // 5.7735 / sqrt(3). Speed-ups: to 0.8 the ratios 2, 1.5, 2; to 0.85 1.5,
  // 30/22 and 40/24: geometric means computed here. Three positive log
  // ratios: the exact sign-flip p is 2/8 = 0.25, the smallest 3 seeds can
  // give, so no call is possible; Benjamini-Hochberg over the 2 comparisons
  // leaves 0.25.
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-stats-" + std::to_string(::getpid()));
  fs::create_directories(dir / "points");  // with sweep.csv: a finished sweep
  {
    std::ofstream csv(dir / "sweep.csv");
    csv << "point,/workload/partition,/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,"
           "bytes_sent,transfers,target,time_to_target_s\n";
    const double sched[3] = {10, 12, 14}, overlap[3] = {20, 18, 28}, finals[3] = {0.86, 0.87, 0.88};
    for (int s = 0; s < 3; ++s) {
      csv << s << ",iid," << s + 1 << ",gossip-scheduled,gossip-scheduled,1," << finals[s] << ",0.9,40,1,1,1,0.8,"
          << sched[s] << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-scheduled,gossip-scheduled,1," << finals[s] << ",0.9,40,1,1,1,0.85,"
          << sched[s] + 10 << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-overlap,gossip-overlap,0,0.85,0.9,40,1,1,1,0.8," << overlap[s] << "\n";
      csv << s << ",iid," << s + 1 << ",gossip-overlap,gossip-overlap,0,0.85,0.9,40,1,1,1,0.85," << (s < 2 ? "30" : "")
          << "\n";
    }
  }
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + dir.string(), &out), 0) << out;
  std::ifstream in(dir / "time_to_accuracy.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const double half = 4.303 * 2 / std::sqrt(3.0);
  const double finals_sd = 0.01;  // of 0.86, 0.87, 0.88
  EXPECT_NE(md.find("## /workload/partition = iid"), std::string::npos) << md;
  EXPECT_NE(md.find("The family: the 2 comparisons of this file, adjusted by Benjamini-Hochberg"), std::string::npos)
      << md;
  EXPECT_NE(
      md.find(fmt::format("| gossip-scheduled | {:.3f} ± {:.3f} | {:.1f} ± {:.1f} (3/3) | {:.1f} ± {:.1f} (3/3) |",
                          0.87, 4.303 * finals_sd / std::sqrt(3.0), 12.0, half, 22.0, half)),
      std::string::npos)
      << md;
  const double overlap_sd = std::sqrt((2 * std::pow(30 - 100.0 / 3, 2) + std::pow(40 - 100.0 / 3, 2)) / 2);
  EXPECT_NE(md.find(fmt::format("| {:.1f} ± {:.1f} (2/3) |", 100.0 / 3, 4.303 * overlap_sd / std::sqrt(3.0))),
            std::string::npos)
      << md;
  const double to08 = std::exp((std::log(2.0) + std::log(1.5) + std::log(2.0)) / 3);
  const double to085 = std::exp((std::log(1.5) + std::log(30.0 / 22) + std::log(40.0 / 24)) / 3);
  EXPECT_NE(md.find(fmt::format("| gossip-overlap | {:.2f}x, p 0.25 (adj. 0.25): cannot reach 0.05 with 3 seeds "
                                "(smallest p 0.25) | {:.2f}x, p 0.25 (adj. 0.25): cannot reach 0.05 with 3 seeds "
                                "(smallest p 0.25); only the reference reached it in 1, only gossip-overlap in 0 of 3 "
                                "seeds |",
                                to08, to085)),
            std::string::npos)
      << md;

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
  const size_t node = md2.find(
      "## /workload/partition = iid; time to target on the nodes' own models, mean over nodes "
      "(node_mean)");
  ASSERT_NE(average, std::string::npos) << md2;
  ASSERT_NE(node, std::string::npos) << md2;
  EXPECT_LT(average, node);
  EXPECT_NE(md2.find(fmt::format("| {:.1f} ± {:.1f} (3/3) | {:.1f} ± {:.1f} (3/3) |", 13.0, half, 23.0, half), node),
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
  const fs::path out = temp("reproduce");
  std::string text;
  ASSERT_EQ(test::run_shell("GOSSIPSIM=" + std::string(GOSSIPSIM_BINARY) + " " + GOSSIPSIM_SOURCE_DIR +
                                "/scripts/reproduce --smoke --out " + out.string(),
                            &text),
            0)
      << text;
  for (const char* name : {"homogeneous", "heterogeneous", "geo-thin-link", "model-size", "final", "control", "regions",
                           "regions-rotate"}) {
    SCOPED_TRACE(name);
    const Sweep sweep =
        load_sweep(std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/paper/sweeps/reproduce-" + name + ".json");
    const std::string csv = read(out / name / "sweep.csv");
    // Every method of the sweep (set, or its base's), in every point.
    const nlohmann::json methods =
        sweep.fixed.contains("/methods") ? sweep.fixed["/methods"] : nlohmann::json::parse(read(sweep.base))["methods"];
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
  std::ofstream(f) << nlohmann::json{{"name", "all"},
                                     {"base",
                                      std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
                                     {"set", {{"/stop/virtual_s", 2}, {"/methods", methods}}},
                                     {"axes", {{{"path", "/seed"}, {"values", {1, 2}}}}}}
                          .dump();
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
    const nlohmann::json summary = nlohmann::json::parse(read(out / "points" / c[column("point")] / "summary.json"));
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
    const int code =
        test::run_shell("{ (GOSSIPSIM_TEST_HOLD=1 " + sweep + out.string() + " " + a + " > " + out.string() +
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
    std::ofstream(p) << nlohmann::json{
        {"name", "t"},
        {"base", std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json"},
        {"set", set},
        {"axes", axes}}.dump();
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
            file +
                ": /axes/0/values/2: expected a value not listed already (it is /axes/0/values/0: the points "
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
                .find(file + ": /axes/1/path: expected a JSON pointer to a value of the base scenario; " + base +
                      " says: /netwrk: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal({{{"path", "/network/links/bandwidth_mbps"}, {"values", {1000, -5}}}})
                .find(file +
                      ": /axes/0/values/1: expected a value the base scenario takes at /network/links/bandwidth_mbps; "
                      "with it, " +
                      base + " says: /network/links/bandwidth_mbps: expected a number >= 0.001"),
            std::string::npos);
  // A flow-model axis against a block /set pins for one model only.
  const std::string conflict = refusal({{{"path", "/network/model"}, {"values", {"slowstart", "maxmin"}}}},
                                       {{"/network/slowstart", {{"connections", "warm"}}}});
  EXPECT_NE(
      conflict.find(file +
                    ": /axes/0/values/1: expected a value of /network/model that fits the rest of the sweep; with "
                    "it, " +
                    base +
                    " says: /network/slowstart: expected these options with \"model\": "
                    "\"slowstart\" only (/set/~1network~1slowstart sets it: sweep the two together"),
      std::string::npos)
      << conflict;
  EXPECT_NE(refusal({{{"path", "/seed"}, {"values", {1}}}}, {{"/stop/virtual_s", -1}})
                .find(file + ": /set/~1stop~1virtual_s: expected a value the base scenario takes at /stop/virtual_s"),
            std::string::npos);
  fs::remove_all(temp("values.json").parent_path());
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// The analysis a sweep file declares before its runs ("analysis": the
// reference, the target, the primary cells) is read as strictly as the
// rest: each mistake named at its path, before any point runs.
TEST(Sweep, TheDeclaredAnalysisIsReadStrictlyBeforeAnyPointRuns) {
  const std::string base = std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json";
  const nlohmann::json axes = {{{"path", "/seed"}, {"values", {1, 2}}},
                               {{"path", "/topology/nodes"}, {"values", {4, 8}}}};
  const fs::path file = temp("analysis.json");
  auto refusal = [&](const nlohmann::json& analysis) {
    std::ofstream(file) << nlohmann::json{{"name", "t"}, {"base", base}, {"axes", axes}, {"analysis", analysis}}.dump();
    std::string text;
    const int code = run(file.string() + " --out " + temp("analysis").string(), &text);
    EXPECT_FALSE(fs::exists(temp("analysis"))) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    return code == 2 ? text : "accepted: " + text;
  };
  const std::string at = file.string() + ": ";
  EXPECT_NE(refusal("gossip").find(at + "/analysis: expected an object"), std::string::npos);
  EXPECT_NE(refusal({{"target", 0}}).find(at + "/analysis/target: expected an accuracy in (0, 1]"), std::string::npos);
  EXPECT_NE(refusal({{"target", 1e9}}).find(at + "/analysis/target: expected an accuracy in (0, 1]"),
            std::string::npos);
  EXPECT_NE(refusal({{"target", "0.7"}}).find(at + "/analysis/target: expected a number"), std::string::npos);
  EXPECT_NE(refusal({{"target", 0.75}})
                .find(at + "/analysis/target: expected one of the points' /eval/targets "
                           "(0.6, 0.7, 0.8)"),
            std::string::npos);
  EXPECT_NE(refusal({{"reference", "gosip"}})
                .find(at + "/analysis/reference: expected the label of one of the "
                           "methods the points run (gossip, gossip-overlap, "
                           "gossip-scheduled, allreduce, single)"),
            std::string::npos);
  EXPECT_NE(refusal({{"primary", {{{"/topology/nodes", 16}}}}})
                .find(at + "/analysis/primary/0/~1topology~1nodes: expected one of the axis's values"),
            std::string::npos);
  EXPECT_NE(refusal({{"primary", {{{"/seed", 1}}}}})
                .find(at + "/analysis/primary/0/~1seed: expected an axis other than /seed"),
            std::string::npos);
  EXPECT_NE(refusal({{"primary", {{{"/compute/jitter", 0}}}}})
                .find(at + "/analysis/primary/0/~1compute~1jitter: expected the path of one of the sweep's axes"),
            std::string::npos);
  EXPECT_NE(refusal({{"primary", {nlohmann::json::object()}}})
                .find(at + "/analysis/primary/0: expected a cell named by at least one axis"),
            std::string::npos);
  EXPECT_NE(refusal({{"primary", "all"}}).find(at + "/analysis/primary: expected an array"), std::string::npos);
  EXPECT_NE(refusal({{"refrence", "gossip"}}).find(at + "/analysis/refrence: unknown key"), std::string::npos);
  fs::remove_all(file.parent_path());
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// A sweep.csv written here: cells /x = a and b, three seeds each.
// Scheduling reaches 0.8 at 10, 12, 14 s in both; overlap at `overlap_a`
// in a and at 10, 12, 14 (ties) in b.
fs::path hand_sweep(const std::string& name, const double (&overlap_a)[3], bool with_x = true) {
  const fs::path dir = temp(name);
  fs::create_directories(dir / "points");
  std::ofstream csv(dir / "sweep.csv");
  csv << "point" << (with_x ? ",/x" : "") << ",/seed,method,label,reference,final_accuracy,best_accuracy,virtual_s,"
      << "epochs,bytes_sent,transfers,target,time_to_target_s\n";
  const double sched[3] = {10, 12, 14};
  int point = 0;
  for (const std::string x : {"a", "b"}) {
    if (!with_x && x == "b") break;
    for (int s = 0; s < 3; ++s, ++point) {
      const std::string at = std::to_string(point) + (with_x ? "," + x : "") + "," + std::to_string(s + 1);
      csv << at << ",gossip-scheduled,gossip-scheduled,1,0.86,0.9,40,1,1,1,0.8," << sched[s] << "\n";
      csv << at << ",gossip-overlap,gossip-overlap,0,0.85,0.9,40,1,1,1,0.8," << (x == "a" ? overlap_a[s] : sched[s])
          << "\n";
    }
  }
  return dir;
}

// The analysis the sweep file declared (analysis.json beside sweep.csv)
// decides the families and is printed with the tables; --reference turns
// the speed-ups around; two sweeps are set side by side cell by cell; a
// sweep of seeds alone is drawn as a distribution.
TEST(Sweep, PlotTakesTheDeclaredAnalysisAReferenceAndTwoSweepsSideBySide) {
  const fs::path a = hand_sweep("a", {20, 18, 28});
  std::ofstream(a / "analysis.json") << R"({"primary": [{"/x": "a"}], "family": "scheduling is faster at a"})";
  std::string out;
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + a.string(), &out), 0) << out;
  const std::string md = read(a / "time_to_accuracy.md");
  EXPECT_NE(md.find("as the sweep file declared it before the runs: scheduling is faster at a"), std::string::npos)
      << md;
  EXPECT_NE(md.find("Confirmatory cells (declared in the sweep file before the runs): 1 comparison, adjusted by Holm"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("the other cells are exploratory: 1 comparison, adjusted by Benjamini-Hochberg"), std::string::npos)
      << md;
  // Ratios 2, 1.5, 2: their geometric mean; three positive: p = 2/8, and
  // Holm over the one confirmatory comparison leaves it (3 seeds give no
  // interval at 95%: no shift can be rejected).
  const double speedup = std::exp((2 * std::log(2.0) + std::log(1.5)) / 3);
  EXPECT_NE(
      md.find(fmt::format("| gossip-overlap | {:.2f}x, p 0.25 (adj. 0.25): cannot reach 0.05 with 3 seeds", speedup)),
      std::string::npos)
      << md;
  // --reference gossip-overlap: the same comparison, the other way round.
  ASSERT_EQ(
      test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + a.string() + " --reference gossip-overlap", &out), 0)
      << out;
  const std::string turned = read(a / "time_to_accuracy.md");
  EXPECT_NE(turned.find(fmt::format("| gossip-scheduled | {:.2f}x, p 0.25", 1 / speedup)), std::string::npos) << turned;
  EXPECT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + a.string() + " --reference gosip", &out), 2);
  EXPECT_NE(out.find("--reference: no method labelled gosip in this sweep; its labels are gossip-scheduled, "
                     "gossip-overlap"),
            std::string::npos)
      << out;

  // A second sweep where overlap takes 20, 24, 28 s in a: 2x in every
  // seed; without a declared analysis its two comparisons are one family
  // (Benjamini-Hochberg: 0.25 x 2 / 1).
  const fs::path b = hand_sweep("b", {20, 24, 28}), both = temp("both");
  ASSERT_EQ(
      test::run_shell(
          std::string(GOSSIPSIM_BINARY) + " plot " + a.string() + " " + b.string() + " --out " + both.string(), &out),
      0)
      << out;
  const std::string compared = read(both / "sweep-compare.md");
  EXPECT_NE(compared.find(fmt::format("| /x = a | gossip-overlap | 0.8 | {:.2f}x, adj. p 0.25: cannot reach 0.05 "
                                      "with 3 seeds (smallest p 0.25) | 2.00x, adj. p 0.5: cannot reach 0.05",
                                      speedup)),
            std::string::npos)
      << compared;
  EXPECT_NE(compared.find("| /x = b | gossip-overlap | 0.8 | 1.00x"), std::string::npos) << compared;
  EXPECT_TRUE(fs::exists(both / "a" / "time_to_accuracy.md"));
  EXPECT_TRUE(fs::exists(both / "b" / "sweep.png"));

  // Seeds alone: points per method, not a line through seeds.
  const fs::path seeds = hand_sweep("seeds", {20, 18, 28}, false);
  ASSERT_EQ(test::run_shell(std::string(GOSSIPSIM_BINARY) + " plot " + seeds.string(), &out), 0) << out;
  const nlohmann::json facts = nlohmann::json::parse(read(seeds / "figures.json"));
  EXPECT_EQ(facts["sweep.png"]["seeds_only"], true) << facts.dump();
  fs::remove_all(a.parent_path());
}

}  // namespace
}  // namespace gossipsim
