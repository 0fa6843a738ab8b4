// gosgd: GoSGD (Blot, Picard, Cord and Thome, "Gossip training for deep
// learning", 2016) as a protocol of its own. Every node computes without
// pause; after each iteration, with probability p (`push_probability`), it
// pushes its model to a uniformly random neighbour, halving its weight a_i
// and sending that half along; the receiver merges at its next iteration
// boundary by sum-weights: x_j <- (a_j x_j + a_i x_i) / (a_j + a_i),
// a_j <- a_j + a_i (sim/cluster.h). The weights of all nodes and of the
// models in flight always sum to the node count.
// How pushes leave (`queue`): one (default): at most one in flight; a push
// drawn meanwhile is kept (a newer one replaces it, to its own peer) and
// leaves, halving the weight and with the newest model, the moment the
// uplink frees. blocking: the node waits for its push to arrive before its
// next iteration (Theano-MPI's GOSGD_Exchanger pushes with a blocking send).
// unbounded: every push leaves at once; they pile onto the uplink and share
// it (967 started, 420 finished in 60 s on a 2 Mbit/s cut: issue 23).
// Churn: it pushes only to neighbours that are up (none: no push).
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class GoSgd : public NodeLoops {
 public:
  explicit GoSgd(Cluster& c)
      : NodeLoops(c), p_(c.ctx().options.push_probability), queue_(c.ctx().options.queue), queued_(c.size()) {}

  void on_down(NodeId n) override { queued_[n].reset(); }

 private:
  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      if (uniform01(c_.rng(n)) < p_)
        if (const std::optional<NodeId> peer = c_.up_peer(n)) {
          if (queue_ == PushQueue::kBlocking)
            return static_cast<void>(c_.send(n, *peer, [this, n](const FlowRecord&) { compute(n); }));
          push(n, *peer);
        }
      compute(n);
    });
  }

  void push(NodeId n, NodeId peer) {
    if (queue_ == PushQueue::kUnbounded) return static_cast<void>(c_.send(n, peer));
    if (c_.outgoing(n) > 0) {
      queued_[n] = peer;  // a newer push replaces the one waiting
      return;
    }
    c_.send(n, peer, [this, n](const FlowRecord&) {
      if (!queued_[n]) return;
      const NodeId next = *queued_[n];
      queued_[n].reset();
      if (c_.up(next)) push(n, next);
    });
  }

  double p_;
  PushQueue queue_;
  std::vector<std::optional<NodeId>> queued_;  // queue: one, the push waiting for the uplink
};

}  // namespace

MethodType gosgd_type() {
  MethodType t;
  t.name = "gosgd";
  t.summary = "GoSGD (Blot et al. 2016): after each iteration, push with probability p; sum-weights merges";
  t.merge = MethodType::Merge::kFixed;
  t.merge_rule = MergeRule::kSumWeights;
  t.read_options = [](const JsonReader& r, MethodOptions& m) {
    m.push_probability = r.number("push_probability", m.push_probability);
    r.require(m.push_probability > 0 && m.push_probability <= 1, "push_probability", "a probability in (0, 1]");
    m.queue = r.choice("queue", EnumNames<PushQueue>{{"one", PushQueue::kOne},
                                                     {"blocking", PushQueue::kBlocking},
                                                     {"unbounded", PushQueue::kUnbounded}});
  };
  t.make = [](Cluster& c) { return std::make_unique<GoSgd>(c); };
  return t;
}

}  // namespace gossipsim
