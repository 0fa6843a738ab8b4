// Kernel figures for `cnn` at batch 32, printed as JSON on stdout, all
// measured side by side in this one run:
//   plain_its        node-iterations/s of a plain LibTorch loop on one module
//                    (torch::optim::SGD), one thread
//   store_its        the per-node store with swapping (8 nodes, round robin), one thread
//   concurrent_its   the same 8 nodes on 2 workers (per-node chains)
//   rss_per_node_*   resident memory added per node for 100 and 1,000 nodes,
//                    against the bytes of a node's state
#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

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
  w.dataset = "synthetic";
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

static double plain_loop(int iterations) {
  torch::manual_seed(1);
  auto net = make_model(ModelSpec{}, {1, 28, 28}, 10);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9));
  auto data = torch::randn({4096, 1, 28, 28});
  auto labels = torch::randint(10, {4096}, torch::kInt64);
  auto gen = at::detail::createCPUGenerator(3);
  auto run = [&](int n) {
    for (int k = 0; k < n; ++k) {
      auto idx = at::randint(4096, {32}, gen, torch::kInt64);
      auto x = data.index_select(0, idx), y = labels.index_select(0, idx);
      opt.zero_grad();
      torch::nn::functional::cross_entropy(net->forward(x), y).backward();
      opt.step();
    }
  };
  run(20);  // warm up
  auto t = Clock::now();
  run(iterations);
  return iterations / since(t);
}

static double store_loop(int workers, int nodes, int iterations) {
  auto factory = make_torch_factory(workload(workers), 1, 0);
  auto learner = factory->make(nodes);
  for (NodeId n = 0; n < nodes; ++n) learner->step(n);  // warm up
  snapshot_values(*learner->snapshot(nodes - 1));
  auto t = Clock::now();
  for (int k = 0; k < iterations; ++k) learner->step(k % nodes);
  learner->evaluate(false);  // waits for every chain
  double wall = since(t);
  return iterations / (wall - 0.0);
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

int main(int argc, char** argv) {
  at::set_num_threads(1);
  int iterations = argc > 1 ? std::atoi(argv[1]) : 400;
  nlohmann::json out;
  double a = plain_loop(iterations);
  double b = store_loop(1, 8, iterations);
  double c = store_loop(2, 8, 2 * iterations);
  out["cores"] = std::thread::hardware_concurrency();
  out["plain_its"] = a;
  out["store_its"] = b;
  out["concurrent_its"] = c;
  out["store_over_plain"] = b / a;
  out["concurrent_over_plain"] = c / a;
  out["memory"] = {memory(100), memory(1000)};
  fmt::print("{}\n", out.dump(2));
}
