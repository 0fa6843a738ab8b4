// Hostile and malformed input, one test per class of defect: the user's
// files are never destroyed, no input crashes or hangs the tool, `validate`
// refuses what `run` would, numbers are range-checked, and every refusal is
// one clear line that names the file and the JSON path, with a non-zero exit.
// Every case runs the real binary on files the test writes, under a time
// limit: a crash (exit by signal) or a hang (exit 124) fails the test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;
using test::Result;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gossipsim-bad-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  fs::path write(const std::string& name, const char* text) const { return write(name, std::string(text)); }
  fs::path write(const std::string& name, const nlohmann::json& j) const { return write(name, j.dump()); }

  // Runs the binary with a time limit; never a signal, never a hang.
  Result gossipsim(const std::string& args) const {
    Result r;
    r.code = test::run_shell("cd " + dir_.string() + " && timeout 60 " + GOSSIPSIM_BINARY + " " + args, &r.out);
    EXPECT_NE(r.code, 124) << "hung: " << args;
    EXPECT_LT(r.code, 124) << "crashed (signal " << r.code - 128 << "): " << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("Traceback"), std::string::npos) << r.out;
    return r;
  }
  // A refusal: exit 2 and one line that says `expected`.
  void refused(const std::string& args, const std::string& expected) const {
    Result r = gossipsim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }

  // A small scenario that runs in a fraction of a second with --kernels none.
  static nlohmann::json scenario() {
    return {
        {"name", "tiny"},
        {"topology", {{"generator", "ring"}, {"nodes", 4}}},
        {"workload",
         {{"dataset", "synthetic"}, {"model", "mlp"}, {"synthetic", {{"shape", {8}}, {"train", 400}, {"test", 100}}}}},
        {"methods", {"gossip", "gossip-scheduled"}},
        {"stop", {{"virtual_s", 2}}},
        {"eval", {{"every_s", 1}}}};
  }

  fs::path dir_;
};

// ---- 1. The user's files are never destroyed --------------------------------

TEST_F(BadInput, RunRefusesAFolderThatHoldsSomethingElse) {
  fs::path sc = write("s.json", scenario());
  fs::create_directories(path("thesis"));
  write("thesis/chapter1.tex", "precious");
  refused("run s.json --kernels none --quiet --out thesis", "gossipsim never overwrites");
  refused("run s.json --kernels none --quiet --force --out thesis", "gossipsim never overwrites");
  std::ifstream in(path("thesis/chapter1.tex"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
  EXPECT_EQ(std::distance(fs::directory_iterator(path("thesis")), fs::directory_iterator()), 1);
}

TEST_F(BadInput, AnEarlierResultGetsANumberedSiblingOrIsReplacedWithForce) {
  write("s.json", scenario());
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r").code, 0);
  write("r/my-notes.txt", "kept");
  Result second = gossipsim("run s.json --kernels none --quiet --out r");
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("writing r-2 instead"), std::string::npos) << second.out;
  EXPECT_TRUE(fs::exists(path("r/my-notes.txt")));
  EXPECT_TRUE(fs::exists(path("r-2/gossip/metrics.csv")));
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r-2 --force").code, 0);
  EXPECT_FALSE(fs::exists(path("r-3")));
  EXPECT_TRUE(fs::exists(path("r-2/.gossipsim")));
}

// topology takes --set as run does (#22, 10), on scenarios only.
TEST_F(BadInput, TopologyTakesSetOnAScenario) {
  write("s.json", scenario());
  Result r = gossipsim("topology s.json --set /topology/nodes=6");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("compute nodes 6"), std::string::npos) << r.out;
  write("bare.json", nlohmann::json{{"generator", "ring"}, {"nodes", 4}});
  refused("topology bare.json --set /nodes=6", "bare.json: expected a scenario (with a /topology) for --set");
}

// net replay --out never overwrites a file it did not write; an earlier
// result of its own it replaces.
TEST_F(BadInput, ReplayOutNeverOverwritesAUsersFile) {
  write("pair.json", test::two_nodes(8, 8, 8, 10));
  write("r.json", nlohmann::json{{"topology", {{"generator", "file"}, {"path", "pair.json"}}},
                                 {"transfers", {{{"src", 0}, {"dst", 1}, {"bytes", 1000}}}}});
  write("notes.csv", "my,own,data\n");
  refused("net replay r.json --out notes.csv",
          "--out notes.csv: expected a new file or one this command wrote before (this one holds something else");
  std::ifstream in(path("notes.csv"));
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "my,own,data\n");
  ASSERT_EQ(gossipsim("net replay r.json --out out.csv").code, 0);
  EXPECT_EQ(gossipsim("net replay r.json --out out.csv").code, 0);  // its own: replaced
}

