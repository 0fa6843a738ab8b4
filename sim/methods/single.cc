// single: one node trains on the whole training set with no communication;
// the centralised reference curve. It runs at node 0's compute speed.
#include "sim/methods/method.h"

namespace gossipsim {

namespace {

class Single : public Method {
 public:
  explicit Single(Cluster& c) : c_(c) {}
  void start() override { compute(); }

 private:
  void compute() {
    c_.iterate(0, [this] { compute(); });
  }
  Cluster& c_;
};

}  // namespace

MethodType single_type() {
  MethodType t;
  t.name = "single";
  t.summary = "one node trains on the whole training set, no network: the centralised reference";
  t.trains_alone = true;
  t.merge = MethodType::Merge::kOwn;
  t.make = [](Cluster& c) { return std::make_unique<Single>(c); };
  return t;
}

}  // namespace gossipsim
