// sgp and osgp: Stochastic Gradient Push (Assran, Loizou, Ballas and Rabbat,
// "Stochastic gradient push for distributed deep learning", ICML 2019).
//
// Push-sum over the time-varying directed exponential graph of the paper:
// node i's round k is local_steps iterations, after which it sends to
// (i + 2^(k mod (m+1))) mod N, 2^m the largest power of two <= N - 1 (the
// graph is over node ids; /topology's peers are not used, the network routes
// the transfers as any other). It thus receives round k's message from
// (i - 2^(k mod (m+1))) mod N. Sending halves i's push-sum weight w_i and
// carries that half; the receiver merges by sum-weights,
// z_j <- (w_j z_j + w z_i) / (w_j + w), w_j <- w_j + w (sim/cluster.h). The
// learner holds the de-biased parameters z = x / w: they are what is
// evaluated and what the gradient is taken at. The step is applied to z;
// push-sum applies it to x = w z, which is the same while w = 1: always in
// sgp without churn (each round a node keeps half its weight and receives
// half of another's), only approximately in osgp, where w moves while
// messages are in flight.
//
// sgp: round k's message is merged at the end of the receiver's round k
// (later if it arrives later), and a node starts round k + 1 only once it
// holds it: x^(k+1) = P^(k) x^(k+1/2). Messages that arrive early wait.
// osgp (`tau` >= 1): messages are merged at the first iteration boundary
// after they arrive, and a node starts round k + 1 once the messages of
// rounds <= k - tau are merged: delays are bounded by tau rounds.
//
// Churn: a node sends nothing to a down peer (it keeps its weight); it does
// not wait for a message whose sender is down, was lost, or joined after
// that round. A node that joins starts at the latest round of the nodes up,
// with weight 1. Weight held by a node that goes down leaves the system.
#include <algorithm>
#include <map>
#include <set>

#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class PushSum : public NodeLoops {
 public:
  PushSum(Cluster& c, int tau) : NodeLoops(c), steps_(c.ctx().options.local_steps), tau_(tau), nodes_(c.size()) {
    while ((int64_t{2} << top_) <= c.size() - 1) ++top_;
  }

  void on_down(NodeId n) override {
    nodes_[n].held.clear();
    nodes_[n].waiting = false;
    for (NodeId i : c_.up_nodes()) try_start(i);
  }

  void on_up(NodeId n) override {
    Node& node = nodes_[n];
    int64_t round = 0;
    for (NodeId i : c_.up_nodes())
      if (i != n) round = std::max(round, nodes_[i].round);
    node = Node{};
    node.round = node.joined_at = node.next = round;
    compute(n);
  }

 private:
  struct Node {
    int64_t round = 0;                      // rounds completed
    int64_t joined_at = 0;                  // the round it (re)joined at
    int64_t next = 0;                       // messages of rounds < next are merged or will not come
    int steps = 0;                          // iterations into the current round
    bool waiting = false;                   // finished a round, blocked on a message
    std::map<int64_t, Cluster::Held> held;  // arrived, not merged, by round
    std::set<int64_t> settled;              // rounds >= next merged or lost
  };

  NodeId offset(int64_t round) const { return NodeId{1} << (round % (top_ + 1)); }
  NodeId out(NodeId i, int64_t round) const { return (i + offset(round)) % c_.size(); }
  NodeId in(NodeId i, int64_t round) const { return (i - offset(round) % c_.size() + c_.size()) % c_.size(); }

  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      Node& node = nodes_[n];
      if (++node.steps == steps_) {
        node.steps = 0;
        send(n, node.round++);
        node.waiting = true;
      }
      merge_ready(n);
      if (node.waiting)
        try_start(n);
      else
        compute(n);
    });
  }

  void send(NodeId i, int64_t round) {
    if (c_.size() < 2) return;
    const NodeId j = out(i, round);
    if (!c_.up(j)) return;
    Cluster::Ends ends;
    ends.hold = [this, j, round](const Cluster::Held& h) {
      nodes_[j].held.emplace(round, h);
      if (!c_.computing(j)) merge_ready(j), try_start(j);
    };
    ends.received = [this, j, round](const FlowRecord& f) {
      if (f.lost) settle(j, round), try_start(j);
    };
    c_.send(i, j, std::move(ends));
  }

  // Merges what its rule allows now (the node is not computing).
  void merge_ready(NodeId n) {
    Node& node = nodes_[n];
    for (auto it = node.held.begin(); it != node.held.end() && (tau_ > 0 || it->first < node.round);) {
      c_.merge_held(n, it->second);
      settle(n, it->first);
      it = node.held.erase(it);
    }
  }

  void settle(NodeId n, int64_t round) {
    if (round >= nodes_[n].next) nodes_[n].settled.insert(round);
  }

  bool excused(NodeId n, int64_t round) const {
    const NodeId s = in(n, round);
    return !c_.up(s) || nodes_[s].joined_at > round;
  }

  void try_start(NodeId n) {
    Node& node = nodes_[n];
    if (!node.waiting || !c_.up(n)) return;
    while (node.next < node.round && (node.settled.erase(node.next) || excused(n, node.next))) ++node.next;
    if (node.next < node.round - tau_) return;
    node.waiting = false;
    compute(n);
  }

  int steps_, tau_, top_ = 0;
  std::vector<Node> nodes_;
};

}  // namespace

MethodType sgp_type() {
  MethodType t;
  t.name = "sgp";
  t.summary = "Stochastic Gradient Push (Assran et al. 2019): push-sum over the directed exponential graph, in rounds";
  t.merge = MethodType::Merge::kFixed;
  t.merge_rule = MergeRule::kSumWeights;
  t.make = [](Cluster& c) { return std::make_unique<PushSum>(c, 0); };
  return t;
}

MethodType osgp_type() {
  MethodType t = sgp_type();
  t.name = "osgp";
  t.summary = "overlap SGP: SGP whose messages may be up to tau rounds late";
  t.read_options = [](const JsonReader& r, MethodOptions& m) {
    const int64_t tau = r.integer("tau", m.tau);
    r.require(tau >= 1 && tau <= 1000, "tau", "an integer in [1, 1000]");
    m.tau = static_cast<int>(tau);
  };
  t.make = [](Cluster& c) { return std::make_unique<PushSum>(c, c.ctx().options.tau); };
  return t;
}

}  // namespace gossipsim
