// A method is a protocol run by every node over a Cluster. Each method reads
// top to bottom in a file of its own, with its registry row at the bottom
// (sim/methods/registry.h); docs/methods.md defines them and
// docs/adding-a-method.md walks through adding one.
#pragma once

#include <memory>

#include "base/json_reader.h"
#include "sim/cluster.h"
#include "sim/methods/registry.h"

namespace gossipsim {

class Method {
 public:
  virtual ~Method() = default;
  // Schedules the first events; the simulator runs the rest.
  virtual void start() = 0;
  // Churn: node n has just gone down (the cluster has stopped it, cancelled
  // its continuations and cut its transfers, whose other ends have already
  // heard), or has just come up and should resume.
  virtual void on_down(NodeId) {}
  virtual void on_up(NodeId) {}
};

// The methods whose nodes all start computing at once, each in a loop of its
// own (compute(n) runs n's next iteration and decides what follows), and
// whose node that joins takes up its loop again (on_up, unless overridden).
class NodeLoops : public Method {
 public:
  void start() override {
    for (NodeId n = 0; n < c_.size(); ++n) compute(n);
  }
  void on_up(NodeId n) override { compute(n); }

 protected:
  explicit NodeLoops(Cluster& c) : c_(c) {}
  virtual void compute(NodeId n) = 0;
  Cluster& c_;
};

// The method of the cluster's options, built by its registry row.
inline std::unique_ptr<Method> make_method(Cluster& cluster) { return cluster.ctx().options.type->make(cluster); }

}  // namespace gossipsim
