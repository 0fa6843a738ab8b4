// Kernel figures for `cnn` at batch 32, printed as JSON on stdout, all
// measured side by side in this one run:
//   plain_its        node-iterations/s of a plain LibTorch loop on one module
//                    (torch::optim::SGD), one thread
//   store_its        the per-node store with swapping (8 nodes, round robin), one thread
//   concurrent_its   the same 8 nodes on 2 workers (per-node chains)
//   rss_per_node_*   resident memory added per node for 100 and 1,000 nodes,
//                    against the bytes of a node's state
// `kernel_bench N plain` prints plain_its alone (bench/run measures it again
// right before and after each gossipsim run, as that run's reference).
// `kernel_bench N machine` prints the machine's limits on one thread under
// the BLAS this process loaded: GFLOP/s of a 512x512x512 float product and
// of the cnn's second convolution (batch 32, 16->32 channels, 5x5 on 12x12)
// forward and backward. `kernel_bench N mlp` prints node-steps/s of the
// map's mlp (64 -> 64 -> 10, batch 32) for 16 nodes, fused and per node.
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/allocator.h"
#include "kernels/blas.h"
#include "kernels/models.h"
#include "kernels/torch_learner.h"

using namespace gossipsim;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

static int64_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  int64_t kb = 0;
  while (in >> key)
    if (key == "VmRSS:") {
      in >> kb;
      break;
    }
  return kb * 1024;
}

static WorkloadSpec workload(int workers) {
  WorkloadSpec w;
  w.dataset = DatasetKind::kSynthetic;
  w.synthetic.shape = {1, 28, 28};
  w.synthetic.train = 4096;
  w.synthetic.test = 256;
  w.model.name = "cnn";
  w.batch = 32;
  w.optimizer.lr = 0.02;
  w.optimizer.momentum = 0.9;
  w.workers = workers;
  return w;
}

// A plain LibTorch training loop on one module: the reference.
class PlainLoop {
 public:
  PlainLoop()
      : net_(make_model(ModelSpec{}, {1, 28, 28}, 10)),
        opt_(net_->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9)),
        data_(torch::randn({4096, 1, 28, 28})),
        labels_(torch::randint(10, {4096}, torch::kInt64)),
        gen_(at::detail::createCPUGenerator(3)) {}
  void run(int n) {
    for (int k = 0; k < n; ++k) {
      auto idx = at::randint(4096, {32}, gen_, torch::kInt64);
      auto x = data_.index_select(0, idx), y = labels_.index_select(0, idx);
      opt_.zero_grad();
      torch::nn::functional::cross_entropy(net_->forward(x), y).backward();
      opt_.step();
    }
  }

 private:
  std::shared_ptr<Net> net_;
  torch::optim::SGD opt_;
  torch::Tensor data_, labels_;
  at::Generator gen_;
};

// Nodes of the per-node store, stepped round robin.
class StoreLoop {
 public:
  StoreLoop(int workers, int nodes)
      : factory_(make_torch_factory(workload(workers), 1, 0)), learner_(factory_->make(nodes)), nodes_(nodes) {}
  void run(int n) {
    for (int k = 0; k < n; ++k) learner_->step(next_++ % nodes_, Time());
    for (NodeId m = 0; m < nodes_; ++m) snapshot_values(*learner_->snapshot(m));  // waits for every chain
  }

 private:
  std::unique_ptr<LearnerFactory> factory_;
  std::unique_ptr<Learner> learner_;
  int nodes_, next_ = 0;
};