// --version answers on one line.
TEST_F(BadInput, VersionIsOneLine) {
  Result r = gossipsim("--version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("gossipsim ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

// A --methods label the scenario lacks says so and lists the labels it has.
TEST_F(BadInput, AnUnknownMethodLabelListsTheScenariosLabels) {
  write("s.json", scenario());
  refused("run s.json --kernels none --quiet --methods gosip",
          "s.json: /methods: no method labelled gosip (from --methods); the scenario's labels are gossip, "
          "gossip-scheduled");
  // An empty label is refused, not read as "no filter" or as the next arguments.
  for (const char* m : {"''", ",,,", "gossip,,gossip-scheduled"}) {
    refused(std::string("run s.json --kernels none --quiet --out o --methods ") + m,
            "--methods: expected method labels separated by commas");
    refused(std::string("plot s.json --methods ") + m + " --out o",
            "--methods: expected method labels separated by commas");
  }
  EXPECT_FALSE(fs::exists(path("o")));
}

TEST_F(BadInput, OutNamingAFileOrAPathBelowAFileIsRefused) {
  write("s.json", scenario());
  write("results.txt", "data");
  refused("run s.json --kernels none --quiet --out results.txt", "a folder, not an existing file");
  refused("run s.json --kernels none --quiet --out results.txt/sub", "results.txt is a file");
  refused("plot results.txt", "not a file");
  EXPECT_TRUE(fs::is_regular_file(path("results.txt")));
}

TEST_F(BadInput, NamesThatWouldWriteOutsideTheFolderAreRefused) {
  nlohmann::json j = scenario();
  j["name"] = "../../escape";
  write("s.json", j);
  refused("validate s.json", "s.json: /name: expected a name usable as a folder name");
  j = scenario();
  j["methods"] = {{{"name", "gossip"}, {"label", "a/../../b"}}};
  write("s.json", j);
  refused("validate s.json", "s.json: /methods/0/label: expected a name usable as a folder name");
  j = scenario();
  j["name"] = "..";
  write("s.json", j);
  refused("run s.json --kernels none", "/name: expected a name usable");
  write("sweep.json",
        nlohmann::json{{"name", "a/b"}, {"base", "s.json"}, {"axes", {{{"path", "/seed"}, {"values", {1}}}}}});
  refused("sweep sweep.json --kernels none", "sweep.json: /name: expected a name usable");
  EXPECT_FALSE(fs::exists(path("results")));
}

TEST_F(BadInput, SweepAndPlotKeepToTheSameRules) {
  write("s.json", scenario());
  write("sweep.json",
        nlohmann::json{{"name", "sw"}, {"base", "s.json"}, {"axes", {{{"path", "/seed"}, {"values", {1, 2}}}}}});
  fs::create_directories(path("photos"));
  write("photos/cat.jpg", "meow");
  refused("sweep sweep.json --kernels none --out photos", "gossipsim never overwrites");
  refused("plot photos", "a folder written by gossipsim run or gossipsim sweep");
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r").code, 0);
  refused("plot r --out photos", "gossipsim never overwrites");
  refused("sweep sweep.json --kernels none --out r", "this one holds a gossipsim run result");
  EXPECT_TRUE(fs::exists(path("photos/cat.jpg")));
  // The same sweep again resumes in its own folder.
  ASSERT_EQ(gossipsim("sweep sweep.json --kernels none --out sw").code, 0);
  Result again = gossipsim("sweep sweep.json --kernels none --out sw");
  EXPECT_EQ(again.code, 0);
  EXPECT_NE(again.out.find("2 done already, 0 to run"), std::string::npos) << again.out;
}

// ---- 2. No crash on any input -----------------------------------------------

TEST_F(BadInput, DeeplyNestedJsonIsRefused) {
  write("deep.json", std::string(100000, '[') + std::string(100000, ']'));
  refused("validate deep.json",
          "deep.json: "
          "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/"
          "0/0/0/0/0/0/0/0/0/0/0/0: expected JSON nested at most 64 levels deep");
  std::string objects;
  for (int i = 0; i < 5000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(5000, '}');
  write("deep2.json", objects);
  refused("topology deep2.json", "/a/a/a: expected JSON nested at most 64 levels deep");
  write("s.json", scenario());
  refused("validate s.json --set '/x=" + std::string(1000, '[') + std::string(1000, ']') + "'",
          "s.json: "
          "/x/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/"
          "0/0/0/0/0/0/0/0/0/0/0/0/0: expected JSON nested at most 64 levels deep");
  std::string pointer;
  for (int i = 0; i < 1000; ++i) pointer += "/a";
  refused("validate s.json --set " + pointer + "=1", "a JSON pointer at most 64 levels deep");
}

TEST_F(BadInput, AHugeFlatJsonIsReadInLinearTime) {
  // Two million empty objects (6 MB): the parser callback the reader used
  // for its depth limit rescanned the array after each object in nlohmann
  // 3.11.2, minutes in all; read in linear time it is refused in seconds,
  // well inside the harness's time limit.
  std::string junk = R"({"name": "x", "junk": [)";
  junk.reserve(6'100'000);
  for (int i = 0; i < 2'000'000; ++i) junk += i ? ",{}" : "{}";
  write("flat.json", junk + "]}");
  refused("validate flat.json --kernels none", "flat.json: /workload: expected a value (this key is required)");
  write("flat-bad.json", junk + ", 1e400]}");
  refused("validate flat-bad.json --kernels none",
          "flat-bad.json: /junk/2000000: expected valid JSON with finite numbers");
}

TEST_F(BadInput, TinyGraphsAreRefusedOrRunButNeverCrash) {
  nlohmann::json j = scenario();
  j["topology"] = {{"generator", "complete"}, {"nodes", 1}};
  write("one.json", j);
  refused("run one.json --kernels none --quiet",
          "one.json: /topology: expected at least 2 compute nodes for method gossip");
  j["methods"] = {"single"};
  write("one-single.json", j);
  EXPECT_EQ(gossipsim("run one-single.json --kernels none --quiet --out r").code, 0);

  write("none.json", R"({"nodes":[{"name":"a"},{"name":"b"}],"links":[]})");
  write("one-link.json", R"({"nodes":[{"name":"a"},{"name":"b"}],"links":[{"a":"a","b":"b"}]})");
  write("island.json",
        R"({"nodes":[{"name":"a"},{"name":"b"},{"name":"r","router":true}],"links":[{"a":"a","b":"r"}]})");
  for (const char* f : {"none", "one-link", "island"}) {
    j = scenario();
    j["topology"] = {{"generator", "file"}, {"path", std::string(f) + ".json"}};
    write(std::string("sc-") + f + ".json", j);
  }
  refused("run sc-none.json --kernels none --quiet", "sc-none.json: /topology: expected every node to have a peer");
  refused("run sc-island.json --kernels none --quiet",
          "sc-island.json: /topology: expected a connected graph (file island.json");
  EXPECT_EQ(gossipsim("run sc-one-link.json --kernels none --quiet --out r1").code, 0);
  // Zero regions in a geo file would divide by zero.
  write(
      "regions.json",
      R"({"regions":[],"rtt_ms":[],"bandwidth_mbps":[],"intra_region":{"latency_ms":1,"bandwidth_mbps":10},"sources":[]})");
  write("geo.json",
        nlohmann::json{{"generator", "geo"}, {"nodes", 3}, {"regions_file", path("regions.json").string()}});
  refused("topology geo.json", "regions.json: /regions: expected at least one region");
}

TEST_F(BadInput, NumbersTooLargeForAnyTypeNameTheirFile) {
  write("big.json", R"({"name":"x","seed":1e400})");
  refused("validate big.json", "big.json: /seed: expected valid JSON with finite numbers");
  nlohmann::json j = scenario();
  j["stop"]["virtual_s"] = 1e300;
  write("s.json", j);
  refused("validate s.json", "s.json: /stop/virtual_s: expected at most 1e+09 virtual seconds");
  j = scenario();
  j["eval"]["every_s"] = 1e-300;
  write("s.json", j);
  refused("validate s.json", "s.json: /eval/every_s: expected a number of seconds in [1e-6, 1e+09]");
  j = scenario();
  j["compute"] = {{"iteration_ms", 1e300}};
  write("s.json", j);
  refused("validate s.json", "s.json: /compute/iteration_ms: expected a number >= 0.001 and <= 1e+07");
  j = scenario();
  j["network"]["links"]["bandwidth_mbps"] = {{"dist", "lognormal"}, {"median", 1e300}, {"sigma", 1}};
  write("s.json", j);
  refused("validate s.json", "s.json: /network/links/bandwidth_mbps/median: expected a number <= 1e+09");
}

// ---- 3. No hang, no runaway memory -------------------------------------------

TEST_F(BadInput, SizesAreCheckedBeforeAnythingIsBuilt) {
  write("complete.json", R"({"generator":"complete","nodes":100000})");
  refused("topology complete.json --dot", "complete.json: /nodes: expected a graph within /limits/links = 10000000");
  write("torus.json", R"({"generator":"torus","rows":100000,"cols":100000})");
  refused("topology torus.json --dot", "torus.json: /cols: expected rows * cols within /limits/nodes = 100000");
  write("many.json", R"({"generator":"ring","nodes":100000000})");
  refused("topology many.json", "many.json: /nodes: expected an integer in [1, 100000]");
  nlohmann::json j = scenario();
  j["topology"] = {{"generator", "geo"}, {"nodes", 20000}};
  write("geo.json", j);
  refused("validate geo.json --kernels none", "geo.json: /topology: expected peers within /limits/links");
  j = scenario();
  j["limits"] = {{"memory_gb", 0.00001}};
  write("small.json", j);
  Result r = gossipsim("validate small.json --kernels none");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("small.json: /limits/memory_gb: expected a run within 1e-05 GB: this one needs about"),
            std::string::npos)
      << r.out;
  j["limits"] = {{"nodes", 3}};
  write("small.json", j);
  refused("validate small.json --kernels none", "small.json: /topology/nodes: expected an integer in [1, 3]");
  j["limits"] = {{"nodes", 3}, {"speed", 1}};
  write("small.json", j);
  refused("validate small.json --kernels none", "small.json: /limits/speed: unknown key");
}

// ---- 4. validate refuses everything run would --------------------------------

TEST_F(BadInput, ValidateRefusesWhatRunWould) {
  auto both = [&](const nlohmann::json& j, const std::string& expected) {
    write("v.json", j);
    refused("validate v.json", expected);
    refused("run v.json --quiet --out never", expected);
    EXPECT_FALSE(fs::exists(path("never")));
  };
  write("self.json", R"({"nodes":[{"name":"a"},{"name":"b"}],"links":[{"a":"a","b":"b"},{"a":"b","b":"b"}]})");
  write("twice.json", R"({"nodes":[{"name":"a"},{"name":"b"}],"links":[{"a":"a","b":"b"},{"a":"b","b":"a"}]})");
  write("self.dot", "graph { a -- b; b -- b; }");
  write("twice.dot", "graph { a -- b; b -- a; }");
  nlohmann::json j = scenario();
  j["topology"] = {{"generator", "file"}, {"path", "self.json"}};
  both(j,
       "self.json: /links/1/b: expected a vertex other than a (a link from a vertex to itself is refused) (in the "
       "topology file that v.json: /topology/path names)");
  j["topology"]["path"] = "twice.json";
  both(j, "twice.json: /links/1: expected each pair of vertices joined at most once");
  j["topology"]["path"] = "self.dot";
  both(j, "self.dot: edge 1 (b -- b): expected two different vertices");
  j["topology"]["path"] = "twice.dot";
  both(j, "twice.dot: edge 1 (b -- a): expected a link given once");
  j = scenario();
  j["topology"] = {{"generator", "erdos-renyi"}, {"nodes", 50}, {"p", 0}};
  both(j, "v.json: /topology/p: expected a p that can give a connected graph of 50 nodes");
  j["topology"]["p"] = 0.01;
  both(j, "v.json: /topology/p: expected a p that can give a connected graph of 50 nodes");
  j = scenario();
  j["workload"] = {{"dataset", "fashion-mnist"}, {"data_dir", path("nowhere").string()}};
  both(j, "v.json: /workload/data_dir: expected a folder holding train-images-idx3-ubyte.gz");
  j = scenario();
  j["workload"]["train_samples"] = 401;
  both(j, "v.json: /workload/train_samples: expected at most the 400 training samples of synthetic");
  j = scenario();
  j["eval"]["test_samples"] = 101;
  both(j, "v.json: /eval/test_samples: expected at most the 100 test samples of synthetic");
  j = scenario();
  j["workload"]["partition"] = {{"kind", "shards"}, {"classes_per_node", 11}};
  both(j, "v.json: /workload/partition/classes_per_node: expected at most the 10 classes of synthetic");
  // By region the shards are the regions': 2 regions x 3 shards > 5 samples
  // (by node it would be 4 nodes x 3).
  j = scenario();
  j["topology"] = {
      {"generator", "geo"}, {"nodes", 4}, {"regions_file", "cloud8"}, {"regions", {"us-east-1", "eu-west-1"}}};
  j["workload"]["train_samples"] = 5;
  j["workload"]["partition"] = {{"kind", "shards"}, {"classes_per_node", 3}, {"by", "region"}};
  both(j,
       "v.json: /workload/partition/classes_per_node: expected at most one shard per training sample (2 regions x "
       "3 shards > 5 samples)");
  j = scenario();
  j["workload"]["train_samples"] = 3;
  both(j, "v.json: /workload/train_samples: expected at least one training sample per node (3 samples for 4 nodes)");
}

// ---- 5. Numbers in net replay are range-checked -------------------------------

TEST_F(BadInput, NetReplayChecksItsNumbers) {
  write("two.json", R"({"nodes":[{"name":"a"},{"name":"b"}],"links":[{"a":"a","b":"b"}]})");
  auto replay = [&](const nlohmann::json& transfer) {
    write("r.json",
          nlohmann::json{{"topology", {{"generator", "file"}, {"path", "two.json"}}}, {"transfers", {transfer}}});
  };
  // 2^32 would wrap to node 0 if narrowed before the check.
  replay({{"src", 4294967296LL}, {"dst", 1}, {"bytes", 10}});
  refused("net replay r.json", "r.json: /transfers/0/src: expected a node id in [0, 2) or its name n0..n1");
  replay({{"src", 0}, {"dst", 1}, {"bytes", 10}, {"start_s", 1e300}});
  refused("net replay r.json", "r.json: /transfers/0/start_s: expected a number of seconds in [0, 1e+09]");
  replay({{"src", 0}, {"dst", 1}, {"bytes", 1e18}});
  refused("net replay r.json", "r.json: /transfers/0/bytes: expected an integer");
  replay({{"src", 0}, {"dst", 1}, {"bytes", 1000000000000LL}, {"start_s", 9.9999e8}});
  refused("net replay r.json",
          "r.json: /transfers/0/bytes: expected a transfer that ends within 1e+09 virtual seconds");
  replay({{"src", 0}, {"dst", 1}, {"bytes", -1}});
  refused("net replay r.json", "r.json: /transfers/0/bytes: expected an integer in [0, 1000000000000]");
  write("r.json",
        R"({"topology":{"generator":"file","path":"two.json"},"transfers":[{"src":0,"dst":1,"bytes":1e400}]})");
  refused("net replay r.json", "r.json: /transfers/0/bytes: expected valid JSON with finite numbers");
  // Node names as every output writes them; anything else named is refused.
  for (const char* name : {"a", "n2", "n", "n-1", "n1x", "n99999999999999"}) {
    replay({{"src", name}, {"dst", 1}, {"bytes", 10}});
    refused("net replay r.json", "r.json: /transfers/0/src: expected a node id in [0, 2) or its name n0..n1");
  }
  replay({{"src", "n1"}, {"dst", "n1"}, {"bytes", 10}});
  refused("net replay r.json",
          "r.json: /transfers/0/dst: expected a node id in [0, 2) or its name n0..n1, other than src");
  replay({{"src", "n1"}, {"dst", "n0"}, {"bytes", 10}});
  auto r = gossipsim("net replay r.json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\n0,1,0,10,flow,0.000000000,"), std::string::npos) << r.out;
}

// ---- 6. plot on an empty, missing or foreign folder ---------------------------

TEST_F(BadInput, PlotSaysOneClearLine) {
  fs::create_directories(path("empty"));
  refused("plot empty", "empty: expected a folder written by gossipsim run or gossipsim sweep (this one is not)");
  refused("plot missing", "missing: expected a folder written by gossipsim run or gossipsim sweep (it does not exist)");
  fs::create_directories(path("foreign"));
  write("foreign/summary.json", "{}");
  refused("plot foreign", "foreign: expected a folder written by gossipsim run or gossipsim sweep (this one is not)");
  // A result whose files were damaged afterwards: one line from the plotter, no traceback.
  write("s.json", scenario());
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r").code, 0);
  write("r/summary.json", "{\"methods\": 3}");
  Result r = gossipsim("plot r");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("plot: error:"), std::string::npos) << r.out;
}

