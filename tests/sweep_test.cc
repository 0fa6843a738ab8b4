#include "sim/sweep.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "sim/base/error.h"
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

int run(const std::string& args, std::string* output = nullptr) {
  return test::run_shell(std::string(GOSSIPSIM_BINARY) + " sweep " + args + " --kernels none", output);
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

TEST(Sweep, AFailingPointDoesNotStopTheOthers) {
  fs::path f = write_sweep({{{"path", "/network/links/bandwidth_mbps"}, {"values", {1000, -5, 500}}}});
  fs::path out = temp("failing");
  std::string text;
  EXPECT_EQ(run(f.string() + " --out " + out.string(), &text), 3);
  EXPECT_NE(text.find("point 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("/network/links/bandwidth_mbps: expected a number > 0"), std::string::npos) << text;
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
  fs::remove_all(f.parent_path());
}

}  // namespace
}  // namespace gossipsim
