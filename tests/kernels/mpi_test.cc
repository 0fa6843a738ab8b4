// One simulation over MPI ranks (ranks/mpi_run.h), where the binary was
// built with MPI and mpirun is installed: the CSVs of `mpirun -np K gossipsim
// run` against the one-process run's, byte for byte, on a scenario that
// reaches every path between the ranks (merges across ranks, all-reduce,
// churn's resets from the average of others, per-node evaluations); a rank
// killed mid-run, which ends the run in one line and leaves nothing; bad input
// said once, by rank 0.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::run_shell;
using test::wait_until;

fs::path temp_dir() { return test::process_temp_dir("mpi"); }
fs::path temp(const std::string& name) { return temp_dir() / name; }

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Skips where this build or machine cannot run over ranks.
bool can_run_mpi(std::string* why) {
#if !GOSSIPSIM_BINARY_HAS_MPI
  *why = "gossipsim was built without MPI (scripts/setup installs openmpi-bin and libopenmpi-dev)";
  return false;
#else
  if (run_shell("command -v mpirun") != 0) {
    *why = "mpirun is not installed (scripts/setup installs openmpi-bin)";
    return false;
  }
  return true;
#endif
}

// mpirun as root, with more ranks than this machine's cores, quietly. Under
// the sanitizers, Open MPI's own leaks in processes that start MPI
// (`ranks_use_mpi`) are told apart (mpi-leaks.supp).
std::string mpirun(int ranks, bool ranks_use_mpi = true) {
  const std::string launch = "mpirun -q --oversubscribe -np " + std::to_string(ranks) + " ";
  if (!ranks_use_mpi) return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + launch;
  return std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") +
         "OMPI_MCA_mca_base_component_disable_dlclose=1 "
         "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0 "
         "LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=" GOSSIPSIM_SOURCE_DIR
         "/tests/kernels/mpi-leaks.supp " +
         launch;
}

// Six nodes training an MLP on synthetic data, half of them crashing and
// rejoining with the average of the others' models; gossip, scheduling and
// all-reduce; every node's model evaluated.
fs::path write_scenario(double virtual_s) {
  nlohmann::json s =
      nlohmann::json::parse(read(fs::path(GOSSIPSIM_SOURCE_DIR) / "scenarios/teaching/synthetic-4.json"));
  s["name"] = "mpi-t";
  s["topology"]["nodes"] = 6;
  s["churn"] = {{{"fraction", 0.5},
                 {"cycle",
                  {{"up_s", {{"dist", "exponential"}, {"mean", 2}}},
                   {"down_s", {{"dist", "exponential"}, {"mean", 1}}},
                   {"until_s", 5},
                   {"down", "crash"}}},
                 {"model", "average"}}};
  s["methods"] = {"gossip", "gossip-scheduled", "allreduce"};
  s["stop"] = {{"virtual_s", virtual_s}};
  s["eval"]["per_node"] = true;
  const fs::path p = temp("mpi-t-" + std::to_string(virtual_s) + ".json");
  std::ofstream(p) << s.dump();
  return p;
}

std::vector<std::string> csv_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".csv") out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos) out.push_back(line);
  return out;
}

TEST(Mpi, RanksWriteTheBytesOfTheOneProcessRun) {
  std::string why;
  if (!can_run_mpi(&why)) GTEST_SKIP() << why;
  const fs::path scenario = write_scenario(6), one = temp("one"), out2 = temp("two"), out3 = temp("three");
  const std::string run = std::string(GOSSIPSIM_BINARY) + " run " + scenario.string() + " --quiet --out ";
  std::string log;
  ASSERT_EQ(run_shell(run + one.string(), &log), 0) << log;
  ASSERT_EQ(run_shell(mpirun(2) + run + out2.string(), &log), 0) << log;
  ASSERT_EQ(run_shell(mpirun(3) + run + out3.string() + " --workers 2", &log), 0) << log;

  // The run reaches what crosses ranks: rejoins (resets from others'
  // models), an all-reduce, per-node columns, and it learns.
  const std::string events = read(one / "gossip" / "events.csv");
  EXPECT_FALSE(lines_with(events, ",join,").empty()) << events;
  const std::string metrics = read(one / "allreduce" / "metrics.csv");
  std::istringstream rows(metrics);
  std::string header, first, last, line;
  std::getline(rows, header);
  std::getline(rows, first);
  while (std::getline(rows, line)) last = line;
  auto accuracy = [](const std::string& row) {  // the fifth column
    std::istringstream in(row);
    std::string cell;
    for (int i = 0; i < 5; ++i) std::getline(in, cell, ',');
    return std::stod(cell);
  };
  EXPECT_GT(accuracy(last), accuracy(first) + 0.1) << metrics;

  const std::vector<std::string> files = csv_files(one);
  ASSERT_GE(files.size(), 12u);
  for (const fs::path& other : {out2, out3}) {
    EXPECT_EQ(csv_files(other), files);
    for (const std::string& f : files) EXPECT_EQ(read(other / f), read(one / f)) << other / f;
  }
  const auto summary = nlohmann::json::parse(read(out3 / "summary.json"));
  EXPECT_EQ(summary["provenance"]["mpi"]["ranks"], 3);
  EXPECT_FALSE(nlohmann::json::parse(read(one / "summary.json"))["provenance"].contains("mpi"));
  fs::remove_all(temp_dir());
}

