// allreduce: synchronous SGD. Every step, each node computes one iteration on
// its own mini-batch; when the slowest has finished, a ring all-reduce runs
// as flows: 2(N-1) phases, in each of which every node i sends a chunk of
// ceil(model_bytes / N) to node (i+1) mod N, and a phase ends when its last
// chunk arrives. Then every node takes the mean of all models and momentum
// buffers, which equals one SGD step on the mean gradient of the N batches.
// On a homogeneous ring with latency l and capacity C a step therefore takes
//   iteration + 2(N-1) (l + chunk / C).
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class AllReduce : public Method {
 public:
  explicit AllReduce(Cluster& c) : c_(c) {
    const int64_t n = c.size(), bytes = c.ctx().learner.model_bytes().count;
    chunk_ = Bytes{(bytes + n - 1) / n};
    for (NodeId i = 0; i < c.size(); ++i) all_.push_back(i);
  }

  void start() override { step(); }

 private:
  void step() {
    waiting_ = c_.size();
    for (NodeId n : all_)
      c_.iterate(n, [this] {
        if (--waiting_ == 0) reduce();
      }, /*run_kernel=*/false);
  }

  void reduce() {
    c_.ctx().learner.step_all(all_);
    if (c_.size() == 1) return finish();
    phase(0);
  }

  void phase(int k) {
    if (k == 2 * (c_.size() - 1)) return finish();
    waiting_ = c_.size();
    for (NodeId n : all_)
      c_.send_bytes(n, (n + 1) % c_.size(), chunk_, [this, k](const FlowRecord&) {
        if (--waiting_ == 0) phase(k + 1);
      });
  }

  void finish() {
    c_.ctx().learner.average_all();
    step();
  }

  Cluster& c_;
  Bytes chunk_;
  std::vector<NodeId> all_;
  int waiting_ = 0;
};

}  // namespace

std::unique_ptr<Method> make_allreduce(Cluster& cluster) { return std::make_unique<AllReduce>(cluster); }

}  // namespace gossipsim
