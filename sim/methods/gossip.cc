// gossip (blocking): repeat { local_steps iterations; pick a random
// neighbour; send; stay idle until the transfer completes }.
// Churn: it picks among the neighbours that are up (none: another round of
// local steps); a transfer lost to the receiver's crash or leave ends its
// wait at once.
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class Gossip : public NodeLoops {
 public:
  explicit Gossip(Cluster& c) : NodeLoops(c), steps_(c.ctx().options.local_steps) {}

 private:
  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      if (c_.iterations(n) % steps_ != 0) return compute(n);
      const std::optional<NodeId> peer = c_.up_peer(n);
      if (!peer) return compute(n);
      c_.send(n, *peer, [this, n](const FlowRecord&) { compute(n); });
    });
  }

  int steps_;
};

}  // namespace

MethodType gossip_type() {
  MethodType t;
  t.name = "gossip";
  t.summary = "blocking gossip: local steps, send to a random neighbour, wait for the transfer";
  t.make = [](Cluster& c) { return std::make_unique<Gossip>(c); };
  return t;
}

}  // namespace gossipsim
