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
    return test::run_shell("cd " + dir_.string() + " && " + env + " " + GOSSIPSIM_BINARY + " run --quiet " + args,
                           out);
  }
  void expect_same_csvs(const std::string& a, const std::string& b, const std::vector<std::string>& methods) {
    for (const auto& m : methods)
      for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv"}) {
        const std::string x = read(dir_ / a / m / f), y = read(dir_ / b / m / f);
        EXPECT_FALSE(x.empty()) << a << "/" << m << "/" << f;
        EXPECT_TRUE(x == y) << m << "/" << f << " differs between " << a << " and " << b;
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
const std::vector<std::string> kTeachingMethods = {"gossip", "gossip-overlap", "gossip-scheduled", "allreduce", "single"};

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
            std::string::npos) << said;
  EXPECT_EQ(read(dir_ / "r/notes.txt"), "mine");
  fs::remove_all(dir_ / "r");
  std::ofstream(dir_ / "r.checkpoint/current/learner.bin") << "garbage";
  EXPECT_EQ(run("--resume r", "", &said), 2);
  EXPECT_NE(said.find("r.checkpoint/current: learner state: expected a whole checkpoint"), std::string::npos) << said;
}

}  // namespace
}  // namespace gossipsim
