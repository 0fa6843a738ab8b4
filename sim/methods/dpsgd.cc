// dpsgd: synchronous D-PSGD (Lian et al., "Can decentralized algorithms
// outperform centralized algorithms?", 2017), in its adapt-then-combine
// form. Each node runs rounds: local_steps iterations, then it sends its
// model to every neighbour and waits until it holds this round's model from
// every neighbour it expects; then it mixes,
//   x_i <- W_ii x_i + sum_j W_ij x_j,
// with Metropolis-Hastings weights W_ij = 1 / (1 + max(d_i, d_j)) over the
// peer graph (d: degrees) and W_ii = 1 - sum_j W_ij, and starts its next
// round. A round thus waits for the slowest neighbour's transfer, not for
// the whole network. Models of later rounds are kept until their round.
//
// Churn: a node expects, for round r, the neighbours that are up and whose
// last join was at a round <= r; a neighbour that goes down is no longer
// waited for and its weight goes to W_ii. A node that joins starts at the
// latest round among its neighbours that are up. A model of a round its
// receiver has already mixed is never merged.
#include <algorithm>
#include <map>

#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class DPsgd : public NodeLoops {
 public:
  explicit DPsgd(Cluster& c) : NodeLoops(c), steps_(c.ctx().options.local_steps), nodes_(c.size()) {}

  void on_down(NodeId n) override {
    for (NodeId i : c_.peers(n))
      if (c_.up(i)) mix_when_ready(i);
  }

  void on_up(NodeId n) override {
    Node& node = nodes_[n];
    for (NodeId j : c_.peers(n))
      if (c_.up(j)) node.round = std::max(node.round, nodes_[j].round);
    node.joined_at = node.round;
    node.waiting = false;
    node.held.erase(node.held.begin(), node.held.lower_bound(node.round));
    compute(n);
  }

 private:
  struct Node {
    int64_t round = 0, joined_at = 0;
    bool waiting = false;                                     // sent this round's model, waiting for the neighbours'
    std::map<int64_t, std::map<NodeId, Cluster::Held>> held;  // by round, by sender
  };

  double weight(NodeId i, NodeId j) const { return 1.0 / (1.0 + std::max(c_.peers(i).size(), c_.peers(j).size())); }

  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      if (c_.iterations(n) % steps_ != 0) return compute(n);
      Node& node = nodes_[n];
      node.waiting = true;
      const int64_t round = node.round;
      for (NodeId j : c_.peers(n))
        if (c_.up(j)) {
          Cluster::Ends ends;
          ends.hold = [this, j, round](const Cluster::Held& h) {
            if (round >= nodes_[j].round) nodes_[j].held[round][h.src] = h;
            mix_when_ready(j);
          };
          c_.send(n, j, std::move(ends));
        }
      mix_when_ready(n);
    });
  }

  void mix_when_ready(NodeId i) {
    Node& node = nodes_[i];
    if (!node.waiting || !c_.up(i)) return;
    const auto& got = node.held[node.round];
    for (NodeId j : c_.peers(i))
      if (c_.up(j) && nodes_[j].joined_at <= node.round && !got.count(j)) return;
    // x_i <- W_ii x_i + sum_j W_ij x_j as merges folded one by one: after
    // each, node i holds the weighted mean of what it has folded so far.
    double self = 1;
    for (const auto& [j, h] : got) self -= weight(i, j);
    for (const auto& [j, h] : got) {
      c_.merge_held(i, h, self, weight(i, j));
      self += weight(i, j);
    }
    node.held.erase(node.round);
    node.waiting = false;
    ++node.round;
    compute(i);
  }

  int steps_;
  std::vector<Node> nodes_;
};

}  // namespace

MethodType dpsgd_type() {
  MethodType t;
  t.name = "dpsgd";
  t.summary =
      "synchronous D-PSGD (Lian et al. 2017): rounds that mix every neighbour's model by Metropolis-Hastings weights";
  t.merge = MethodType::Merge::kOwn;
  t.make = [](Cluster& c) { return std::make_unique<DPsgd>(c); };
  return t;
}

}  // namespace gossipsim