// Profiles near the clock's resolution, and more points or changes than a
// run can hold: refused by validate and run alike, naming the path, before
// anything runs. These used to segfault (a diurnal period of 1e-9 s: no
// point in its period), never end (2e-9 s; a points profile repeating every
// 1e-9 s) or grow past 2 GB (400 entries of a million points each).
TEST_F(BadInput, ProfilesNearTheClocksResolutionOrTooLargeAreRefused) {
  auto with = [&](const nlohmann::json& profiles, const char* where = "network") {
    nlohmann::json j = scenario();
    j[where]["profiles"] = profiles;
    write("p.json", j);
  };
  auto both = [&](const std::string& expected) {
    refused("validate p.json --kernels none", expected);
    refused("run p.json --kernels none --quiet --out r", expected);
    EXPECT_FALSE(fs::exists(path("r")));
  };
  const nlohmann::json access = {{"access", 0}};
  for (double period : {1e-9, 2e-9, 1e-4}) {
    nlohmann::json e = access;
    e["capacity_mbps"] = {{"diurnal", {{"mean", 50}, {"amplitude", 0.5}, {"period_s", period}, {"step_s", period}}}};
    with(nlohmann::json::array({e}));
    both("p.json: /network/profiles/0/capacity_mbps/diurnal/period_s: expected a number of seconds in [0.001, 1e9]");
    nlohmann::json f = {
        {"all", true},
        {"factor", {{"diurnal", {{"mean", 1}, {"amplitude", 0.5}, {"period_s", period}, {"step_s", 1}}}}}};
    with(nlohmann::json::array({f}), "compute");
    both("p.json: /compute/profiles/0/factor/diurnal/period_s: expected a number of seconds in [0.001, 1e9]");
    e["capacity_mbps"] = {{"points", {{0, 10}}}, {"period_s", period}};
    with(nlohmann::json::array({e}));
    both(
        "p.json: /network/profiles/0/capacity_mbps/period_s: expected 0 (no repetition) or a number of seconds in "
        "[0.001, 1e9]");
  }
  nlohmann::json e = access;
  e["capacity_mbps"] = {{"diurnal", {{"mean", 50}, {"amplitude", 0.5}, {"period_s", 10}, {"step_s", 1e-9}}}};
  with(nlohmann::json::array({e}));
  both("/network/profiles/0/capacity_mbps/diurnal/step_s: expected a step of at least 0.001 s");
  e["capacity_mbps"] = {{"on_off", {{"on", 50}, {"up_s", 1e-9}, {"down_s", 1}, {"until_s", 10}}}};
  with(nlohmann::json::array({e}));
  both("/network/profiles/0/capacity_mbps/on_off/up_s: expected a number >= 0.001");
  // 400 entries of a million points each (16 MB apiece): refused at the
  // entry that passes /limits/profile_points, before the machine runs out.
  nlohmann::json many = nlohmann::json::array();
  for (int k = 0; k < 400; ++k) {
    nlohmann::json x = access;
    x["capacity_mbps"] = {{"diurnal", {{"mean", 50}, {"amplitude", 0.5}, {"period_s", 1000}, {"step_s", 0.00125}}}};
    many.push_back(x);
  }
  with(many);
  both(
      "p.json: /network/profiles/12/capacity_mbps: expected at most 10000000 profile points in all "
      "(/limits/profile_points); this profile's 800000 bring the total to 10400000");
  // Few points, many periods: the changes over the run, estimated.
  e["capacity_mbps"] = {{"points", {{0, 10}, {0.0005, 20}}}, {"period_s", 0.001}};
  nlohmann::json j = scenario();
  j["network"]["profiles"] = nlohmann::json::array({e});
  j["stop"]["virtual_s"] = 1e6;
  j["eval"]["every_s"] = 10;
  write("p.json", j);
  both(
      "p.json: /network: expected profiles that make at most 1e+08 changes over the run (/limits/wan_changes); "
      "these make about 4e+09 over 1e+06 virtual s");
  j["limits"] = {{"wan_changes", 1e10}};
  write("p.json", j);
  EXPECT_EQ(gossipsim("validate p.json --kernels none").code, 0);
  // With /stop/epochs alone, the run's length is estimated from the epochs.
  j = scenario();
  j["compute"]["profiles"] = {{{"all", true}, {"factor", {{"points", {{0, 1}, {0.0005, 2}}}, {"period_s", 0.001}}}}};
  j["stop"] = {{"epochs", 1e6}};
  write("p.json", j);
  refused("validate p.json --kernels none", "p.json: /compute: expected profiles that make at most 1e+08 changes");
  for (double bad : {0.0, -1.0, 1e-9, 1e300})
    for (const char* key : {"profile_points", "wan_changes"}) {
      j = scenario();
      j["limits"][key] = bad;
      write("p.json", j);
      refused("validate p.json --kernels none", std::string("p.json: /limits/") + key + ": expected ");
    }
}

