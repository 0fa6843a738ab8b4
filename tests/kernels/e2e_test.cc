// End to end on real Fashion-MNIST (Debian's dataset-fashion-mnist), on a
// small subset so it stays in seconds.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

TEST(EndToEnd, FashionMnistGossipLearnsAndWritesItsResults) {
  ASSERT_TRUE(fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
      << "install Debian's dataset-fashion-mnist (scripts/setup does)";
  fs::path out = fs::temp_directory_path() / ("gossipsim-e2e-" + std::to_string(::getpid()));
  std::string cmd = std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
                    "/scenarios/quickstart.json --quiet --out " + out.string() +
                    " --methods gossip-overlap,gossip-scheduled --set /topology/nodes=4 --set /stop/virtual_s=8"
                    " --set /workload/train_samples=4000 --set /eval/every_s=4 --set /eval/test_samples=500 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out / "summary.json");
  auto summary = nlohmann::json::parse(in);
  ASSERT_EQ(summary["methods"].size(), 2u);
  for (const auto& m : summary["methods"]) {
    EXPECT_GT(m["final_accuracy"].get<double>(), 0.55) << m["label"];  // from 0.1 at the start
    EXPECT_GT(m["transfers"].get<int64_t>(), 20) << m["label"];
    EXPECT_GT(m["kernel_wall_s"].get<double>(), 0.0);
    // Three evaluations (0, 4, 8 s) of 4 node models and their average.
    EXPECT_GT(m["evaluation_wall_s"].get<double>(), 0.0);
    EXPECT_LT(m["evaluation_wall_s"].get<double>(), m["kernel_wall_s"].get<double>());
  }
  for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv"})
    EXPECT_GT(fs::file_size(out / "gossip-scheduled" / f), 100u) << f;
  fs::remove_all(out);
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

TEST(EndToEnd, PlotDrawsNonEmptyPicturesOfATinyRun) {
  fs::path out = fs::temp_directory_path() / ("gossipsim-plot-" + std::to_string(::getpid()));
  std::string run = std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
                    "/scenarios/teaching/synthetic-4.json --quiet --trace --out " + out.string() +
                    " --set /stop/virtual_s=4 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << run;
  std::string plot = std::string(GOSSIPSIM_BINARY) + " plot " + out.string() + " 2>&1";
  ASSERT_EQ(std::system(plot.c_str()), 0) << plot;
  for (const char* f : {"accuracy.png", "loss.png", "consensus.png", "staleness.png", "timeline-gossip.png",
                        "timeline-gossip-scheduled.png"})
    EXPECT_GT(fs::exists(out / f) ? fs::file_size(out / f) : 0, 5000u) << f;
  std::ifstream md(out / "time_to_accuracy.md");
  std::string table((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(table.find("| gossip-scheduled |"), std::string::npos) << table;
  EXPECT_NE(table.find("Speed-up of gossip-scheduled"), std::string::npos) << table;
  fs::remove_all(out);
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// CIFAR-100 cannot be downloaded here: a stand-in in its exact binary format,
// written by the test, runs the paper's CIFAR scenario end to end.
TEST(EndToEnd, Cifar100ScenarioRunsOnFilesInItsBinaryFormat) {
  fs::path dir = fs::temp_directory_path() / ("gossipsim-cifar-" + std::to_string(::getpid()));
  fs::create_directories(dir / "data");
  auto write = [&](const std::string& name, int records) {
    std::ofstream out(dir / "data" / name, std::ios::binary);
    for (int r = 0; r < records; ++r) {
      out.put(static_cast<char>(r % 20));
      out.put(static_cast<char>(r % 100));
      for (int i = 0; i < 3072; ++i) out.put(static_cast<char>((i * 7 + r * 13) % 256));
    }
  };
  write("train.bin", 64);
  write("test.bin", 16);
  std::string cmd =
      std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
      "/scenarios/paper/cifar100-heterogeneous.json --quiet --out " + (dir / "out").string() +
      " --set /workload/data_dir=" + (dir / "data").string() +
      " --set /topology/nodes=2 --set /stop/virtual_s=0.6 --set /eval/every_s=0.3 --set /eval/test_samples=16"
      " --methods scheduled-min-finish,allreduce 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir / "out" / "summary.json");
  auto summary = nlohmann::json::parse(in);
  ASSERT_EQ(summary["methods"].size(), 2u);
  for (const auto& m : summary["methods"]) {
    EXPECT_GT(m["iterations"].get<int64_t>(), 0);
    EXPECT_TRUE(m["final_accuracy"].is_number());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim
