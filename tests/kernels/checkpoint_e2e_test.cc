// Long runs survive interruption, end to end with real training: a run
// killed with SIGKILL (once, and again while it resumes) and resumed with
// `gossipsim run --resume` writes CSVs byte-identical to a run that was
// never interrupted; SIGTERM stops it cleanly with a last checkpoint and
// outputs marked incomplete. The kill comes from inside the process right
// after its N-th checkpoint (GOSSIPSIM_TEST_RAISE=N:SIGNAL), so the test
// does not depend on timing.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../test_util.h"
#include "analysis/summary.h"
#include "tests/kernels/workload_files.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class Interrupted : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gossipsim-interrupt-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int run(const std::string& args, const std::string& env = "", std::string* out = nullptr) {
    return test::run_shell("cd " + dir_.string() + " && " + env + " " + GOSSIPSIM_BINARY + " run --quiet " + args, out);
  }
  // Every file of every method's folder (and the run's summary), byte for
  // byte, but for the wall-clock figures of summary.json.
  void expect_same_csvs(const std::string& a, const std::string& b, const std::vector<std::string>& methods) {
    auto without_wall = [](nlohmann::json s) {
      for (auto* m : {&s, s.contains("methods") ? &s["methods"] : nullptr})
        if (m && m->is_array())
          for (auto& x : *m)
            for (const char* k : kMachineMeasures) x.erase(k);
      for (const char* k : kMachineMeasures) s.erase(k);
      return s.dump(1);
    };
    EXPECT_EQ(without_wall(nlohmann::json::parse(read(dir_ / a / "summary.json"))),
              without_wall(nlohmann::json::parse(read(dir_ / b / "summary.json"))));
    for (const auto& m : methods) {
      size_t files = 0;
      for (const auto& e : fs::directory_iterator(dir_ / a / m)) {
        const std::string f = e.path().filename().string();
        ++files;
        std::string x = read(e.path()), y = read(dir_ / b / m / f);
        if (f == "summary.json") x = without_wall(nlohmann::json::parse(x)), y = without_wall(nlohmann::json::parse(y));
        EXPECT_FALSE(x.empty()) << a << "/" << m << "/" << f;
        EXPECT_TRUE(x == y) << m << "/" << f << " differs between " << a << " and " << b;
      }
      EXPECT_GE(files, 6u) << m;
    }
  }
  // Nothing left beside the result: no checkpoint, no staging folder.
  void expect_clean(const std::string& out) {
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(name.rfind(out + ".", 0) != 0) << "left behind: " << name;
    }
  }
  fs::path dir_;
};

// Two workers: the kernels run on the per-node chains, as in real runs.
const std::string kTeaching =
    std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json --set /stop/virtual_s=5 --workers 2";
const std::vector<std::string> kTeachingMethods = {"gossip", "gossip-overlap", "gossip-scheduled", "allreduce",
                                                   "single"};

TEST_F(Interrupted, TeachingScenarioKilledTwiceResumesToTheSameBytes) {
  ASSERT_EQ(run(kTeaching + " --out straight"), 0);
  // 1 s checkpoints over 5 methods: the 8th lies in the second method.
  EXPECT_EQ(run(kTeaching + " --out killed --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=8:9"), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(dir_ / "killed"));
  EXPECT_TRUE(fs::exists(dir_ / "killed.checkpoint/checkpoint.json"));
  // Killed again while resuming, at its 3rd checkpoint.
  EXPECT_EQ(run("--resume killed", "GOSSIPSIM_TEST_RAISE=3:9"), 128 + SIGKILL);
  std::string said;
  ASSERT_EQ(run("--resume killed", "", &said), 0) << said;
  expect_same_csvs("straight", "killed", kTeachingMethods);
  expect_clean("killed");
  EXPECT_EQ(nlohmann::json::parse(read(dir_ / "killed/summary.json"))["methods"].size(), 5u);
}

