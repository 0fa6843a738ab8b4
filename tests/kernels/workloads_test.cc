// Bring your own workload (docs/workloads.md): TorchScript models, data
// files of tensors and split files. Every file is written by the test
// (tests/kernels/workload_files.h); the expected values are computed here by
// hand. The comparison with the built-in cnn scripts it from Python
// (scripts/export-workload, python3-torch from scripts/setup).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../test_util.h"
#include "base/error.h"
#include "base/random.h"
#include "kernels/models.h"
#include "kernels/node_store.h"
#include "kernels/torch_learner.h"
#include "sim/methods/registry.h"
#include "tests/kernels/workload_files.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

class Workloads : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gossipsim-workloads-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // GOSSIPSIM_TEST_KEEP=1 keeps the files (e.g. the scripted cnn with the
  // built-in one's initial parameters, to compare whole runs by hand).
  void TearDown() override {
    if (!std::getenv("GOSSIPSIM_TEST_KEEP")) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  int gossipsim(const std::string& args, std::string* out = nullptr) const {
    return test::run_shell("cd " + dir_.string() + " && " + GOSSIPSIM_BINARY + " " + args, out);
  }
  // Refused by validate (and by run, where `also_run`; both read the
  // scenario alike): exit 2, one line that says `expected`, and no result
  // folder.
  void refused(const std::string& expected, bool also_run = false) const {
    std::vector<std::string> cmds = {"validate s.json"};
    if (also_run) cmds.push_back("run s.json --quiet --out o");
    for (const std::string& cmd : cmds) {
      std::string out;
      EXPECT_EQ(gossipsim(cmd, &out), 2) << cmd << "\n" << out;
      EXPECT_NE(out.find(expected), std::string::npos) << cmd << "\n" << out;
      EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
      EXPECT_FALSE(fs::exists(dir_ / "o")) << cmd;
    }
  }

  // Four nodes on a ring learn four blobs with a linear model, each node
  // holding one class (the split file).
  void write_small_workload(int64_t train = 200) {
    test::save_linear(path("linear.pt"), torch::zeros({4, 4}), torch::zeros({4}));
    test::save_blobs(path("blobs.pt"), train, 40, 4, 4);
    std::ofstream split(path("split.txt"));
    split << "node\n";
    for (int64_t i = 0; i < train; ++i) split << "n" << i % 4 << "\n";  // sample i has label i % 4
  }
  static nlohmann::json scenario(const std::vector<std::string>& methods = {"gossip", "gossip-scheduled"}) {
    return test::own_scenario("linear.pt", 4, methods, 3);
  }
  static bool python_torch() { return test::run_shell("/usr/bin/python3 -c 'import torch'") == 0; }
  // scripts/export-workload EXAMPLE, into this test's folder.
  void export_example(const std::string& example) const {
    std::string said;
    ASSERT_EQ(test::run_shell(
                  std::string(GOSSIPSIM_SOURCE_DIR) + "/scripts/export-workload " + example + " --out " + dir_.string(),
                  &said),
              0)
        << said;
  }
  void write(const std::string& name, const nlohmann::json& j) const { std::ofstream(path(name)) << j.dump(1); }
  // validate s.json with one value set refuses it in one line.
  void refused_value(const std::string& pointer, const std::string& value, const std::string& expected) const {
    std::string out;
    EXPECT_EQ(gossipsim("validate s.json --set '" + pointer + "=" + value + "'", &out), 2) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }

  fs::path dir_;
};

WorkloadSpec own_workload(const std::string& data, const std::string& model, int64_t batch, double lr) {
  WorkloadSpec w;
  w.dataset = DatasetKind::kTensors;
  w.data_file = data;
  w.model.name = "torchscript";
  w.model.torchscript = model;
  w.batch = batch;
  w.optimizer.lr = lr;
  return w;
}

TEST_F(Workloads, ATorchScriptStepEqualsAStepComputedByHand) {
  // z = W x + b on x = (1, 2), label 1; one SGD step of lr 0.5 on the
  // cross-entropy. By hand: z = (0.5, 0.2), p = softmax(z) = (0.574443,
  // 0.425557), dz = p - (0, 1),
  // dW = dz x^T, db = dz.
  const double W[2][2] = {{0.1, 0.2}, {0.3, -0.1}}, b[2] = {0.0, 0.1}, x[2] = {1, 2};
  const double z0 = W[0][0] * x[0] + W[0][1] * x[1] + b[0], z1 = W[1][0] * x[0] + W[1][1] * x[1] + b[1];
  ASSERT_NEAR(z0, 0.5, 1e-12);
  ASSERT_NEAR(z1, 0.2, 1e-12);
  const double p0 = std::exp(z0) / (std::exp(z0) + std::exp(z1));  // 0.574443
  const double dz[2] = {p0, (1 - p0) - 1};
  const std::vector<double> expected = {W[0][0] - 0.5 * dz[0] * x[0], W[0][1] - 0.5 * dz[0] * x[1],
                                        W[1][0] - 0.5 * dz[1] * x[0], W[1][1] - 0.5 * dz[1] * x[1],
                                        b[0] - 0.5 * dz[0],           b[1] - 0.5 * dz[1]};
  EXPECT_NEAR(expected[0], -0.1872215, 1e-6);  // the same by pencil

  test::save_linear(path("m.pt"), torch::tensor({0.1f, 0.2f, 0.3f, -0.1f}).view({2, 2}), torch::tensor({0.0f, 0.1f}));
  auto one = torch::tensor({1.0f, 2.0f}).view({1, 2});
  auto label = torch::tensor({int64_t(1)});
  test::save_tensors(path("d.pt"),
                     {{"x_train", one}, {"y_train", label}, {"x_test", one}, {"y_test", label}, {"classes", 2}});
  WorkloadSpec w = own_workload(path("d.pt"), path("m.pt"), 1, 0.5);
  auto learner = make_torch_factory(w, 1, 0)->make(1);
  EXPECT_EQ(learner->model_bytes(), bytes(4 * 6));
  auto before = snapshot_values(*learner->snapshot(0));
  EXPECT_EQ(before, std::vector<float>({0.1f, 0.2f, 0.3f, -0.1f, 0.0f, 0.1f}));  // the file's, not a drawn init
  learner->step(0, Time());
  auto after = snapshot_values(*learner->snapshot(0));
  ASSERT_EQ(after.size(), 6u);
  for (size_t k = 0; k < 6; ++k) EXPECT_NEAR(after[k], expected[k], 1e-6) << "parameter " << k;
}

TEST_F(Workloads, AnEmbeddingOfTokenIdsStepsAsComputedByHand) {
  // h = (E[0] + E[2]) / 2 for the tokens (0, 2), z = W h + b, label 1, lr 1.
  // By hand: dz = softmax(z) - (0, 1); dW = dz h^T; db = dz; dh = W^T dz;
  // dE[0] = dE[2] = dh / 2; E[1] is not touched.
  const double E[3][2] = {{0.5, -0.5}, {1.0, 1.0}, {0.1, 0.3}}, W[2][2] = {{1.0, 0.0}, {0.5, -1.0}}, b[2] = {0.0, 0.2};
  const double h[2] = {(E[0][0] + E[2][0]) / 2, (E[0][1] + E[2][1]) / 2};                                // (0.3, -0.1)
  const double z[2] = {W[0][0] * h[0] + W[0][1] * h[1] + b[0], W[1][0] * h[0] + W[1][1] * h[1] + b[1]};  // (0.3, 0.45)
  const double p0 = std::exp(z[0]) / (std::exp(z[0]) + std::exp(z[1]));
  const double dz[2] = {p0, (1 - p0) - 1};
  const double dh[2] = {W[0][0] * dz[0] + W[1][0] * dz[1], W[0][1] * dz[0] + W[1][1] * dz[1]};
  std::vector<double> expected = {E[0][0] - dh[0] / 2, E[0][1] - dh[1] / 2, E[1][0], E[1][1],
                                  E[2][0] - dh[0] / 2, E[2][1] - dh[1] / 2};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) expected.push_back(W[i][j] - dz[i] * h[j]);
  expected.push_back(b[0] - dz[0]);
  expected.push_back(b[1] - dz[1]);

  test::save_module(
      path("m.pt"),
      {{"emb", torch::tensor({0.5f, -0.5f, 1.0f, 1.0f, 0.1f, 0.3f}).view({3, 2})},
       {"weight", torch::tensor({1.0f, 0.0f, 0.5f, -1.0f}).view({2, 2})},
       {"bias", torch::tensor({0.0f, 0.2f})}},
      {},
      "def forward(self, x):\n  return torch.linear(torch.embedding(self.emb, x).mean(1), self.weight, self.bias)\n");
  auto tokens = torch::tensor({int64_t(0), int64_t(2)}).view({1, 2});
  auto label = torch::tensor({int64_t(1)});
  test::save_tensors(path("d.pt"),
                     {{"x_train", tokens}, {"y_train", label}, {"x_test", tokens}, {"y_test", label}, {"classes", 2}});
  WorkloadSpec w = own_workload(path("d.pt"), path("m.pt"), 1, 1.0);
  auto learner = make_torch_factory(w, 1, 0)->make(1);
  learner->step(0, Time());
  auto after = snapshot_values(*learner->snapshot(0));
  ASSERT_EQ(after.size(), expected.size());
  for (size_t k = 0; k < after.size(); ++k) EXPECT_NEAR(after[k], expected[k], 1e-6) << "parameter " << k;
  EXPECT_EQ(check_torchscript(path("m.pt"), {2}, true).state_bytes, 4 * 12);
}