// Cross-traffic whose mean gap passes but whose draws would not: bounded by
// the gaps the span truncates, before the run, and by the flows actually
// made, during it. These used to pass the mean-based estimate and then make
// about 1e8 flows until std::bad_alloc, or 6.3 million with a Pareto of
// infinite mean.
TEST_F(BadInput, CrossTrafficIsBoundedByWhatItsGapsActuallyGive) {
  auto with = [&](const nlohmann::json& gaps, double until) {
    nlohmann::json j = scenario();
    j["network"]["cross_traffic"] = {{{"from", {{"all", true}}},
                                      {"to", {{"all", true}}},
                                      {"size_mb", 0.01},
                                      {"interarrival_s", gaps},
                                      {"until_s", until}}};
    write("c.json", j);
  };
  with({{"dist", "empirical"}, {"values", {1e-6, 1e9}}, {"weights", {1e9, 1}}}, 60);
  refused("validate c.json --kernels none",
          "c.json: /network/cross_traffic/0/interarrival_s: expected gaps giving at most 10000000 flows over "
          "[start_s, until_s]; these give about 5.66e+07");
  refused("run c.json --kernels none --quiet --out r", "/network/cross_traffic/0/interarrival_s: expected gaps");
  with({{"dist", "pareto"}, {"scale", 1e-6}, {"shape", 0.99}}, 1000);
  refused("validate c.json --kernels none", "/network/cross_traffic/0/interarrival_s: expected gaps giving at most");
  with({{"dist", "pareto"}, {"scale", 1e-7}, {"shape", 0.99}}, 1000);
  refused("validate c.json --kernels none",
          "/network/cross_traffic/0/interarrival_s/scale: expected a number >= 1e-06");
  with({{"dist", "exponential"}, {"mean", 0.5}}, 2);
  EXPECT_EQ(gossipsim("run c.json --kernels none --quiet --out r").code, 0);
}

// CSV traces: every row two numbers and nothing else; a byte order mark is
// not a header; times and values out of order or range name the CSV file
// and its line (they used to pass, drop the first row, or name only the
// scenario's path).
TEST_F(BadInput, CsvTracesAreReadStrictlyAndNameTheirLine) {
  nlohmann::json j = scenario();
  j["network"]["profiles"] = {{{"access", 0}, {"capacity_mbps", {{"csv", "t.csv"}}}}};
  write("s.json", j);
  const std::string trace = "t.csv";  // as the scenario names it
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"0,5abc\n", "line 1: expected time_s,value as two numbers (\"5abc\" is not a number)"},
           {"time_s,mbps\n2,7 Mbit/s\n", "line 2: expected time_s,value as two numbers (\"7 Mbit/s\" is not a number)"},
           {"0,5,99\n", "line 1: expected two fields, time_s,value (this row has 3)"},
           {"0,5\n2\n", "line 2: expected two fields, time_s,value (this row has 1)"},
           {"0,5\n2,x\n", "line 2: expected time_s,value as two numbers"},
           // strtod read these as 2 s and as infinity: a decimal number only.
           {"0,5\n0x2,8\n", "line 2: expected time_s,value as two numbers (\"0x2\" is not a number)"},
           {"0,5\n2,inf\n", "line 2: expected time_s,value as two numbers (\"inf\" is not a number)"},
           {"0,5\n3,8\n2,9\n", "line 3: expected a time after the previous point's"},
           {"0,5\n0,8\n", "line 2: expected a time after the previous point's"},
           {"-1,5\n", "line 1: expected a time in [0, 1e9] s"},
           {"0,5\n1,-3\n", "line 2: expected 0 or a value in [0.001, 1e+09] Mbit/s"},
           {"# a comment\n\n0,5\n2e9,5\n", "line 4: expected a time in [0, 1e9] s"},
           {"time_s,mbps\n", "expected at least one time_s,value row"}}) {
    write("t.csv", text);
    refused("validate s.json --kernels none", trace + ": " + expected);
    refused("validate s.json --kernels none",
            "(in the CSV file that s.json: /network/profiles/0/capacity_mbps/csv names)");
  }
  // A byte order mark before a row without a header: the row is read, not
  // taken for a header.
  write("t.csv",
        "\xEF\xBB\xBF"
        "0,7\n1,9\n");
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r").code, 0);
  std::ifstream events(path("r/gossip/events.csv"));
  const std::string rows((std::istreambuf_iterator<char>(events)), std::istreambuf_iterator<char>());
  EXPECT_NE(rows.find("gossip,0.000000000,capacity,up n0,7,"), std::string::npos) << rows;
  EXPECT_NE(rows.find("gossip,1.000000000,capacity,up n0,9,"), std::string::npos) << rows;
}

// Churn periods below 1 ms (they were raised to 1 ms without a word), a
// region selector on a topology without regions or that names none (an
// empty one selected every node), a peer graph that cannot be connected
// (its message read "expected could not draw ...").
TEST_F(BadInput, SelectorsAndDrawsSayWhatIsWrong) {
  nlohmann::json j = scenario();
  j["churn"] = {{{"all", true}, {"cycle", {{"up_s", 0.0001}, {"down_s", 1}, {"until_s", 2}}}}};
  write("c.json", j);
  refused("validate c.json --kernels none", "c.json: /churn/0/cycle/up_s: expected a number >= 0.001");
  j["churn"] = {{{"all", true},
                 {"cycle", {{"up_s", {{"dist", "exponential"}, {"mean", 0.0005}}}, {"down_s", 1}, {"until_s", 2}}}}};
  write("c.json", j);
  refused("validate c.json --kernels none", "c.json: /churn/0/cycle/up_s/mean: expected a number >= 0.001");
  j = scenario();
  j["churn"] = {{{"region", ""}, {"events", {{1, "crash"}}}}};
  write("c.json", j);
  refused("validate c.json --kernels none", "c.json: /churn/0/region: expected a region, of a topology that has them");
  j["topology"] = {{"generator", "geo"}, {"nodes", 8}, {"regions_file", "cloud8"}};
  j["churn"][0]["region"] = "eu-wset-1";
  write("c.json", j);
  refused("validate c.json --kernels none",
          "c.json: /churn/0/region: expected a region that holds compute nodes: one of ap-northeast-1, ");
  j = scenario();
  j["topology"] = {{"generator", "random-regular"}, {"nodes", 6}, {"degree", 1}};
  write("c.json", j);
  refused(
      "validate c.json --kernels none",
      "c.json: /topology/degree: expected a degree >= 2 (a 1-regular graph is pairs: never connected beyond 2 nodes)");
}

// A second run (or sweep) into a folder another process is writing is
// refused in one line, nothing touched; the claim is the kernel's, so a
// killed run never leaves a folder stuck. The test holds the claim itself
// (flock on <folder>.lock, as a run in progress does), which makes the
// overlap certain instead of a matter of timing.
TEST_F(BadInput, TwoRunsIntoOneFolderAtOnceTheSecondIsRefused) {
  write("s.json", scenario());
  ASSERT_EQ(gossipsim("run s.json --kernels none --quiet --out r").code, 0);
  {
    const int fd = ::open(path("r.lock").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    ASSERT_EQ(::write(fd, "4242", 4), 4);
    refused("run s.json --kernels none --quiet --out r --force",
            "--out r: expected a folder no other gossipsim is writing; process 4242 is writing it now");
    ::close(fd);
  }
  EXPECT_TRUE(fs::exists(path("r/summary.json")));
  // The holder is gone (as after a kill): its lock file is taken over and removed at the end.
  EXPECT_EQ(gossipsim("run s.json --kernels none --quiet --out r --force").code, 0);
  EXPECT_FALSE(fs::exists(path("r.lock")));
  nlohmann::json sweep = {{"name", "sw"}, {"base", "s.json"}, {"axes", {{{"path", "/seed"}, {"values", {1, 2}}}}}};
  write("sw.json", sweep);
  const int fd = ::open(path("sw-out.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  refused("sweep sw.json --kernels none --out sw-out", "--out sw-out: expected a folder no other gossipsim is writing");
  ::close(fd);
  EXPECT_FALSE(fs::exists(path("sw-out/points")));
}

// The scenario is kept in the checkpoint, but the files it names are read
// again on resume: one that changed since the run began is refused, naming
// it and where the scenario names it, instead of silently mixing two inputs.
TEST_F(BadInput, ResumeRefusesInputsThatChangedSinceTheRunBegan) {
  nlohmann::json j = scenario();
  j["stop"]["virtual_s"] = 6;
  j["network"]["profiles"] = {{{"access", 0}, {"capacity_mbps", {{"csv", "trace.csv"}}}}};
  write("trace.csv", "time_s,mbps\n0,50\n3,5\n");
  write("s.json", j);
  Result r;
  r.code = test::run_shell("cd " + dir_.string() + " && GOSSIPSIM_TEST_RAISE=2:9 " + GOSSIPSIM_BINARY +
                               " run s.json --kernels none --quiet --out r --checkpoint-every 1",
                           &r.out);
  ASSERT_EQ(r.code, 128 + 9) << r.out;
  write("trace.csv", "time_s,mbps\n0,50\n3,500\n");
  refused("run --resume r", "r.checkpoint/checkpoint.json: /network/profiles/0/capacity_mbps/csv: expected " +
                                path("trace.csv").string() + " as it was when the run began; it has changed since");
  fs::remove(path("trace.csv"));
  refused("run --resume r", "/network/profiles/0/capacity_mbps/csv: expected " + path("trace.csv").string() +
                                ", which the run began with; it is gone or unreadable");
  write("trace.csv", "time_s,mbps\n0,50\n3,5\n");
  EXPECT_EQ(gossipsim("run --resume r").code, 0);
  EXPECT_TRUE(fs::exists(path("r/summary.json")));
}

// Every write error ends in one line naming the path and the reason, exit 2,
// and leaves nothing that looks whole: no result folder, no staging folder,
// no half-written checkpoint. A full disk is played by a file-size limit
// (ulimit -f, as any user; writes fail with EFBIG) and, where this process
// may mount (root), by a tiny tmpfs in a mount namespace of the test's own
// (ENOSPC; read-only with EROFS), which vanishes with the command.
TEST_F(BadInput, WriteErrorsAreOneLineAndLeaveNothingHalfWritten) {
  write("s.json", scenario());
  auto limited = [&](const std::string& args) {
    Result r;
    r.code = test::run_shell(
        "cd " + dir_.string() + " && ulimit -f 8 && trap '' XFSZ && timeout 60 " + GOSSIPSIM_BINARY + " " + args,
        &r.out);
    return r;
  };
  auto expect_one_line = [](const Result& r, const std::string& expected) {
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  };
  // A transfers.csv above 8 kB: the run's own files.
  expect_one_line(limited("run s.json --kernels none --quiet --out big"), "gossipsim: error: cannot write ");
  expect_one_line(limited("run s.json --kernels none --quiet --out big"), ": File too large");
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind("big", 0), std::string::npos) << "left behind: " << e.path();

  const bool can_mount = test::run_shell("unshare -m sh -c 'mount -t tmpfs -o size=8k tmpfs " + dir_.string() +
                                         " && umount " + dir_.string() + "'") == 0;
  if (!can_mount) GTEST_SKIP() << "no mount namespace here (needs root): the tmpfs cases are skipped";
  fs::create_directories(path("disk"));
  auto on_tmpfs = [&](const std::string& options, const std::string& args) {
    Result r;
    r.code = test::run_shell("cd " + dir_.string() + " && unshare -m sh -c 'mount -t tmpfs -o " + options +
                                 " tmpfs disk && timeout 60 " + GOSSIPSIM_BINARY + " " + args +
                                 "; rc=$?; find disk -mindepth 1 | sort | sed s/^/LEFT:/; exit $rc'",
                             &r.out);
    return r;
  };
  Result full = on_tmpfs("size=64k", "run s.json --kernels none --quiet --out disk/r");
  EXPECT_EQ(full.code, 2) << full.out;
  EXPECT_NE(full.out.find(": No space left on device"), std::string::npos) << full.out;
  EXPECT_EQ(full.out.find("LEFT:"), std::string::npos) << full.out;
  // Checkpoints every virtual second until the disk is full: the last whole
  // one stays, nothing half-written beside it.
  nlohmann::json teaching = scenario();
  teaching["stop"]["virtual_s"] = 20;
  write("t.json", teaching);
  Result ckpt = on_tmpfs("size=160k", "run t.json --kernels none --quiet --out disk/r --checkpoint-every 0.5 --trace");
  EXPECT_EQ(ckpt.code, 2) << ckpt.out;
  EXPECT_NE(ckpt.out.find(": No space left on device"), std::string::npos) << ckpt.out;
  EXPECT_NE(ckpt.out.find("LEFT:disk/r.checkpoint/current/state.json"), std::string::npos) << ckpt.out;
  for (const char* half : {"LEFT:disk/r.checkpoint/current.new", "LEFT:disk/r.tmp-", "LEFT:disk/r\n"})
    EXPECT_EQ(ckpt.out.find(half), std::string::npos) << half << " in\n" << ckpt.out;
  Result ro = on_tmpfs("size=1m,ro", "run s.json --kernels none --quiet --out disk/r");
  EXPECT_EQ(ro.code, 2) << ro.out;
  EXPECT_NE(ro.out.find("gossipsim: error: cannot write disk/r"), std::string::npos) << ro.out;
  EXPECT_NE(ro.out.find(": Read-only file system"), std::string::npos) << ro.out;
  Result deep = on_tmpfs("size=1m,ro", "run s.json --kernels none --quiet --out disk/a/b/c");
  EXPECT_EQ(deep.code, 2) << deep.out;
  EXPECT_NE(deep.out.find(": Read-only file system"), std::string::npos) << deep.out;
}

}  // namespace
}  // namespace gossipsim
