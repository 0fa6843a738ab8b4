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
      const NodeId peer = c_.up_peer(n);
      if (peer < 0) return compute(n);
      c_.send(n, peer, [this, n, life = c_.life(n)](const FlowRecord&) {
        if (c_.life(n) == life) compute(n);  // else it went down meanwhile
      });
    });
  }

  int steps_;
};

}  // namespace

std::unique_ptr<Method> make_gossip(Cluster& cluster) { return std::make_unique<Gossip>(cluster); }

}  // namespace gossipsim
