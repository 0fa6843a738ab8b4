// allreduce: synchronous SGD. Every step, each node computes one iteration on
// its own mini-batch; when the slowest has finished, a ring all-reduce runs
// as flows: 2(N-1) phases, in each of which every node i sends a chunk of
// ceil(model_bytes / N) to node (i+1) mod N, and a phase ends when its last
// chunk arrives. Then every node takes the mean of all models and momentum
// buffers, which equals one SGD step on the mean gradient of the N batches.
// On a homogeneous ring with latency l and capacity C a step therefore takes
//   iteration + 2(N-1) (l + chunk / C).
//
// Churn: the ring re-forms. Each step's ring is the nodes up when it starts,
// in id order. When a member goes down during a step, the step is abandoned:
// the others' iterations stop, its chunks in flight are cut (lost, "all-reduce
// step abandoned"), the survivors average their models if they had already
// applied their own gradients (so they agree again, as an elastic framework
// re-synchronises on a reset), and a new step starts at once without it. A
// node that joins waits for the next step; with no node up, the method waits
// for a join. Nothing of an abandoned step can come back: its iterations are
// cancelled and its chunks cut (a lost chunk does nothing).
#include <algorithm>

#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class AllReduce : public Method {
 public:
  explicit AllReduce(Cluster& c) : c_(c) {}

  void start() override { step(); }

  void on_down(NodeId n) override {
    if (idle_ || std::find(ring_.begin(), ring_.end(), n) == ring_.end()) return;
    for (NodeId m : ring_) c_.abandon_iteration(m);
    c_.cut(flows_, "all-reduce step abandoned");
    if (reduced_) c_.ctx().learner.average(c_.up_nodes());
    step();
  }

  void on_up(NodeId) override {
    if (idle_) step();
  }

 private:
  void step() {
    ring_ = c_.up_nodes();
    idle_ = ring_.empty();
    reduced_ = false;
    flows_.clear();
    if (idle_) return;
    const int64_t n = static_cast<int64_t>(ring_.size()), bytes = c_.ctx().learner.model_bytes().count;
    chunk_ = Bytes{(bytes + n - 1) / n};
    waiting_ = static_cast<int>(ring_.size());
    for (NodeId m : ring_)
      c_.iterate(
          m,
          [this] {
            if (--waiting_ == 0) reduce();
          },
          /*run_kernel=*/false);
  }

  void reduce() {
    c_.ctx().learner.step_all(ring_, c_.ctx().sim.now());
    reduced_ = true;
    if (ring_.size() == 1) return finish();
    phase(0);
  }

  void phase(int k) {
    const int size = static_cast<int>(ring_.size());
    if (k == 2 * (size - 1)) return finish();
    waiting_ = size;
    flows_.clear();
    for (int i = 0; i < size; ++i)
      flows_.push_back(c_.send_bytes(ring_[i], ring_[(i + 1) % size], chunk_, [this, k](const FlowRecord& f) {
        if (!f.lost && --waiting_ == 0) phase(k + 1);
      }));
  }

  void finish() {
    c_.ctx().learner.average(ring_);
    step();
  }

  Cluster& c_;
  Bytes chunk_;
  std::vector<NodeId> ring_;   // this step's members, in id order
  std::vector<FlowId> flows_;  // this phase's chunks
  int waiting_ = 0;
  bool idle_ = false, reduced_ = false;
};

}  // namespace

MethodType allreduce_type() {
  MethodType t;
  t.name = "allreduce";
  t.summary = "synchronous SGD: every step waits for the slowest node, then a ring all-reduce as flows";
  t.merge = MethodType::Merge::kOwn;
  t.make = [](Cluster& c) { return std::make_unique<AllReduce>(c); };
  return t;
}

}  // namespace gossipsim
