// The stacked mlp (kernels/fusion.h) against the per-node path, bit for bit:
// the same steps (forward, backward, SGD with momentum and weight decay,
// several learning rates) and the same evaluations, computed here through
// the per-node module view and compared with torch::equal.
#include "kernels/fusion.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../test_util.h"
#include "kernels/models.h"
#include "kernels/node_store.h"
#include "kernels/sgd.h"

namespace gossipsim {
namespace {

struct Nodes {
  WorkloadSpec spec;
  std::shared_ptr<Net> net;
  std::unique_ptr<NodeStore> store;
  Nodes(int nodes, int64_t features, std::vector<int64_t> hidden, int classes) {
    spec.model.name = "mlp";
    spec.model.hidden = hidden;
    spec.batch = 32;
    spec.optimizer.lr = 0.05;
    spec.optimizer.momentum = 0.9;
    spec.optimizer.weight_decay = 1e-3;
    torch::manual_seed(7);
    net = make_model(spec.model, {features}, classes);
    store = std::make_unique<NodeStore>(*net, nodes, true);
    // Nodes that differ: each row moved by noise of its own.
    store->params.add_(torch::randn(store->params.sizes()) * 0.05);
  }
};

TEST(Fusion, StackedStepsAndEvaluationsEqualPerNodeOnesBitForBit) {
  const int nodes = 6, classes = 10;
  const int64_t features = 37, batch = 32;  // a width that leaves vector tails in every row
  Nodes fused(nodes, features, {64, 48}, classes), single(nodes, features, {64, 48}, classes);
  ASSERT_TRUE(torch::equal(fused.store->params, single.store->params));
  ASSERT_TRUE(StackedMlp::supports(fused.spec, features, classes, false, {128, 104}));
  StackedMlp stacked(*fused.store);
  ModuleView view(make_model(single.spec.model, {features}, classes), *single.store);
  const std::vector<int64_t> rows = {4, 0, 3, 5};  // a group in the order its steps were asked for
  const std::vector<double> lr = {0.05, 0.05, 0.025, 0.05};
  for (int round = 0; round < 3; ++round) {
    auto x = torch::randn({static_cast<int64_t>(rows.size()), batch, features});
    auto y = torch::randint(classes, {static_cast<int64_t>(rows.size()), batch}, torch::kInt64);
    const std::vector<double> losses = stacked.step(*fused.store, rows, x, y, fused.spec.optimizer, lr);
    for (size_t k = 0; k < rows.size(); ++k) {
      auto params = single.store->params[rows[k]];
      view.bind(params, single.store->buffers[rows[k]]);
      const torch::Tensor loss = forward_backward(view, x[k], y[k]);
      sgd_update(params, view.grad(), single.store->momentum[rows[k]], single.spec.optimizer, lr[k]);
      EXPECT_NEAR(losses[k], loss.item<double>(), 1e-6) << "round " << round << " node " << rows[k];
    }
    EXPECT_TRUE(torch::equal(fused.store->params, single.store->params)) << "round " << round;
    EXPECT_TRUE(torch::equal(fused.store->momentum, single.store->momentum)) << "round " << round;
  }
  // Evaluation: 232 test samples, chunks of 128 and 104.
  auto tx = torch::randn({232, features});
  auto ty = torch::randint(classes, {232}, torch::kInt64);
  const auto results = stacked.evaluate(*fused.store, {0, 1, 2, 3, 4, 5}, tx, ty);
  torch::NoGradGuard guard;
  for (int n = 0; n < nodes; ++n) {
    view.bind(single.store->params[n], single.store->buffers[n]);
    view.net().eval();
    double correct = 0, loss = 0;
    for (int64_t at = 0; at < 232; at += kEvaluationChunk) {
      const int64_t len = std::min<int64_t>(kEvaluationChunk, 232 - at);
      auto logits = view.net().forward(tx.narrow(0, at, len));
      // Each sample's loss in double, summed (the evaluation's definition).
      loss +=
          torch::nn::functional::cross_entropy(logits, ty.narrow(0, at, len),
                                               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
              .to(torch::kDouble)
              .sum()
              .item<double>();
      correct += logits.argmax(1).eq(ty.narrow(0, at, len)).sum().item<double>();
    }
    EXPECT_EQ(results[n].first, correct / 232) << n;
    EXPECT_EQ(results[n].second, loss / 232) << n;
  }
}

TEST(Fusion, OnlyShapesWhoseProductsTakeThePerEntryPathAreFused) {
  WorkloadSpec spec;
  spec.model.name = "mlp";
  spec.model.hidden = {64};
  spec.batch = 32;
  EXPECT_TRUE(StackedMlp::supports(spec, 64, 10, false, {128, 104}));
  EXPECT_FALSE(StackedMlp::supports(spec, 64, 10, true, {128}));  // augmented data
  spec.model.hidden = {16};
  EXPECT_TRUE(StackedMlp::supports(spec, 16, 10, false, {128}));
  EXPECT_FALSE(StackedMlp::supports(spec, 16, 10, false, {128, 1}));  // a last chunk of 1: 1 x 16 x 16 < 400
  spec.model.hidden = {64};
  spec.batch = 1;
  EXPECT_FALSE(StackedMlp::supports(spec, 8, 2, false, {128}));  // 1 x 64 x 2 = 128 < 400
  spec.model.name = "cnn";
  EXPECT_FALSE(StackedMlp::supports(spec, 784, 10, false, {128}));
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Whole runs: every method of the teaching scenario (an mlp), with momentum,
// weight decay and a step schedule, fused or not, on one worker or two,
// write the same CSVs byte for byte. Which steps are fused depends on the
// order the event loop asks for them alone; the numbers on nothing.
TEST(Fusion, RunsWriteTheSameCsvsFusedOrNotOnOneWorkerOrTwo) {
  const std::string dir = std::filesystem::temp_directory_path() / ("gossipsim-fusion-" + std::to_string(::getpid()));
  const std::string base =
      std::string(GOSSIPSIM_BINARY) + " run " + GOSSIPSIM_SOURCE_DIR +
      "/scenarios/teaching/synthetic-4.json --quiet --force --set /stop/virtual_s=6 "
      "--set /workload/optimizer/momentum=0.9 --set /workload/optimizer/weight_decay=0.0005 "
      "--set '/workload/optimizer/schedule={\"kind\":\"step\",\"every_epochs\":0.5,\"gamma\":0.5}'";
  const std::vector<std::pair<std::string, std::string>> runs = {{"fused1", "--workers 1"},
                                                                 {"fused2", "--workers 2"},
                                                                 {"single1", "--workers 1 --set /workload/fuse=false"},
                                                                 {"single2", "--workers 2 --set /workload/fuse=false"}};
  for (const auto& [name, args] : runs) {
    std::string said;
    ASSERT_EQ(test::run_shell(base + " " + args + " --out " + dir + "/" + name, &said), 0) << said;
  }
  const auto summary = nlohmann::json::parse(read_file(dir + "/fused1/summary.json"));
  EXPECT_TRUE(summary["provenance"]["fuse"].get<bool>());
  int compared = 0;
  for (const auto& m : summary["methods"])
    for (const char* csv : {"metrics.csv", "transfers.csv", "nodes.csv", "events.csv", "comm_matrix.csv"}) {
      const std::string label = m["label"], reference = read_file(dir + "/fused1/" + label + "/" + csv);
      ASSERT_FALSE(reference.empty()) << label << " " << csv;
      for (const auto& [name, args] : runs)
        EXPECT_EQ(read_file(dir + "/" + name + "/" + label + "/" + csv), reference)
            << name << " " << label << " " << csv;
      ++compared;
    }
  EXPECT_EQ(compared, 5 * 5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim
