// Kernel tests: known answers computed in the test itself (hand computations
// in plain doubles, files written here), never by the code under test.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <zlib.h>

#include <boost/random/gamma_distribution.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "base/error.h"
#include "kernels/dataset.h"
#include "kernels/models.h"
#include "kernels/node_store.h"
#include "kernels/partition.h"
#include "kernels/sgd.h"
#include "kernels/torch_learner.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("gossipsim-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

WorkloadSpec synthetic_workload(int workers = 1) {
  WorkloadSpec w;
  w.dataset = DatasetKind::kSynthetic;
  w.synthetic.shape = {16};
  w.synthetic.train = 512;
  w.synthetic.test = 128;
  w.model.name = "mlp";
  w.model.hidden = {8};
  w.batch = 16;
  w.optimizer.lr = 0.1;
  w.optimizer.momentum = 0.9;
  w.optimizer.weight_decay = 1e-4;
  w.workers = workers;
  return w;
}

TEST(Models, CnnHasTheDocumentedParameterCount) {
  ModelSpec spec;
  spec.name = "cnn";
  auto net = make_model(spec, {1, 28, 28}, 10);
  int64_t n = 0;
  for (auto& p : net->parameters()) n += p.numel();
  EXPECT_EQ(n, 80202);  // 416 + 12832 + 65664 + 1290
}

TEST(Models, ResNet20RunsOnCifarShapes) {
  ModelSpec spec;
  spec.name = "resnet20";
  auto net = make_model(spec, {3, 32, 32}, 100);
  int64_t n = 0;
  for (auto& p : net->parameters()) n += p.numel();
  // stem 432 + bn 32; stage 1: 3 x (2 x 2304 + 64); stage 2: 4608 + 9216 + 128
  // + 2 x (2 x 9216 + 128); stage 3: 18432 + 36864 + 256 + 2 x (2 x 36864 + 256);
  // fc 64 x 100 + 100. (He et al.'s 0.27 M is the 10-class count, 269,722.)
  EXPECT_EQ(n, 432 + 32 + 14016 + 51072 + 203520 + 6500);
  auto y = net->forward(torch::zeros({2, 3, 32, 32}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 100}));
  EXPECT_FALSE(float_buffers(*net).empty());  // BatchNorm running statistics
  spec.norm = Norm::kGroup;
  EXPECT_TRUE(float_buffers(*make_model(spec, {3, 32, 32}, 100)).empty());
}

// A 2-2-2 MLP with ReLU: one SGD step with momentum and weight decay,
// checked against the same computation written out in doubles.
TEST(Sgd, OneMomentumStepOfATinyMlpMatchesAHandComputation) {
  const double W1[2][2] = {{0.5, -0.25}, {0.1, 0.3}}, b1[2] = {0.05, -0.1};
  const double W2[2][2] = {{0.2, -0.4}, {0.7, 0.1}}, b2[2] = {0.0, 0.05};
  const double X[2][2] = {{1.0, 2.0}, {-1.0, 0.5}};
  const int Y[2] = {1, 0};
  const double mu = 0.9, wd = 0.001, lr = 0.1, m0 = 0.01;

  // Hand computation: forward, softmax cross-entropy (mean), backward.
  double gW1[2][2] = {}, gb1[2] = {}, gW2[2][2] = {}, gb2[2] = {};
  for (int s = 0; s < 2; ++s) {
    double pre[2], h[2], z[2];
    for (int i = 0; i < 2; ++i) {
      pre[i] = W1[i][0] * X[s][0] + W1[i][1] * X[s][1] + b1[i];
      h[i] = pre[i] > 0 ? pre[i] : 0;
    }
    for (int i = 0; i < 2; ++i) z[i] = W2[i][0] * h[0] + W2[i][1] * h[1] + b2[i];
    double mx = std::max(z[0], z[1]), e0 = std::exp(z[0] - mx), e1 = std::exp(z[1] - mx);
    double p[2] = {e0 / (e0 + e1), e1 / (e0 + e1)};
    double dz[2] = {(p[0] - (Y[s] == 0)) / 2, (p[1] - (Y[s] == 1)) / 2};
    for (int i = 0; i < 2; ++i) {
      gb2[i] += dz[i];
      for (int j = 0; j < 2; ++j) gW2[i][j] += dz[i] * h[j];
    }
    for (int j = 0; j < 2; ++j) {
      double dh = W2[0][j] * dz[0] + W2[1][j] * dz[1];
      double dpre = pre[j] > 0 ? dh : 0;
      gb1[j] += dpre;
      for (int k = 0; k < 2; ++k) gW1[j][k] += dpre * X[s][k];
    }
  }
  // Flat order of the module's parameters: W1, b1, W2, b2.
  std::vector<double> x0 = {W1[0][0], W1[0][1], W1[1][0], W1[1][1], b1[0], b1[1],
                            W2[0][0], W2[0][1], W2[1][0], W2[1][1], b2[0], b2[1]};
  std::vector<double> g = {gW1[0][0], gW1[0][1], gW1[1][0], gW1[1][1], gb1[0], gb1[1],
                           gW2[0][0], gW2[0][1], gW2[1][0], gW2[1][1], gb2[0], gb2[1]};
  std::vector<double> expected(12), expected_m(12);
  for (int k = 0; k < 12; ++k) {
    double d = g[k] + wd * x0[k];
    expected_m[k] = mu * m0 + d;
    expected[k] = x0[k] - lr * expected_m[k];
  }

  ModelSpec spec;
  spec.name = "mlp";
  spec.hidden = {2};
  auto net = make_model(spec, {2}, 2);
  NodeStore store(*net, 1, true);
  ASSERT_EQ(store.param_count(), 12);
  for (int k = 0; k < 12; ++k) store.params[0][k] = x0[k];
  store.momentum.fill_(m0);
  ModuleView view(net, store);
  view.bind(store.params[0], store.buffers[0]);
  auto x = torch::tensor({1.0f, 2.0f, -1.0f, 0.5f}).view({2, 2});
  auto y = torch::tensor({int64_t(1), int64_t(0)});
  OptimizerSpec o;
  o.momentum = mu;
  o.weight_decay = wd;
  forward_backward(view, x, y);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(view.grad()[k].item<double>(), g[k], 1e-6) << "gradient " << k;
  sgd_update(store.params[0], view.grad(), store.momentum[0], o, lr);
  for (int k = 0; k < 12; ++k) {
    EXPECT_NEAR(store.params[0][k].item<double>(), expected[k], 1e-6) << "parameter " << k;
    EXPECT_NEAR(store.momentum[0][k].item<double>(), expected_m[k], 1e-6) << "momentum " << k;
  }
}

TEST(Learner, MergesAreAveragesAndWeightedAverages) {
  auto factory = make_torch_factory(synthetic_workload(), 7, 0);
  auto learner = factory->make(2);
  for (int k = 0; k < 3; ++k) learner->step(0, Time());
  learner->step(1, Time());
  auto x0 = snapshot_values(*learner->snapshot(0));
  auto x1 = snapshot_values(*learner->snapshot(1));
  ASSERT_NE(x0, x1);
  learner->merge(1, learner->snapshot(0), 3.0, 1.0);  // (3 x1 + x0) / 4
  auto merged = snapshot_values(*learner->snapshot(1));
  for (size_t k = 0; k < x0.size(); ++k) EXPECT_NEAR(merged[k], (3.0 * x1[k] + x0[k]) / 4.0, 1e-6);
  learner->merge(0, learner->snapshot(1), 1.0, 1.0);
  auto avg = snapshot_values(*learner->snapshot(0));
  for (size_t k = 0; k < x0.size(); ++k) EXPECT_NEAR(avg[k], (x0[k] + merged[k]) / 2.0, 1e-6);
}

// A learner that keeps the rows of some nodes only (a rank of a run over
// MPI ranks) gives those nodes the numbers a learner of all nodes gives,
// moves them in and out as bytes, and refuses to be asked about the others.
TEST(Learner, APartLearnerHoldingSomeNodesGivesThemTheWholeLearnersNumbers) {
  auto factory = make_torch_factory(synthetic_workload(), 9, 0);
  auto whole = make_part_learner(*factory, 4);
  auto part = make_part_learner(*factory, 4, {3, 1});
  for (int k = 0; k < 3; ++k)
    for (NodeId n : {1, 3}) {
      whole->step(n, Time());
      part->step_numbered(n, Time(), 2 * k + (n == 3));
    }
  whole->merge(1, whole->snapshot(3), 1.0, 1.0);
  part->merge(1, part->snapshot(3), 1.0, 1.0);
  for (NodeId n : {1, 3}) EXPECT_EQ(snapshot_values(*part->snapshot(n)), snapshot_values(*whole->snapshot(n)));
  // Rows out of one and into another learner that holds node 1.
  const auto rows = part->rows({1});
  EXPECT_EQ(rows, whole->rows({1}));
  auto other = make_part_learner(*factory, 4, {1});
  other->set_rows({1}, rows);
  EXPECT_EQ(snapshot_values(*other->snapshot(1)), snapshot_values(*whole->snapshot(1)));
  // A snapshot as bytes, filled into one that was waiting for them.
  auto incoming = other->incoming_snapshot();
  other->fill_snapshot(incoming, whole->save_snapshot(*whole->snapshot(3)));
  EXPECT_EQ(snapshot_values(*incoming), snapshot_values(*whole->snapshot(3)));
  EXPECT_THROW(part->step_numbered(0, Time(), 6), InternalError);
  EXPECT_THROW(part->rows({2}), InternalError);
}

TEST(Learner, SameSeedGivesBitIdenticalParameters) {
  auto run = [] {
    auto factory = make_torch_factory(synthetic_workload(), 11, 0);
    auto learner = factory->make(3);
    for (int k = 0; k < 5; ++k)
      for (NodeId n = 0; n < 3; ++n) learner->step(n, Time());
    return snapshot_values(*learner->snapshot(2));
  };
  EXPECT_EQ(run(), run());
}

TEST(Learner, InterleavedNodesEqualEachTrainedAlone) {
  auto factory = make_torch_factory(synthetic_workload(), 3, 0);
  auto interleaved = factory->make(2), alone = factory->make(2);
  for (int k = 0; k < 6; ++k) {
    interleaved->step(0, Time());
    interleaved->step(1, Time());
  }
  for (int k = 0; k < 6; ++k) alone->step(0, Time());
  for (int k = 0; k < 6; ++k) alone->step(1, Time());
  for (NodeId n : {0, 1}) EXPECT_EQ(snapshot_values(*interleaved->snapshot(n)), snapshot_values(*alone->snapshot(n)));
}

TEST(Learner, ConcurrentStepsAreBitIdenticalToSequential) {
  auto seq_factory = make_torch_factory(synthetic_workload(1), 5, 0);
  auto par_factory = make_torch_factory(synthetic_workload(2), 5, 0);
  auto seq = seq_factory->make(4), par = par_factory->make(4);
  std::vector<NodeId> all = {0, 1, 2, 3};
  for (int k = 0; k < 4; ++k) {
    for (NodeId n : all) seq->step(n, Time());
    par->step_all(all, Time());
  }
  for (NodeId n : all) EXPECT_EQ(snapshot_values(*seq->snapshot(n)), snapshot_values(*par->snapshot(n)));
  auto a = seq->evaluate(true), b = par->evaluate(true);
  EXPECT_EQ(a.accuracy, b.accuracy);
  EXPECT_EQ(a.node_loss_mean, b.node_loss_mean);
}

// The event loop hands steps over and goes on; snapshots and merges chain
// behind them. Whatever the worker count, every node ends bit-identical.
TEST(Learner, AsynchronousChainsAreBitIdenticalToSequential) {
  auto run = [](int workers) {
    auto factory = make_torch_factory(synthetic_workload(workers), 13, 0);
    auto learner = factory->make(4);
    std::vector<SnapshotPtr> in_flight;
    for (int k = 0; k < 6; ++k) {
      for (NodeId n = 0; n < 4; ++n) learner->step(n, Time());
      in_flight.push_back(learner->snapshot(k % 4));
      if (in_flight.size() > 2) {
        learner->merge((k + 1) % 4, in_flight.front(), 1, 1);
        in_flight.erase(in_flight.begin());
      }
    }
    std::vector<std::vector<float>> out;
    for (NodeId n = 0; n < 4; ++n) out.push_back(snapshot_values(*learner->snapshot(n)));
    return out;
  };
  EXPECT_EQ(run(1), run(2));
  EXPECT_EQ(run(1), run(3));
}

// Far more operations than the event loop may queue ahead (16 a node): the
// loop waits for room, and nothing changes but when it waits.
TEST(Learner, ALongQueueIsThrottledWithoutChangingResults) {
  auto run = [](int workers) {
    auto factory = make_torch_factory(synthetic_workload(workers), 19, 0);
    auto learner = factory->make(2);
    std::vector<PendingEvaluation> evals;
    for (int k = 0; k < 120; ++k) {
      learner->step(k % 2, Time());
      learner->merge((k + 1) % 2, learner->snapshot(k % 2), 1, 1);
      if (k % 40 == 39) evals.push_back(learner->evaluate_async(true));
    }
    std::vector<double> out;
    for (auto& e : evals) out.push_back(e.get().loss);
    for (NodeId n = 0; n < 2; ++n)
      for (float v : snapshot_values(*learner->snapshot(n))) out.push_back(v);
    return out;
  };
  EXPECT_EQ(run(1), run(2));
}

// An evaluation asked for between steps sees the models as they were then,
// although the chains run on past it before it is read.
TEST(Learner, PendingEvaluationSeesTheModelsWhenItWasAskedFor) {
  auto run = [](int workers) {
    auto factory = make_torch_factory(synthetic_workload(workers), 17, 0);
    auto learner = factory->make(3);
    std::vector<PendingEvaluation> evals;
    for (int k = 0; k < 4; ++k) {
      for (NodeId n = 0; n < 3; ++n) learner->step(n, Time());
      learner->merge(k % 3, learner->snapshot((k + 1) % 3), 1, 1);
      evals.push_back(learner->evaluate_async(k % 2 == 0));
    }
    std::vector<Evaluation> out;
    for (auto& e : evals) out.push_back(e.get());
    return out;
  };
  auto one = run(1), two = run(2), three = run(3);
  ASSERT_EQ(one.size(), 4u);
  EXPECT_NE(one[0].loss, one[3].loss);  // the models moved between evaluations
  for (size_t i = 0; i < one.size(); ++i)
    for (const auto& other : {two[i], three[i]}) {
      EXPECT_EQ(one[i].accuracy, other.accuracy);
      EXPECT_EQ(one[i].loss, other.loss);
      EXPECT_EQ(one[i].consensus, other.consensus);
      EXPECT_EQ(one[i].per_node, other.per_node);
      EXPECT_EQ(one[i].node_loss_mean, other.node_loss_mean);
      EXPECT_EQ(one[i].node_accuracy_min, other.node_accuracy_min);
    }
}

TEST(Learner, AverageAllGivesEveryNodeTheMean) {
  auto factory = make_torch_factory(synthetic_workload(), 9, 0);
  auto learner = factory->make(3);
  for (NodeId n = 0; n < 3; ++n)
    for (int k = 0; k <= n; ++k) learner->step(n, Time());
  std::vector<std::vector<float>> x;
  for (NodeId n = 0; n < 3; ++n) x.push_back(snapshot_values(*learner->snapshot(n)));
  learner->average_all();
  auto e = learner->evaluate(false);
  EXPECT_NEAR(e.consensus, 0.0, 1e-10);
  auto after = snapshot_values(*learner->snapshot(1));
  for (size_t k = 0; k < after.size(); ++k) EXPECT_NEAR(after[k], (x[0][k] + x[1][k] + x[2][k]) / 3.0, 1e-6);
}

// The operations churn and the mixing metrics use, against values computed
// here from the nodes' snapshots.
std::vector<std::vector<float>> models(Learner& l) {
  std::vector<std::vector<float>> x;
  for (NodeId n = 0; n < l.node_count(); ++n) x.push_back(snapshot_values(*l.snapshot(n)));
  return x;
}

double squared_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t k = 0; k < a.size(); ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
  return d;
}

std::vector<double> mean_of(const std::vector<std::vector<float>>& x, const std::vector<NodeId>& nodes) {
  std::vector<double> m(x[0].size(), 0.0);
  for (NodeId n : nodes)
    for (size_t k = 0; k < m.size(); ++k) m[k] += x[n][k] / nodes.size();
  return m;
}

std::vector<double> as_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

TEST(Learner, AveragingSomeNodesLeavesTheOthersAndResetTakesTheMeanOrTheInitialModel) {
  auto learner = make_torch_factory(synthetic_workload(), 9, 0)->make(4);
  const auto initial = models(*learner)[0];
  for (NodeId n = 0; n < 4; ++n)
    for (int k = 0; k <= n; ++k) learner->step(n, Time());
  const auto x = models(*learner);
  learner->average({1, 3});
  auto y = models(*learner);
  const auto m13 = mean_of(x, {1, 3});
  for (size_t k = 0; k < m13.size(); ++k) {
    EXPECT_NEAR(y[1][k], m13[k], 1e-6);
    EXPECT_NEAR(y[3][k], m13[k], 1e-6);
    EXPECT_EQ(y[0][k], x[0][k]);
    EXPECT_EQ(y[2][k], x[2][k]);
  }
  learner->reset_node(2, {0, 1});
  learner->reset_node(3, {});
  const auto z = models(*learner);
  const auto m01 = mean_of(y, {0, 1});
  for (size_t k = 0; k < m01.size(); ++k) {
    EXPECT_NEAR(z[2][k], m01[k], 1e-6);
    EXPECT_EQ(z[3][k], initial[k]);
  }
}

TEST(Learner, EvaluationsSplitTheConsensusWithinAndBetweenGroupsAndCanSkipNodes) {
  auto learner = make_torch_factory(synthetic_workload(), 5, 0)->make(4);
  for (NodeId n = 0; n < 4; ++n)
    for (int k = 0; k <= 2 * n; ++k) learner->step(n, Time());
  const auto x = models(*learner);
  const auto all = mean_of(x, {0, 1, 2, 3}), g0 = mean_of(x, {0, 1}), g1 = mean_of(x, {2, 3});
  double within = 0, between = 0, consensus = 0;
  for (NodeId n = 0; n < 4; ++n) {
    const auto& g = n < 2 ? g0 : g1;
    within += squared_distance(as_double(x[n]), g) / 4;
    between += squared_distance(g, all) / 4;
    consensus += squared_distance(as_double(x[n]), all) / 4;
  }
  learner->set_groups({0, 0, 1, 1});
  auto e = learner->evaluate(false);
  EXPECT_NEAR(e.consensus, consensus, 1e-5 * consensus);
  EXPECT_NEAR(e.consensus_within, within, 1e-5 * consensus);
  EXPECT_NEAR(e.consensus_between, between, 1e-5 * consensus);
  EXPECT_GT(within, 0);
  EXPECT_GT(between, 0);
  // Only nodes 0 and 2 up: the consensus of those two, each its group's only member.
  learner->set_evaluated({0, 2});
  e = learner->evaluate(false);
  const auto m02 = mean_of(x, {0, 2});
  const double two = (squared_distance(as_double(x[0]), m02) + squared_distance(as_double(x[2]), m02)) / 2;
  EXPECT_NEAR(e.consensus, two, 1e-5 * two);
  EXPECT_NEAR(e.consensus_within, 0, 1e-9);
  EXPECT_NEAR(e.consensus_between, two, 1e-5 * two);
}

TEST(Device, CudaIsRefusedClearlyWithoutIt) {
  WorkloadSpec w = synthetic_workload();
  w.device = Device::kCuda;
  if (torch_has_cuda()) {
    auto learner = make_torch_factory(w, 1, 0)->make(2);
    learner->step(0, Time());
    auto cpu = make_torch_factory(synthetic_workload(), 1, 0)->make(2);
    cpu->step(0, Time());
    auto a = snapshot_values(*learner->snapshot(0)), b = snapshot_values(*cpu->snapshot(0));
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-4);
    return;
  }
  try {
    make_torch_factory(w, 1, 0);
    FAIL() << "cuda accepted without a CUDA device";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/workload/device"), std::string::npos);
  }
}

TEST(Learner, MemoryPerNodeIsItsState) {
  WorkloadSpec w = synthetic_workload();
  w.synthetic.shape = {1, 28, 28};
  w.model.name = "cnn";
  EXPECT_EQ(model_state_bytes(w), 4 * 80202);
}

// IDX files written here, gzipped and plain.
void write_idx(const fs::path& p, const std::vector<uint8_t>& header, const std::vector<uint8_t>& body, bool gz) {
  std::string all(header.begin(), header.end());
  all.append(body.begin(), body.end());
  if (gz) {
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, all.data(), all.size());
    gzclose(f);
  } else {
    std::ofstream(p, std::ios::binary) << all;
  }
}

TEST(Datasets, IdxReaderReadsGzipAndPlainFiles) {
  fs::path dir = temp_dir("idx");
  std::vector<uint8_t> pixels(2 * 3 * 2);
  std::iota(pixels.begin(), pixels.end(), 100);
  write_idx(dir / "images.gz", {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2}, pixels, true);
  write_idx(dir / "labels", {0, 0, 8, 1, 0, 0, 0, 2}, {7, 3}, false);
  auto images = read_idx((dir / "images.gz").string());
  EXPECT_EQ(images.sizes(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(images[1][2][1].item<int>(), 111);
  auto labels = read_idx((dir / "labels").string());
  EXPECT_EQ(labels[0].item<int>(), 7);
  EXPECT_EQ(labels[1].item<int>(), 3);
  write_idx(dir / "bad", {0, 0, 9, 1, 0, 0, 0, 2}, {7, 3}, false);
  EXPECT_THROW(read_idx((dir / "bad").string()), InputError);
  write_idx(dir / "short", {0, 0, 8, 1, 0, 0, 0, 5}, {7, 3}, false);
  EXPECT_THROW(read_idx((dir / "short").string()), InputError);
  fs::remove_all(dir);
}

TEST(Datasets, MissingFashionMnistNamesThePackage) {
  try {
    load_fashion_mnist("/nonexistent/fashion");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fashion"), std::string::npos);
  }
}

TEST(Datasets, Cifar100ReaderReadsTheBinaryFormat) {
  fs::path dir = temp_dir("cifar");
  auto write = [&](const std::string& name, int records) {
    std::ofstream out(dir / name, std::ios::binary);
    for (int r = 0; r < records; ++r) {
      out.put(static_cast<char>(r % 20));                                                    // coarse
      out.put(static_cast<char>(50 + r));                                                    // fine
      for (int i = 0; i < 3072; ++i) out.put(static_cast<char>((i / 1024 == 1) ? 255 : 0));  // green plane full
    }
  };
  write("train.bin", 3);
  write("test.bin", 2);
  auto d = load_cifar100(dir.string(), false);
  EXPECT_EQ(d.train.size(), 3);
  EXPECT_EQ(d.test.size(), 2);
  EXPECT_EQ(d.train.labels[2].item<int64_t>(), 52);
  EXPECT_TRUE(d.train.augment);
  // Red 0 -> (0 - 0.5071) / 0.2673; green 255 -> (1 - 0.4865) / 0.2564.
  EXPECT_NEAR(d.train.inputs[0][0][5][5].item<double>(), -0.5071 / 0.2673, 1e-5);
  EXPECT_NEAR(d.train.inputs[0][1][5][5].item<double>(), (1 - 0.4865) / 0.2564, 1e-5);
  auto coarse = load_cifar100(dir.string(), true);
  EXPECT_EQ(coarse.train.labels[2].item<int64_t>(), 2);
  EXPECT_EQ(coarse.train.classes, 20);
  std::ofstream(dir / "test.bin", std::ios::binary) << "short";
  EXPECT_THROW(load_cifar100(dir.string(), false), InputError);
  fs::remove_all(dir);
}

std::vector<int64_t> cyclic_labels(int n, int classes) {
  std::vector<int64_t> labels(n);
  for (int i = 0; i < n; ++i) labels[i] = i % classes;
  return labels;
}

TEST(Partition, DirichletHistogramFollowsTheDocumentedDrawFromItsSeed) {
  const int classes = 4, nodes = 3;
  auto labels = cyclic_labels(400, classes);
  PartitionSpec spec;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  spec.alpha = 0.3;
  Rng rng = Streams(42).stream("partition");
  auto hist = label_histogram(make_partition(labels, classes, nodes, spec, rng), labels, classes);

  // The documented algorithm, written out again: per class, Gamma(alpha)
  // proportions, cut points at the rounded cumulative shares.
  Rng ref = Streams(42).stream("partition");
  boost::random::gamma_distribution<double> gamma(spec.alpha, 1.0);
  std::vector<std::vector<int64_t>> expected(nodes, std::vector<int64_t>(classes));
  for (int c = 0; c < classes; ++c) {
    std::vector<double> p(nodes);
    double total = 0;
    for (double& x : p) total += (x = gamma(ref));
    for (size_t i = 100; i > 1; --i) uniform_index(ref, i);  // the class's shuffle
    double cum = 0;
    int64_t start = 0;
    for (int k = 0; k < nodes; ++k) {
      cum += p[k] / total;
      int64_t end = k == nodes - 1 ? 100 : std::max<int64_t>(start, std::llround(cum * 100));
      expected[k][c] = end - start;
      start = end;
    }
  }
  EXPECT_EQ(hist, expected);
}

TEST(Partition, IidAndShardsCoverEverySampleOnce) {
  const int classes = 10, nodes = 7;
  auto labels = cyclic_labels(1000, classes);
  for (auto kind : {PartitionSpec::Kind::kIid, PartitionSpec::Kind::kShards}) {
    PartitionSpec spec;
    spec.kind = kind;
    Rng rng(3);
    auto p = make_partition(labels, classes, nodes, spec, rng);
    std::vector<int> seen(labels.size(), 0);
    size_t smallest = SIZE_MAX, largest = 0;
    for (auto& part : p) {
      for (int64_t i : part) ++seen[i];
      smallest = std::min(smallest, part.size());
      largest = std::max(largest, part.size());
    }
    for (int s : seen) EXPECT_EQ(s, 1);
    if (kind == PartitionSpec::Kind::kIid) {
      EXPECT_LE(largest - smallest, 1u);
    }
    if (kind == PartitionSpec::Kind::kShards) {
      // Shards of sorted labels straddle at most two classes: at most 2k classes a node.
      auto h = label_histogram(p, labels, classes);
      for (auto& row : h) EXPECT_LE(std::count_if(row.begin(), row.end(), [](int64_t v) { return v > 0; }), 4);
    }
  }
}

TEST(Partition, ByRegionSkewsRegionsAndSplitsEachAlikeAmongItsNodes) {
  // 3 classes of 4 samples each, 6 nodes placed round-robin over 3 regions
  // (nodes 0 and 3 in region 0, 1 and 4 in 1, 2 and 5 in 2). Shards with one
  // class per region: 3 shards of the sorted labels, each exactly one class,
  // so each region holds one class whole and its two nodes 2 samples of it.
  const int classes = 3, nodes = 6;
  const std::vector<int64_t> labels = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
  PartitionSpec spec;
  spec.kind = PartitionSpec::Kind::kShards;
  spec.classes_per_node = 1;
  spec.by = PartitionSpec::By::kRegion;
  spec.region_of = {0, 1, 2, 0, 1, 2};
  Rng rng(5);
  const Partition p = make_partition(labels, classes, nodes, spec, rng);
  const auto h = label_histogram(p, labels, classes);
  std::set<int> region_classes;
  for (int r = 0; r < 3; ++r) {
    const auto& a = h[r];
    const auto& b = h[r + 3];
    EXPECT_EQ(a, b) << "region " << r;  // both nodes: the same class, 2 samples each
    ASSERT_EQ(std::count(a.begin(), a.end(), 2), 1) << "region " << r;
    EXPECT_EQ(std::count(a.begin(), a.end(), 0), 2) << "region " << r;
    region_classes.insert(static_cast<int>(std::find(a.begin(), a.end(), 2) - a.begin()));
  }
  EXPECT_EQ(region_classes.size(), 3u);  // every region a class of its own
  // By node, the same spec gives 6 shards of 2 samples of one class each:
  // some region's two nodes then hold different classes.
  spec.by = PartitionSpec::By::kNode;
  Rng again(5);
  const auto by_node = label_histogram(make_partition(labels, classes, nodes, spec, again), labels, classes);
  bool differ = false;
  for (int r = 0; r < 3; ++r) differ |= by_node[r] != by_node[r + 3];
  EXPECT_TRUE(differ);
}

TEST(Partition, ByRegionCoversEverySampleOnceAndLeavesNoNodeEmpty) {
  // IID by region: 1000 samples over 3 regions of 3, 3 and 1 nodes: each
  // region 333 or 334 samples, cut evenly among its nodes. A Dirichlet with a
  // tiny alpha leaves some region almost nothing: it takes what it lacks from
  // a region with samples to spare, and no node is empty.
  const int classes = 10, nodes = 7;
  auto labels = cyclic_labels(1000, classes);
  PartitionSpec spec;
  spec.by = PartitionSpec::By::kRegion;
  spec.region_of = {0, 1, 2, 0, 1, 0, 1};
  Rng rng(9);
  const Partition iid = make_partition(labels, classes, nodes, spec, rng);
  std::vector<int> seen(labels.size(), 0);
  for (const auto& part : iid)
    for (int64_t i : part) ++seen[i];
  for (int s : seen) EXPECT_EQ(s, 1);
  const int64_t region2 = static_cast<int64_t>(iid[2].size());
  EXPECT_TRUE(region2 == 333 || region2 == 334) << region2;  // node 2 is region 2 alone
  for (int node : {0, 3, 5}) EXPECT_NEAR(static_cast<double>(iid[node].size()), 1000.0 / 9, 1.0) << node;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  spec.alpha = 1e-3;
  std::vector<int64_t> few = cyclic_labels(8, 2);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng r(seed);
    const Partition p = make_partition(few, 2, nodes, spec, r);
    size_t total = 0;
    for (const auto& part : p) {
      EXPECT_FALSE(part.empty()) << "seed " << seed;
      total += part.size();
    }
    EXPECT_EQ(total, 8u);
  }
  // A method that trains alone (one node) holds everything.
  Rng alone(1);
  EXPECT_EQ(make_partition(labels, classes, 1, spec, alone)[0].size(), 1000u);
}

}  // namespace
}  // namespace gossipsim
