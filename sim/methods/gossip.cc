// gossip (blocking): repeat { local_steps iterations; pick a random
// neighbour; send; stay idle until the transfer completes }.
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class Gossip : public Method {
 public:
  explicit Gossip(Cluster& c) : c_(c), steps_(c.ctx().options.local_steps) {}

  void start() override {
    for (NodeId n = 0; n < c_.size(); ++n) compute(n);
  }

 private:
  void compute(NodeId n) {
    c_.iterate(n, [this, n] {
      if (c_.iterations(n) % steps_ != 0) return compute(n);
      c_.send(n, c_.random_peer(n), [this, n](const FlowRecord&) { compute(n); });
    });
  }

  Cluster& c_;
  int steps_;
};

}  // namespace

std::unique_ptr<Method> make_gossip(Cluster& cluster) { return std::make_unique<Gossip>(cluster); }

}  // namespace gossipsim