// Regions (comm_regions.csv, consensus_regions.csv with the consensus split
// within and between them) and churn: resume used to lose the split of
// every evaluation before the checkpoint.
TEST_F(Interrupted, GeoScenarioWithChurnKilledResumesEveryFileToTheSameBytes) {
  const std::string geo =
      kTeaching + R"( --set '/topology={"generator":"geo","nodes":12,"regions_file":"cloud8"}')" +
      R"( --set '/churn=[{"fraction":0.3,"cycle":{"up_s":{"dist":"exponential","mean":2},"down_s":1,"until_s":5}}]')" +
      " --methods gossip,gossip-scheduled,allreduce";
  ASSERT_EQ(run(geo + " --out straight"), 0);
  EXPECT_EQ(run(geo + " --out killed --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=6:9"), 128 + SIGKILL);
  std::string said;
  ASSERT_EQ(run("--resume killed", "", &said), 0) << said;
  expect_same_csvs("straight", "killed", {"gossip", "gossip-scheduled", "allreduce"});
  // Every evaluation, those before the checkpoint too, has its split.
  const std::string split = read(dir_ / "killed/gossip/consensus_regions.csv");
  EXPECT_EQ(split.find(",,"), std::string::npos) << split;
  EXPECT_EQ(split.find(",\n"), std::string::npos) << split;
  expect_clean("killed");
}

TEST_F(Interrupted, SigtermStopsCleanlyAndMarksTheOutputsIncomplete) {
  ASSERT_EQ(run(kTeaching + " --out straight"), 0);
  std::string said;
  EXPECT_EQ(run(kTeaching + " --out stopped --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=7:15", &said), 128 + SIGTERM);
  EXPECT_NE(said.find("continue with: gossipsim run --resume stopped"), std::string::npos) << said;
  auto marker = nlohmann::json::parse(read(dir_ / "stopped/.gossipsim"));
  EXPECT_EQ(marker["complete"], false);
  auto summary = nlohmann::json::parse(read(dir_ / "stopped/summary.json"));
  EXPECT_EQ(summary["complete"], false);
  EXPECT_EQ(summary["methods"].back()["stop_reason"], "interrupted");
  ASSERT_EQ(run("--resume stopped", "", &said), 0) << said;
  expect_same_csvs("straight", "stopped", kTeachingMethods);
  EXPECT_FALSE(nlohmann::json::parse(read(dir_ / "stopped/.gossipsim")).contains("complete"));
  EXPECT_EQ(nlohmann::json::parse(read(dir_ / "stopped/summary.json"))["complete"], true);
  expect_clean("stopped");
}

// A run without --checkpoint-every that a signal stops in its second method
// takes one checkpoint then; the first method's outputs must be in it (they
// were not, and the resume failed: "cannot write OUT.tmp-PID/<method>").
TEST_F(Interrupted, AStopInALaterMethodWithoutPeriodicCheckpointsResumesToTheSameBytes) {
  const std::string two = kTeaching + " --methods gossip,gossip-scheduled";
  ASSERT_EQ(run(two + " --out straight"), 0);
  std::string said;
  EXPECT_EQ(run(two + " --out stopped", "GOSSIPSIM_TEST_RAISE_AT=gossip-scheduled:15", &said), 128 + SIGTERM) << said;
  ASSERT_TRUE(fs::exists(dir_ / "stopped.checkpoint/methods/gossip/metrics.csv"));
  ASSERT_EQ(run("--resume stopped", "", &said), 0) << said;
  expect_same_csvs("straight", "stopped", {"gossip", "gossip-scheduled"});
  expect_clean("stopped");
}

