// gossip-overlap (naive overlap): compute without pause. Whenever a node has
// no outgoing transfer in flight and local_steps iterations have passed since
// its last send, it sends to a uniformly random neighbour. It knows nothing
// of the receivers: several senders may share one receiver's downlink.
// "Whenever" is read by `ready`: at the end of an iteration (iteration-end,
// the default), or also the moment its own transfer ends (link-free), with
// the model as of its last finished iteration (the kernel of the iteration
// in progress has not run: sim/cluster.h).
// Churn: it picks among the neighbours that are up, and skips the send when
// none is; a lost transfer frees its sending side at once.
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class GossipOverlap : public NodeLoops {
 public:
  explicit GossipOverlap(Cluster& c)
      : NodeLoops(c),
        steps_(c.ctx().options.local_steps),
        link_free_(c.ctx().options.ready == Ready::kLinkFree),
        last_send_(c.size(), 0) {}

 private:
  void compute(NodeId n) override {
    c_.iterate(n, [this, n] {
      try_send(n);
      compute(n);
    });
  }

  void try_send(NodeId n) {
    if (c_.outgoing(n) != 0 || c_.iterations(n) - last_send_[n] < steps_) return;
    const std::optional<NodeId> peer = c_.up_peer(n);
    if (!peer) return;
    last_send_[n] = c_.iterations(n);
    if (!link_free_) return static_cast<void>(c_.send(n, *peer));
    c_.send(n, *peer, [this, n](const FlowRecord&) { try_send(n); });
  }

  int steps_;
  bool link_free_;
  std::vector<int64_t> last_send_;
};

}  // namespace

MethodType gossip_overlap_type() {
  MethodType t;
  t.name = "gossip-overlap";
  t.summary =
      "naive overlap: compute without pause, send to a random neighbour whenever nothing of its own is in flight";
  t.send_rule = true;
  t.make = [](Cluster& c) { return std::make_unique<GossipOverlap>(c); };
  return t;
}

}  // namespace gossipsim