template <typename Loop>
static double rate(Loop& loop, int iterations) {
  auto t = Clock::now();
  loop.run(iterations);
  return iterations / since(t);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static nlohmann::json memory(int nodes) {
  auto factory = make_torch_factory(workload(1), 1, 0);
  auto probe = factory->make(1);
  probe.reset();
  int64_t before = rss_bytes();
  auto learner = factory->make(nodes);
  int64_t after = rss_bytes();
  int64_t state = 2 * 80202 * 4;  // parameters and momentum, float32
  double per_node = double(after - before) / nodes;
  return {{"nodes", nodes}, {"rss_per_node_bytes", per_node}, {"state_bytes", state}, {"ratio", per_node / state}};
}

// GFLOP/s of a float matrix product and of a convolution's forward and
// backward, one thread, median of rounds.
static nlohmann::json machine(int iterations) {
  auto a = torch::randn({512, 512}), b = torch::randn({512, 512});
  auto x = torch::randn({32, 16, 12, 12});
  auto w = torch::randn({32, 16, 5, 5}, torch::requires_grad());
  std::vector<double> gemm, conv;
  for (int r = 0; r < 5; ++r) {
    auto t = Clock::now();
    for (int k = 0; k < iterations; ++k) torch::mm(a, b);
    gemm.push_back(2.0 * 512 * 512 * 512 * iterations / since(t) / 1e9);
    t = Clock::now();
    for (int k = 0; k < iterations; ++k) torch::conv2d(x, w).sum().backward();
    // forward 32 x 32 x 8 x 8 x 16 x 25 multiply-adds, and as many for the weight's gradient
    conv.push_back(2.0 * 2 * 32 * 32 * 8 * 8 * 16 * 25 * iterations / since(t) / 1e9);
  }
  const BlasInfo blas = blas_info();
  return {{"blas", blas.name + " " + blas.version + (blas.core.empty() ? "" : " " + blas.core)},
          {"gemm_gflops", median(gemm)},
          {"conv_gflops", median(conv)}};
}

// Node-steps/s of the map's mlp, 16 nodes stepped in rounds (each round
// every node once, as a gossip run's completions come), fused or not.
static double mlp_steps(int rounds, bool fuse) {
  WorkloadSpec w;
  w.dataset = DatasetKind::kSynthetic;
  w.synthetic.shape = {64};
  w.synthetic.train = 12800;
  w.synthetic.test = 1000;
  w.model.name = "mlp";
  w.model.hidden = {64};
  w.batch = 32;
  w.optimizer.lr = 0.05;
  w.fuse = fuse;
  auto factory = make_torch_factory(w, 1, 1000);
  auto learner = factory->make(16);
  auto round = [&] {
    for (NodeId n = 0; n < 16; ++n) learner->step(n, Time());
    snapshot_values(*learner->snapshot(0));  // waits for the round
  };
  for (int k = 0; k < 10; ++k) round();
  std::vector<double> r;
  for (int k = 0; k < 5; ++k) {
    auto t = Clock::now();
    for (int i = 0; i < rounds; ++i) round();
    r.push_back(16.0 * rounds / since(t));
  }
  return median(r);
}

int main(int argc, char** argv) {
  // The reference loop gets the allocator and thread settings gossipsim
  // runs with: one intra-op thread, one BLAS thread.
  at::set_num_threads(1);
  use_one_blas_thread();
  keep_freed_memory();
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 100;
  const int rounds = 5;
  if (argc > 2 && std::string(argv[2]) == "machine") {
    fmt::print("{}\n", machine(iterations).dump());
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "mlp") {
    const double fused = mlp_steps(iterations, true), single = mlp_steps(iterations, false);
    fmt::print("{}\n", nlohmann::json{{"fused_steps_per_s", fused},
                                      {"per_node_steps_per_s", single},
                                      {"fused_over_per_node", fused / single}}
                           .dump());
    return 0;
  }
  PlainLoop plain;
  if (argc > 2 && std::string(argv[2]) == "plain") {
    plain.run(10);
    std::vector<double> a;
    for (int r = 0; r < 3; ++r) a.push_back(rate(plain, iterations));
    fmt::print("{}\n", nlohmann::json{{"plain_its", median(a)}}.dump());
    return 0;
  }
  StoreLoop store(1, 8), concurrent(2, 8);
  plain.run(10);
  store.run(10);
  concurrent.run(10);
  // Rounds interleave the three so that a noisy machine slows them alike;
  // each figure is the median over rounds.
  std::vector<double> a, b, c;
  for (int r = 0; r < rounds; ++r) {
    a.push_back(rate(plain, iterations));
    b.push_back(rate(store, iterations));
    c.push_back(rate(concurrent, 2 * iterations));
  }
  nlohmann::json out;
  out["cores"] = std::thread::hardware_concurrency();
  out["plain_its"] = median(a);
  out["store_its"] = median(b);
  out["concurrent_its"] = median(c);
  out["store_over_plain"] = median(b) / median(a);
  out["concurrent_over_plain"] = median(c) / median(a);
  out["memory"] = {memory(100), memory(1000)};
  fmt::print("{}\n", out.dump(2));
}