// A TorchScript model, a data file of tensors and a split file (docs/workloads.md).
TEST_F(Interrupted, AnOwnWorkloadKilledResumesToTheSameBytesAndRefusesAChangedDataFile) {
  test::save_module((dir_ / "mlp.pt").string(),
                    {{"w1", 0.3 * torch::ones({6, 4})},
                     {"b1", torch::zeros({6})},
                     {"w2", 0.1 * torch::ones({4, 6})},
                     {"b2", torch::zeros({4})}},
                    {},
                    "def forward(self, x):\n  return torch.linear(torch.relu(torch.linear(x, self.w1, self.b1)), "
                    "self.w2, self.b2)\n");
  test::save_blobs((dir_ / "blobs.pt").string(), 240, 40, 4, 4);
  {
    std::ofstream split(dir_ / "split.txt");
    for (int i = 0; i < 240; ++i) split << "n" << (i / 10) % 6 << "\n";
  }
  const nlohmann::json s = test::own_scenario("mlp.pt", 6, {"gossip", "gossip-scheduled", "allreduce"}, 4);
  std::ofstream(dir_ / "own.json") << s.dump(1);
  ASSERT_EQ(run("own.json --workers 2 --out straight"), 0);
  EXPECT_EQ(run("own.json --workers 2 --out killed --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=5:9"), 128 + SIGKILL);
  std::string said;
  ASSERT_EQ(run("--resume killed", "", &said), 0) << said;
  expect_same_csvs("straight", "killed", {"gossip", "gossip-scheduled", "allreduce"});
  expect_clean("killed");
  // New data under the same name: the resume refuses to mix them.
  EXPECT_EQ(run("own.json --out changed --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=2:9"), 128 + SIGKILL);
  test::save_blobs((dir_ / "blobs.pt").string(), 240, 41, 4, 4);
  EXPECT_EQ(run("--resume changed", "", &said), 2) << said;
  EXPECT_NE(said.find("/workload/dataset/tensors: expected " + (dir_ / "blobs.pt").string() +
                      " as it was when the run began"),
            std::string::npos)
      << said;
}

TEST_F(Interrupted, FashionMnistTrainingOnTwoWorkersResumesToTheSameBytes) {
  const std::string q = std::string(GOSSIPSIM_SOURCE_DIR) +
                        "/scenarios/quickstart.json --workers 2 --set /stop/virtual_s=6 --set /eval/every_s=2 "
                        "--set /eval/test_samples=200 --methods gossip-scheduled,gossip-overlap";
  ASSERT_EQ(run(q + " --out straight"), 0);
  EXPECT_EQ(run(q + " --out killed --checkpoint-every 1.5", "GOSSIPSIM_TEST_RAISE=2:9"), 128 + SIGKILL);
  std::string said;
  ASSERT_EQ(run("--resume killed", "", &said), 0) << said;
  expect_same_csvs("straight", "killed", {"gossip-scheduled", "gossip-overlap"});
  expect_clean("killed");
}

TEST_F(Interrupted, ResumeWithoutACheckpointSaysSo) {
  std::string said;
  EXPECT_EQ(run("--resume nothing-here", "", &said), 2);
  EXPECT_NE(said.find("nothing-here.checkpoint/checkpoint.json not found"), std::string::npos) << said;
  EXPECT_EQ(run(kTeaching + " --resume x", "", &said), 2);
  EXPECT_NE(said.find("a scenario file, or --resume"), std::string::npos) << said;
  // A checkpoint whose result folder now holds someone's files: refused
  // before anything runs, nothing touched; a damaged learner state names
  // its checkpoint.
  EXPECT_EQ(run(kTeaching + " --out r --checkpoint-every 1", "GOSSIPSIM_TEST_RAISE=2:9"), 128 + SIGKILL);
  fs::create_directories(dir_ / "r");
  std::ofstream(dir_ / "r/notes.txt") << "mine";
  EXPECT_EQ(run("--resume r", "", &said), 2);
  EXPECT_NE(said.find("--resume r: expected a new folder, an empty one or an earlier gossipsim result"),
            std::string::npos)
      << said;
  EXPECT_EQ(read(dir_ / "r/notes.txt"), "mine");
  fs::remove_all(dir_ / "r");
  std::ofstream(dir_ / "r.checkpoint/current/learner.bin") << "garbage";
  EXPECT_EQ(run("--resume r", "", &said), 2);
  EXPECT_NE(said.find("r.checkpoint/current: learner state: expected a whole checkpoint"), std::string::npos) << said;
}

}  // namespace
}  // namespace gossipsim
