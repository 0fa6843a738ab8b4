// gosgd: GoSGD (Blot, Picard, Cord and Thome, "Gossip training for deep
// learning", 2016) as a protocol of its own. Every node computes without
// pause; after each iteration, with probability p (`push_probability`), it
// pushes its model to a uniformly random neighbour, halving its weight a_i
// and sending that half along; the receiver merges at its next iteration
// boundary by sum-weights: x_j <- (a_j x_j + a_i x_i) / (a_j + a_i),
// a_j <- a_j + a_i (sim/cluster.h). Pushes do not wait for each other: a
// node may have several in flight, sharing its uplink. The weights of all
// nodes and of the models in flight always sum to the node count.
// Churn: it pushes only to neighbours that are up (none: no push).
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class GoSgd : public NodeLoops {
 public:
  explicit GoSgd(Cluster& c) : NodeLoops(c), p_(c.ctx().options.push_probability) {}

 private:
  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      if (uniform01(c_.rng(n)) < p_)
        if (const std::optional<NodeId> peer = c_.up_peer(n)) c_.send(n, *peer);
      compute(n);
    });
  }

  double p_;
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
  };
  t.make = [](Cluster& c) { return std::make_unique<GoSgd>(c); };
  return t;
}

}  // namespace gossipsim