// The pids of gossipsim processes of MPI rank `rank` whose command line
// holds `marker`.
std::vector<pid_t> rank_processes(int rank, const std::string& marker) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.rfind(GOSSIPSIM_BINARY, 0) != 0 || cmdline.find(marker) == std::string::npos) continue;
    std::istringstream environ(read(e.path() / "environ"));
    bool ours = false;
    for (std::string var; std::getline(environ, var, '\0');)
      ours = ours || var == "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
    if (!ours) continue;
    out.push_back(std::stoi(name));
  }
  return out;
}

TEST(Mpi, AKilledRankEndsTheRunInOneLineAndLeavesNothing) {
  std::string why;
  if (!can_run_mpi(&why)) GTEST_SKIP() << why;
  const fs::path scenario = write_scenario(3600), out = temp("killed"), log = temp("killed.log"),
                 rc = temp("killed.rc");
  const std::string command = mpirun(3) + GOSSIPSIM_BINARY + " run " + scenario.string() + " --out " + out.string();
  ASSERT_EQ(
      run_shell("(" + command + " > " + log.string() + " 2>&1; echo $? > " + rc.string() + ") > /dev/null 2>&1 &"), 0);
  // Rank 0 has staged its result folder and rank 1 holds nodes: the run is under way.
  auto staged = [&] {
    for (const auto& e : fs::directory_iterator(out.parent_path()))
      if (e.path().filename().string().rfind("killed.tmp-", 0) == 0) return true;
    return false;
  };
  ASSERT_TRUE(wait_until([&] { return staged() && !rank_processes(1, out.string()).empty(); }, 60)) << read(log);
  ASSERT_TRUE(wait_until([&] { return read(log).find("started") != std::string::npos; }, 60)) << read(log);
  for (pid_t p : rank_processes(1, out.string())) ::kill(p, SIGKILL);

  ASSERT_TRUE(wait_until([&] { return fs::exists(rc) && !read(rc).empty(); }, 60)) << read(log);
  EXPECT_NE(std::stoi(read(rc)), 0);
  const std::string text = read(log);
  const auto ours = lines_with(text, "gossipsim: ");
  ASSERT_EQ(ours.size(), 1u) << text;
  EXPECT_NE(ours[0].find("stopped by signal"), std::string::npos) << text;
  EXPECT_NE(ours[0].find("not resumed"), std::string::npos) << text;
  // Nothing behind: no result, no staging folder, no claim, no process.
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(staged());
  EXPECT_FALSE(fs::exists(out.string() + ".lock"));
  for (int rank : {0, 1, 2}) EXPECT_TRUE(rank_processes(rank, out.string()).empty()) << "rank " << rank;
  fs::remove_all(temp_dir());
}

// The README's other use of mpirun: a sweep with a shard per rank, each
// point a one-process run (the ranks' variables do not reach the points).
TEST(Mpi, ASweepWithAShardPerRankGathersWhatALocalSweepDoes) {
  std::string why;
  if (!can_run_mpi(&why)) GTEST_SKIP() << why;
  const fs::path sweep = temp("sweep.json");
  std::ofstream(sweep) << nlohmann::json{{"name", "mpi-shards"},
                                         {"base", write_scenario(2).string()},
                                         {"set", {{"/methods", {"gossip", "allreduce"}}}},
                                         {"axes", {{{"path", "/seed"}, {"values", {1, 2, 3}}}}}}
                              .dump();
  const std::string command = std::string(GOSSIPSIM_BINARY) + " sweep " + sweep.string() + " --jobs 1 --out ";
  std::string log;
  ASSERT_EQ(run_shell(command + temp("local").string(), &log), 0) << log;
  ASSERT_EQ(run_shell(mpirun(2, false) + "sh -c '" + command + temp("shards").string() +
                          " --shard ${OMPI_COMM_WORLD_RANK}/${OMPI_COMM_WORLD_SIZE}'",
                      &log),
            0)
      << log;
  const std::string local = read(temp("local") / "sweep.csv");
  EXPECT_EQ(std::count(local.begin(), local.end(), '\n'), 1 + 3 * 2 * 3) << local;  // seeds x methods x targets
  EXPECT_EQ(read(temp("shards") / "sweep.csv"), local);
  fs::remove_all(temp_dir());
}

TEST(Mpi, BadInputIsSaidOnceByRankZero) {
  std::string why;
  if (!can_run_mpi(&why)) GTEST_SKIP() << why;
  const fs::path scenario = write_scenario(2);
  std::string log;
  const std::string run =
      mpirun(3) + GOSSIPSIM_BINARY + " run " + scenario.string() + " --out " + temp("refused").string();
  EXPECT_NE(run_shell(run + " --checkpoint-every 1", &log), 0);
  auto errors = lines_with(log, "gossipsim: error:");
  ASSERT_EQ(errors.size(), 1u) << log;
  EXPECT_NE(errors[0].find("--checkpoint-every: expected no checkpoints"), std::string::npos) << log;

  EXPECT_NE(run_shell(run + " --set /stop/virtual_s=-1", &log), 0);
  errors = lines_with(log, "gossipsim: error:");
  ASSERT_EQ(errors.size(), 1u) << log;
  EXPECT_NE(errors[0].find("/stop/virtual_s"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(temp("refused")));
  fs::remove_all(temp_dir());
}

}  // namespace
}  // namespace gossipsim
