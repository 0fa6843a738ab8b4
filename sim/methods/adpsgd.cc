// adpsgd: AD-PSGD (Lian, Zhang, Zhang and Liu, "Asynchronous decentralized
// parallel stochastic gradient descent", ICML 2018). Every node computes
// without pause; pairwise averaging runs beside the computation and is
// atomic on both sides of the pair.
//
// Deadlock avoidance, the paper's bipartite rule: the peer graph is coloured
// in two (bipartition: max-cut, the default) breadth-first from the lowest
// node of each component, or (bipartition: regions) alternately within each
// region in id order, then
// improved by moving, in id order until none is left, any node with more
// peers of its own colour than of the other (each move adds edges between
// the colours: a local maximum cut; a complete graph splits in halves
// instead of one node against all). Every node that has a peer keeps one of
// the other colour. Colour 0 is *active*, colour 1 *passive*: only an active
// node starts an averaging, always with a passive neighbour, so no two nodes
// can each hold its own lock and wait for the other's. Edges between two
// nodes of one colour are unused (a bipartite graph has none).
//
// Active node i, once local_steps iterations have passed since its last
// averaging began and none of its own is in progress, sends its model x_i to
// a random passive neighbour that is up, and keeps computing. Passive node j
// serves requests one at a time in arrival order, at an iteration boundary:
// it sends its model x_j back to i and merges x_j <- (x_j + x_i) / 2; it
// serves the next request only when that reply has arrived. Node i merges
// the reply at its next iteration boundary, x_i <- (x_i + x_j) / 2; with no
// iteration of i in between, both sides now hold (x_i + x_j) / 2, else i
// keeps half of what it computed meanwhile (its gradients were taken on a
// model the averaging then changed, as in AD-PSGD).
//
// Churn: requests and replies to or from a node that goes down are lost
// (sim/cluster.h) and release the pair; a request whose sender has gone down
// since (its request is no longer the one it waits for) is not served.
#include <deque>
#include <map>
#include <queue>

#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class AdPsgd : public NodeLoops {
 public:
  explicit AdPsgd(Cluster& c) : NodeLoops(c), steps_(c.ctx().options.local_steps), nodes_(c.size()) { colour(); }

  void on_down(NodeId n) override {
    Node& node = nodes_[n];
    for (const Request& r : node.requests)
      if (current(r)) nodes_[r.from].averaging = false;
    node.averaging = false;
    node.serving = false;
    node.requests.clear();
  }

 private:
  struct Request {
    Cluster::Held model;
    NodeId from;
    uint64_t number;  // the requester's count of its requests, when it asked
  };
  struct Node {
    bool active = false;
    std::vector<NodeId> partners;  // neighbours of the other colour
    int since = 0;                 // iterations since its last request (active)
    bool averaging = false;        // active: a request of its own is in progress
    uint64_t requests_made = 0;    // active: the last one is the one in progress while averaging
    bool serving = false;          // passive: a reply is in flight
    std::deque<Request> requests;  // passive: waiting to be served
  };

  // Whether its requester is up and still waits for this request.
  bool current(const Request& r) const {
    return c_.up(r.from) && nodes_[r.from].averaging && nodes_[r.from].requests_made == r.number;
  }

  void colour() {
    std::vector<int> colour(c_.size(), -1);
    if (c_.ctx().options.bipartition == Bipartition::kRegions) {
      // Alternate within each region (nodes without one form one group).
      const Topology& t = c_.ctx().scenario.topology;
      std::map<std::string, int> next;
      for (NodeId n = 0; n < c_.size(); ++n) colour[n] = next[t.graph[t.nodes[n]].region]++ % 2;
    }
    for (NodeId root = 0; root < c_.size(); ++root) {
      if (colour[root] >= 0) continue;
      colour[root] = 0;
      std::queue<NodeId> q;
      q.push(root);
      while (!q.empty()) {
        const NodeId n = q.front();
        q.pop();
        for (NodeId p : c_.peers(n))
          if (colour[p] < 0) colour[p] = 1 - colour[n], q.push(p);
      }
    }
    for (bool moved = true; moved;) {
      moved = false;
      for (NodeId n = 0; n < c_.size(); ++n) {
        int same = 0;
        for (NodeId p : c_.peers(n)) same += colour[p] == colour[n];
        if (2 * same > static_cast<int>(c_.peers(n).size())) colour[n] = 1 - colour[n], moved = true;
      }
    }
    for (NodeId n = 0; n < c_.size(); ++n) {
      nodes_[n].active = colour[n] == 0;
      for (NodeId p : c_.peers(n))
        if (colour[p] != colour[n]) nodes_[n].partners.push_back(p);
    }
  }

  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      Node& node = nodes_[n];
      if (node.active) {
        if (++node.since >= steps_ && !node.averaging) request(n);
      } else {
        serve(n);
      }
      compute(n);
    });
  }

  void request(NodeId i) {
    std::vector<NodeId> up;
    for (NodeId p : nodes_[i].partners)
      if (c_.up(p)) up.push_back(p);
    if (up.empty()) return;
    const NodeId j = up[uniform_index(c_.rng(i), up.size())];
    nodes_[i].averaging = true;
    nodes_[i].since = 0;
    const uint64_t number = ++nodes_[i].requests_made;
    Cluster::Ends ends;
    ends.hold = [this, i, j, number](const Cluster::Held& h) {
      nodes_[j].requests.push_back({h, i, number});
      if (!c_.computing(j)) serve(j);
    };
    ends.sent = [this, i](const FlowRecord& f) {
      if (f.lost) nodes_[i].averaging = false;
    };
    c_.send(i, j, std::move(ends));
  }

  void serve(NodeId j) {
    Node& node = nodes_[j];
    while (!node.serving && !node.requests.empty()) {
      const Request r = node.requests.front();
      node.requests.pop_front();
      if (!current(r)) continue;
      node.serving = true;
      Cluster::Ends ends;
      ends.received = [this, i = r.from](const FlowRecord&) { nodes_[i].averaging = false; };
      ends.sent = [this, j](const FlowRecord&) {
        nodes_[j].serving = false;
        if (!c_.computing(j)) serve(j);
      };
      c_.send(j, r.from, std::move(ends));
      c_.merge_held(j, r.model, 1, 1);
    }
  }

  int steps_;
  std::vector<Node> nodes_;
};

}  // namespace

MethodType adpsgd_type() {
  MethodType t;
  t.name = "adpsgd";
  t.summary = "AD-PSGD (Lian et al. 2018): atomic pairwise averaging between active and passive nodes";
  t.merge = MethodType::Merge::kOwn;
  t.read_options = [](const JsonReader& r, MethodOptions& m) {
    m.bipartition = r.choice(
        "bipartition", EnumNames<Bipartition>{{"max-cut", Bipartition::kMaxCut}, {"regions", Bipartition::kRegions}});
  };
  t.make = [](Cluster& c) { return std::make_unique<AdPsgd>(c); };
  return t;
}

}  // namespace gossipsim
