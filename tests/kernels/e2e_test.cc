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
  }
  for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv"})
    EXPECT_GT(fs::file_size(out / "gossip-scheduled" / f), 100u) << f;
  fs::remove_all(out);
}

}  // namespace
}  // namespace gossipsim