// The buffers of a saved snapshot: save_snapshot writes the parameters,
// then the buffers, each as an int64 count and that many float32 values.
std::vector<float> snapshot_buffers(const std::string& bytes) {
  int64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  size_t at = 8 + 4 * static_cast<size_t>(n);
  std::memcpy(&n, bytes.data() + at, 8);
  std::vector<float> out(static_cast<size_t>(n));
  std::memcpy(out.data(), bytes.data() + at + 8, 4 * out.size());
  return out;
}

TEST_F(Workloads, FloatBuffersAreEachNodesOwnAndMergedIntegerBuffersAreNot) {
  // `running` keeps half the last value plus the batch mean while training
  // (a running statistic, like BatchNorm's); `count` counts batches.
  test::save_module(path("m.pt"), {{"weight", torch::zeros({2, 2})}, {"bias", torch::zeros({2})}},
                    {{"running", torch::zeros({2})}, {"count", torch::zeros({}, torch::kInt64)}},
                    "def forward(self, x):\n"
                    "  if self.training:\n"
                    "    self.running.mul_(0.5).add_(x.mean(0))\n"
                    "    self.count.add_(1)\n"
                    "  return torch.linear(x, self.weight, self.bias)\n");
  auto x = torch::tensor({1.0f, 2.0f, 1.0f, 2.0f}).view({2, 2});  // two samples, both (1, 2)
  auto y = torch::tensor({int64_t(0), int64_t(1)});
  test::save_tensors(path("d.pt"), {{"x_train", x}, {"y_train", y}, {"x_test", x}, {"y_test", y}});
  WorkloadSpec w = own_workload(path("d.pt"), path("m.pt"), 1, 0.1);
  auto learner = make_torch_factory(w, 1, 0)->make(2);
  EXPECT_EQ(learner->model_bytes(), bytes(4 * (6 + 2)));  // the int64 counter is not node state
  learner->step(0, Time());
  EXPECT_EQ(snapshot_buffers(learner->save_snapshot(*learner->snapshot(0))), std::vector<float>({1.0f, 2.0f}));
  EXPECT_EQ(snapshot_buffers(learner->save_snapshot(*learner->snapshot(1))), std::vector<float>({0.0f, 0.0f}));
  learner->merge(1, learner->snapshot(0), 1.0, 1.0);  // averaged like the parameters
  EXPECT_EQ(snapshot_buffers(learner->save_snapshot(*learner->snapshot(1))), std::vector<float>({0.5f, 1.0f}));
}

TEST_F(Workloads, AScriptedModelFileReadsItsParametersInOrderAndChecksItsForward) {
  test::save_linear(path("m.pt"), torch::ones({3, 5}), torch::zeros({3}));
  EXPECT_EQ(check_torchscript(path("m.pt"), {5}).state_bytes, 4 * 18);
  EXPECT_EQ(check_torchscript(path("m.pt"), {5}).outputs, 3);
  EXPECT_EQ(check_torchscript(path("m.pt"), {1, 5}, false, {32, 128, 104}).outputs, 3);  // forward flattens
  auto refusal = [&](const std::string& file, std::vector<int64_t> shape, std::vector<int64_t> batches = {}) {
    try {
      check_torchscript(path(file), shape, false, batches);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal("m.pt", {4}).find("expected forward to run on 1 sample [1, 4] (one sample)"), std::string::npos)
      << refusal("m.pt", {4});
  // A forward that fails only on batches above 2 passed the one-sample
  // check, then ended the run in a TorchScript traceback naming no file:
  // the scenario's own batch and the evaluation's are checked too.
  test::save_module(path("small.pt"), {{"weight", torch::ones({3, 5})}, {"bias", torch::zeros({3})}}, {},
                    "def forward(self, x):\n"
                    "  assert x.size(0) <= 2, 'at most two samples'\n"
                    "  return torch.linear(x, self.weight, self.bias)\n");
  EXPECT_EQ(refusal("small.pt", {5}, {2, 1}), "accepted");
  const std::string batch = refusal("small.pt", {5}, {32, 128});
  EXPECT_NE(batch.find(path("small.pt") + ": forward: expected forward to run on 32 samples [32, 5] (a training batch "
                                          "of /workload/batch, with its backward pass); it failed (LibTorch: "),
            std::string::npos)
      << batch;
  EXPECT_NE(batch.find("at most two samples"), std::string::npos) << batch;
  EXPECT_EQ(std::count(batch.begin(), batch.end(), '\n'), 0) << batch;
  const std::string eval = refusal("small.pt", {5}, {2, 104});
  EXPECT_NE(eval.find("104 samples [104, 5] (an evaluation batch of the test samples)"), std::string::npos) << eval;
}

// Dropout draws from LibTorch's global generator: each step seeds it from
// (seed, node, step), one step at a time, so that two workers give the bytes
// of one.
TEST_F(Workloads, AModelWithDropoutGivesTheSameParametersOnOneWorkerAndOnTwo) {
  const std::string source =
      "def forward(self, x):\n  return torch.linear(torch.dropout(x, 0.5, self.training), self.weight, self.bias)\n";
  test::save_module(path("drop.pt"), {{"weight", torch::ones({4, 4})}, {"bias", torch::zeros({4})}}, {}, source);
  test::save_linear(path("plain.pt"), torch::ones({4, 4}), torch::zeros({4}));
  test::save_blobs(path("d.pt"), 64, 8, 4, 4);
  ModelSpec m;
  m.name = "torchscript";
  m.torchscript = path("drop.pt");
  EXPECT_TRUE(make_model(m, {4}, 4)->draws_random_numbers());
  m.torchscript = path("plain.pt");
  EXPECT_FALSE(make_model(m, {4}, 4)->draws_random_numbers());
  auto train = [&](int workers, uint64_t seed) {
    WorkloadSpec w = own_workload(path("d.pt"), path("drop.pt"), 4, 0.1);
    w.workers = workers;
    auto learner = make_torch_factory(w, seed, 0)->make(4);
    for (int round = 0; round < 5; ++round)
      for (NodeId n = 0; n < 4; ++n) learner->step(n, Time());
    std::vector<std::vector<float>> out;
    for (NodeId n = 0; n < 4; ++n) out.push_back(snapshot_values(*learner->snapshot(n)));
    return out;
  };
  const auto one = train(1, 3);
  EXPECT_EQ(one, train(2, 3));
  EXPECT_EQ(one, train(1, 3));
  EXPECT_NE(one, train(1, 4));  // the masks come from the seed
}

// The built-in cnn and the same network written in Python and scripted,
// starting from the same parameters, give the same bytes: with graph
// optimisation off each TorchScript operation is the one eager LibTorch runs.
TEST_F(Workloads, TheCnnScriptedFromPythonGivesTheBuiltInCnnsResultsByteForByte) {
  if (!python_torch()) GTEST_SKIP() << "python3-torch is missing (scripts/setup installs it)";
  std::string said;
  export_example("cnn");
  // The built-in cnn's initial parameters for seed 1, as the learner draws them.
  torch::manual_seed(Streams(1).seed_for("model-init"));
  ModelSpec cnn;
  cnn.name = "cnn";
  auto builtin = make_model(cnn, {1, 28, 28}, 10);
  auto script = torch::jit::load(path("cnn.pt"));
  auto ours = builtin->parameters();
  ASSERT_EQ(script.parameters().size(), ours.size());
  size_t k = 0;
  {
    torch::NoGradGuard guard;
    for (auto p : script.parameters()) {
      ASSERT_EQ(p.sizes(), ours[k].sizes()) << "parameter " << k;
      p.copy_(ours[k++]);
    }
  }
  script.save(path("cnn-init.pt"));
  const std::string q = std::string(GOSSIPSIM_SOURCE_DIR) +
                        "/scenarios/quickstart.json --quiet --workers 2 --methods gossip-overlap,gossip-scheduled "
                        "--set /topology/nodes=4 --set /stop/virtual_s=6 --set /workload/train_samples=2000 "
                        "--set /eval/every_s=2 --set /eval/test_samples=200";
  ASSERT_EQ(gossipsim("run " + q + " --out builtin", &said), 0) << said;
  ASSERT_EQ(gossipsim("run " + q + " --out scripted --set '/workload/model={\"torchscript\":\"" + path("cnn-init.pt") +
                          "\"}'",
                      &said),
            0)
      << said;
  for (const char* m : {"gossip-overlap", "gossip-scheduled"})
    for (const char* f : {"metrics.csv", "transfers.csv", "nodes.csv"}) {
      const std::string a = read(dir_ / "builtin" / m / f), b = read(dir_ / "scripted" / m / f);
      EXPECT_GT(a.size(), 100u) << m << "/" << f;
      EXPECT_TRUE(a == b) << m << "/" << f << " differs";
    }
}

TEST_F(Workloads, AModelTensorsAndASplitFileRunEveryMethodAndPlot) {
  write_small_workload();
  write("s.json", scenario(method_names()));
  std::string said;
  ASSERT_EQ(gossipsim("run s.json --quiet --out r", &said), 0) << said;
  auto summary = nlohmann::json::parse(read(dir_ / "r/summary.json"));
  ASSERT_EQ(summary["methods"].size(), method_names().size());
  // The split gives node k the 50 samples of class k, and nothing else.
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(summary["label_histogram"][n][c], n == c ? 50 : 0) << n << "," << c;
  for (const auto& m : summary["methods"]) EXPECT_GT(m["iterations"].get<int64_t>(), 0) << m["label"];
  ASSERT_EQ(gossipsim("plot r", &said), 0) << said;
  EXPECT_TRUE(fs::exists(dir_ / "r/accuracy.png"));
}

// The examples of scenarios/custom, with their files written by
// scripts/export-workload (tabular and text; lenet's needs Fashion-MNIST
// written out, 220 MB, and is run by hand: docs/workloads.md).
TEST_F(Workloads, TheTabularAndTextExamplesAreWrittenByTheExportScriptAndRun) {
  if (!python_torch()) GTEST_SKIP() << "python3-torch is missing (scripts/setup installs it)";
  std::string said;
  export_example("tabular");
  fs::copy_file(fs::path(GOSSIPSIM_SOURCE_DIR) / "scenarios/custom/tabular-sites.json", dir_ / "s.json");
  ASSERT_EQ(gossipsim("run s.json --quiet --out r --set /stop/virtual_s=4 --methods gossip-overlap,single", &said), 0)
      << said;
  auto summary = nlohmann::json::parse(read(dir_ / "r/summary.json"));
  // One site per node: 600 samples each.
  for (const auto& row : summary["label_histogram"]) {
    int64_t n = 0;
    for (const auto& c : row) n += c.get<int64_t>();
    EXPECT_EQ(n, 600);
  }
  // Token ids: integer inputs into a scripted embedding.
  export_example("text");
  fs::copy_file(fs::path(GOSSIPSIM_SOURCE_DIR) / "scenarios/custom/text-topics.json", dir_ / "t.json");
  ASSERT_EQ(gossipsim("run t.json --quiet --out text --set /stop/virtual_s=4 --methods gossip-overlap", &said), 0)
      << said;
  summary = nlohmann::json::parse(read(dir_ / "text/summary.json"));
  EXPECT_GT(summary["methods"][0]["final_accuracy"].get<double>(), 0.3);  // 4 topics: 0.25 by chance
}

TEST_F(Workloads, BadModelsDataAndSplitsAreRefusedInOneLineNamingTheFileAndWhatNamedIt) {
  write_small_workload();
  write("s.json", scenario());
  std::string said;
  ASSERT_EQ(gossipsim("validate s.json", &said), 0) << said;

  // The model.
  auto with_model = [&](const nlohmann::json& model) {
    auto s = scenario();
    s["workload"]["model"] = model;
    write("s.json", s);
  };
  with_model({{"torchscript", "missing.pt"}});
  refused(
      "s.json: /workload/model/torchscript: expected a TorchScript module saved by torch.jit.save "
      "(scripts/export-workload) (missing.pt not found)",
      true);
  std::ofstream(path("garbage.pt")) << "not a zip file";
  with_model({{"torchscript", "garbage.pt"}});
  refused("garbage.pt: expected a TorchScript module saved by torch.jit.save", true);
  refused("(in the TorchScript module that s.json: /workload/model/torchscript names)");
  test::save_linear(path("three.pt"), torch::zeros({4, 3}), torch::zeros({4}));  // 3 features, the data have 4
  with_model({{"torchscript", "three.pt"}});
  refused("three.pt: forward: expected forward to run on 1 sample [1, 4] (one sample); it failed (LibTorch:", true);
  test::save_linear(path("five.pt"), torch::zeros({5, 4}), torch::zeros({5}));  // 5 classes, the data have 4
  with_model({{"torchscript", "five.pt"}});
  refused("five.pt: forward: expected forward to return logits [n, 4], one per class of the data; it returns [n, 5]");
  test::save_module(path("int.pt"), {{"weight", torch::zeros({4, 4}, torch::kInt64)}}, {},
                    "def forward(self, x):\n  return x\n");
  with_model({{"torchscript", "int.pt"}});
  refused("int.pt: weight: expected float32 parameters (call .float() before saving); found Long");
  test::save_module(path("none.pt"), {}, {}, "def forward(self, x):\n  return x\n");
  with_model({{"torchscript", "none.pt"}});
  refused("none.pt: expected a module with at least one parameter to train");
  test::save_module(path("tuple.pt"), {{"weight", torch::zeros({4, 4})}}, {},
                    "def forward(self, x):\n  return (torch.linear(x, self.weight), x)\n");
  with_model({{"torchscript", "tuple.pt"}});
  refused("tuple.pt: forward: expected forward to return logits for 1 sample [1, 4] (one sample); it returned a Tuple");
  // A forward that fails only on batches above 2 passed the one-sample
  // check and failed in the run, in a traceback naming no file.
  test::save_module(path("two.pt"), {{"weight", torch::zeros({4, 4})}, {"bias", torch::zeros({4})}}, {},
                    "def forward(self, x):\n"
                    "  assert x.size(0) <= 2, 'at most two samples'\n"
                    "  return torch.linear(x, self.weight, self.bias)\n");
  with_model({{"torchscript", "two.pt"}});
  refused(
      "two.pt: forward: expected forward to run on 8 samples [8, 4] (a training batch of /workload/batch, with "
      "its backward pass); it failed (LibTorch: ",
      true);
  with_model({{"torchscript", 3}});
  refused("s.json: /workload/model/torchscript:");
  with_model({{"torchscript", ""}});
  refused("s.json: /workload/model/torchscript: expected the path of a TorchScript module");
  with_model({{"torchscript", "linear.pt"}, {"name", "cnn"}});
  refused("s.json: /workload/model/name: unknown key");
  with_model({{"torchscript", "."}});
  refused("s.json: /workload/model/torchscript: expected a TorchScript module saved by torch.jit.save");

  // The data.
  auto with_data = [&](const std::vector<std::pair<std::string, c10::IValue>>& entries) {
    test::save_tensors(path("d.pt"), entries);
    auto s = scenario();
    s["workload"]["dataset"] = {{"tensors", "d.pt"}};
    s["workload"]["partition"] = {{"kind", "iid"}};
    write("s.json", s);
  };
  auto x = torch::zeros({8, 4}), y = torch::arange(8, torch::kInt64).remainder(4);
  with_data({{"x_train", x}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: y_train: expected integer labels [samples] (missing)", true);
  refused("(in the data file that s.json: /workload/dataset/tensors names)");
  with_data({{"x_train", x}, {"y_train", y.to(torch::kFloat32)}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: y_train: expected integer labels [8], one per input; found Float 8");
  with_data({{"x_train", x}, {"y_train", y.narrow(0, 0, 7)}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: y_train: expected integer labels [8], one per input; found Long 7");
  with_data({{"x_train", x}, {"y_train", y + 4}, {"x_test", x}, {"y_test", y}, {"classes", 4}});
  refused("d.pt: y_train: expected labels in [0, 4) (classes); found 7");
  with_data({{"x_train", x}, {"y_train", y - 1}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: y_train: expected labels in [0, 4) (from the largest label); found -1");
  with_data({{"x_train", x}, {"y_train", y}, {"x_test", torch::zeros({8, 5})}, {"y_test", y}});
  refused("d.pt: x_test: expected samples of the shape of x_train's, [4]; found [5]");
  with_data({{"x_train", x.to(torch::kBool)}, {"y_train", y}, {"x_test", x}, {"y_test", y}});
  refused(
      "d.pt: x_train: expected float inputs (or integer token ids) [samples, ...] with one to three dimensions per "
      "sample and at least one sample; found Bool 8x4");
  with_data({{"x_train", x.to(torch::kInt64)}, {"y_train", y}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: x_test: expected inputs of x_train's kind, integer token ids; found float");
  with_data({{"x_train", x.to(torch::kInt64)}, {"y_train", y}, {"x_test", x.to(torch::kInt32)}, {"y_test", y}});
  // Token ids: a float model fails on them, and no built-in model takes them.
  refused(
      "linear.pt: forward: expected forward to run on 1 sample [1, 4] of token ids (one sample); it failed "
      "(LibTorch:");
  {
    auto s = scenario();
    s["workload"]["dataset"] = {{"tensors", "d.pt"}};
    s["workload"]["partition"] = {{"kind", "iid"}};
    s["workload"]["model"] = "mlp";
    write("s.json", s);
    refused(
        "s.json: /workload/model: expected a TorchScript model (/workload/model {\"torchscript\": ...}): the data "
        "file's inputs are integers (token ids), which the built-in models do not take");
  }

  // A label equal to the class count (the file does not say its classes):
  // the model's 4 logits were blamed, not the label.
  {
    auto high = y.clone();
    high[5] = 4;
    with_data({{"x_train", x}, {"y_train", y}, {"x_test", x}, {"y_test", high}});
    refused(
        "d.pt: y_test sample 5: expected labels in [0, 4), the 4 logits of linear.pt"
        "; found 4 (the file does not say its classes, so they were taken as its largest label + 1: fix that "
        "label, or save \"classes\" with the data) (in the data file that s.json: /workload/dataset/tensors "
        "names)",
        true);
  }
  with_data({{"x_train", x / 0.0}, {"y_train", y}, {"x_test", x}, {"y_test", y}});
  refused("d.pt: x_train: expected finite inputs; found NaN or infinity");
  with_data({{"x_train", x}, {"y_train", y}, {"x_test", x}, {"y_test", y}, {"classes", 1}});
  refused("d.pt: classes: expected an int in [2, 100000]");
  with_data({{"x_train", x}, {"y_train", y}, {"x_test", x}, {"y_test", y}, {"labels", y}});
  refused("d.pt: labels: unknown key; expected x_train, y_train, x_test, y_test and optionally classes");
  std::ofstream(path("d.pt")) << "{\"x_train\": []}";
  refused("d.pt: expected a dict of tensors x_train, y_train, x_test, y_test written by torch.save (LibTorch:");
  {
    const std::vector<char> bytes = torch::pickle_save(x);  // a tensor, not a dict
    std::ofstream(path("d.pt"), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  refused("d.pt: expected a dict of tensors x_train, y_train, x_test, y_test written by torch.save; found a Tensor");
  test::save_tensors(path("d.pt"), {});
  refused(
      "d.pt: x_train: expected float inputs (or integer token ids) [samples, ...], one to three dimensions per "
      "sample (missing)");
}

// A model whose forward gives NaN ran to exit 0 with empty loss cells and
// chance accuracy. The method stops at the evaluation that sees the first
// nonfinite training loss, says where in one line and the run exits 3; the
// same stop whatever the workers; /stop/nonfinite_loss false runs on.
TEST_F(Workloads, ALossThatTurnsNanStopsTheMethodAndSaysWhere) {
  write_small_workload();
  test::save_module(path("nan.pt"), {{"weight", torch::zeros({4, 4})}, {"bias", torch::zeros({4})}}, {},
                    "def forward(self, x):\n  return torch.linear(x, self.weight, self.bias) * float('nan')\n");
  auto s = scenario({"gossip-overlap"});
  s["workload"]["model"] = {{"torchscript", "nan.pt"}};
  s["stop"]["virtual_s"] = 20;
  s["compute"] = {{"iteration_ms", 100}};
  write("s.json", s);
  std::string said;
  ASSERT_EQ(gossipsim("run s.json --quiet --out one", &said), 3) << said;
  // Node 0's first step is asked for first (all nodes end it at 0.1 s, node 0's event first).
  EXPECT_NE(said.find("gossipsim: gossip-overlap: the training loss of nan.pt became nan at node 0's step 1 (0.1 "
                      "virtual s); the method stopped at "),
            std::string::npos)
      << said;
  const auto summary = nlohmann::json::parse(read(dir_ / "one/summary.json"));
  const auto& m = summary["methods"][0];
  EXPECT_EQ(m["stop_reason"], "nonfinite_loss");
  EXPECT_EQ(m["nonfinite_loss"]["node"], 0);
  EXPECT_EQ(m["nonfinite_loss"]["step"], 1);
  EXPECT_DOUBLE_EQ(m["nonfinite_loss"]["virtual_s"].get<double>(), 0.1);
  // Seen at the evaluation at 1 s, collected when the one at 3 s is asked for.
  EXPECT_DOUBLE_EQ(m["virtual_s"].get<double>(), 3.0);
  ASSERT_EQ(gossipsim("run s.json --quiet --out two --workers 2", &said), 3) << said;
  EXPECT_EQ(read(dir_ / "two/gossip-overlap/metrics.csv"), read(dir_ / "one/gossip-overlap/metrics.csv"));
  ASSERT_EQ(gossipsim("run s.json --quiet --out on --set /stop/nonfinite_loss=false", &said), 0) << said;
  EXPECT_NE(said.find("; it ran on (/stop/nonfinite_loss is false)"), std::string::npos) << said;
  const auto ran = nlohmann::json::parse(read(dir_ / "on/summary.json"))["methods"][0];
  EXPECT_EQ(ran["stop_reason"], "virtual_s");
  EXPECT_EQ(ran["nonfinite_loss"]["step"], 1);
  EXPECT_DOUBLE_EQ(ran["virtual_s"].get<double>(), 20.0);
  refused_value("/stop/nonfinite_loss", "\"yes\"", "s.json: /stop/nonfinite_loss: expected true or false");
}

TEST_F(Workloads, BadSplitFilesNameTheirLine) {
  write_small_workload();
  write("s.json", scenario());
  auto with_split = [&](const std::string& text) { std::ofstream(path("split.txt")) << text; };
  std::string lines;
  for (int i = 0; i < 199; ++i) lines += std::to_string(i % 4) + "\n";
  with_split(lines);
  refused(
      "split.txt: expected one node id per training sample, 200 lines (the file has 199) (in the split file that "
      "s.json: /workload/partition/path names)",
      true);
  with_split("n0\nn1\nn9\n" + lines);
  refused("split.txt: line 3: expected a node id, n0..n3 (or 0..3), got 'n9'", true);
  with_split("# a comment\n\nn0\n-1\n");
  refused("split.txt: line 4: expected a node id, n0..n3 (or 0..3), got '-1'");
  with_split(std::string("PK\x03\x04\x01 zip\n", 9));  // a binary file named by mistake: echoed printable
  refused("split.txt: line 1: expected a node id, n0..n3 (or 0..3), got 'PK??? zip'");
  with_split("node\nn1.5\n");
  refused("split.txt: line 2: expected a node id, n0..n3 (or 0..3), got 'n1.5'");
  lines.clear();
  for (int i = 0; i < 200; ++i) lines += "n" + std::to_string(i % 3) + "\n";  // n3 has nothing
  with_split(lines);
  refused("split.txt: expected at least one training sample for every node; n3 has none", true);
  with_split("");
  refused("split.txt: expected one node id per training sample; found none");
  auto s = scenario();
  s["workload"]["partition"] = {{"kind", "file"}};
  write("s.json", s);
  refused("s.json: /workload/partition/path:");
  s["workload"]["partition"] = {{"kind", "iid"}, {"path", "split.txt"}};
  write("s.json", s);
  refused("s.json: /workload/partition/path: unknown key");
  // A split with a line per sample of /workload/train_samples, not of the file.
  lines.clear();
  for (int i = 0; i < 100; ++i) lines += std::to_string(i % 4) + "\n";
  with_split(lines);
  s = scenario();
  s["workload"]["train_samples"] = 100;
  write("s.json", s);
  std::string said;
  EXPECT_EQ(gossipsim("validate s.json", &said), 0) << said;
}

}  // namespace
}  // namespace gossipsim
