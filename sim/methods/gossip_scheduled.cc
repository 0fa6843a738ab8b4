// gossip-scheduled: the paper's method (Oguni and Shudo, 2021) as docs/methods.md reads it.
//
// Nodes compute without pause and gossip with communication scheduling. Two
// pieces of information are shared:
//   - when each node's sending and receiving sides are free (a time <= now
//     means free now); a reservation holds a side until its expected finish;
//   - est(i, j), the time a model takes from i to j: seeded from the route's
//     nominal latency and capacity, then an EWMA of observed transfers.
// When node i is ready (local_steps iterations since its last send and
// nothing of its own in flight or planned; checked when an iteration ends,
// and with ready: link-free also the moment its own transfer ends or its
// plan is dropped) it computes, for each neighbour
// j, f_j = max(now, send_free(i), recv_free(j)) + est(i, j), picks j by the
// selection policy, and reserves i's sending side and j's receiving side
// until f_j. If the pair is free only later, i keeps computing and takes its
// snapshot at the start time: the model that travels is the newest possible.
//
// Information is `oracle` (one board everyone reads at once) or `gossiped`
// (each node has its own view; changes travel as control messages with
// their route's latency). Either way, a transfer whose receiver (or sender)
// is still busy when its start comes waits in that node's queue.
//
// Churn: the candidates are the neighbours that are up (none: no plan, it
// tries again after its next iteration). A node that goes down forgets its
// plan; a planned transfer whose planner has gone down since, or whose
// receiver is down, when its start comes, is dropped and its reservations
// released (they are shared state, so they are settled whatever became of
// the nodes); a transfer lost in flight releases them at once, and its time
// does not enter est(i, j).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/methods/method.h"

namespace gossipsim {

namespace {

enum Side { kSend = 0, kRecv = 1 };

// The communication-enabled state, true and as each node sees it. In
// gossiped mode every node keeps a view of every node's two sides: 2N
// entries a node, N^2 in all (16 bytes each), fine to a few thousand nodes.
class InfoBoard {
 public:
  InfoBoard(Cluster& c, bool gossiped) : c_(c), gossiped_(gossiped), truth_(c.size()) {
    if (gossiped_) views_.assign(c.size(), std::vector<Entry>(2 * c.size()));
  }

  // When `viewer` believes side s of node k is free.
  Time free_at(NodeId viewer, NodeId k, Side s) const {
    return gossiped_ ? views_[viewer][2 * k + s].time : truth_[k].free_at(s);
  }

  void reserve(NodeId by, NodeId k, Side s, Time until) {
    truth_[k].ends[s].push_back(until);
    publish(by, k, s);
  }
  void release(NodeId by, NodeId k, Side s, Time until) {
    auto& e = truth_[k].ends[s];
    e.erase(std::find(e.begin(), e.end(), until));
    publish(by, k, s);
  }
  int64_t control_messages() const { return messages_; }

 private:
  struct Entry {
    Time time;
    uint64_t version = 0;
  };
  struct Sides {
    std::vector<Time> ends[2];  // open reservations per side
    uint64_t version[2] = {0, 0};
    Time free_at(Side s) const {
      Time t = Time::zero();
      for (Time e : ends[s]) t = std::max(t, e);
      return t;
    }
  };

  void publish(NodeId by, NodeId k, Side s) {
    const Time t = truth_[k].free_at(s);
    const uint64_t v = ++truth_[k].version[s];
    if (!gossiped_) return;
    apply(by, k, s, t, v);
    std::vector<NodeId> to = c_.peers(by);
    to.insert(to.end(), c_.peers(k).begin(), c_.peers(k).end());
    to.push_back(k);
    std::sort(to.begin(), to.end());
    to.erase(std::unique(to.begin(), to.end()), to.end());
    for (NodeId m : to) {
      if (m == by) continue;
      ++messages_;
      c_.ctx().net.send_control(by, m, [this, m, k, s, t, v] { apply(m, k, s, t, v); });
    }
  }
  void apply(NodeId viewer, NodeId k, Side s, Time t, uint64_t v) {
    Entry& e = views_[viewer][2 * k + s];
    if (v > e.version) e = Entry{t, v};
  }

  Cluster& c_;
  bool gossiped_;
  std::vector<Sides> truth_;
  std::vector<std::vector<Entry>> views_;
  int64_t messages_ = 0;
};

class GossipScheduled : public NodeLoops {
 public:
  explicit GossipScheduled(Cluster& c)
      : NodeLoops(c),
        opt_(c.ctx().options),
        board_(c, opt_.info == Info::kGossiped),
        node_mode_(opt_.reservation == Reservation::kNode),
        push_pull_(opt_.exchange == Exchange::kPushPull),
        nodes_(c.size()),
        region_(region_ids(c.ctx().scenario.topology)) {
    const Bytes size = c.ctx().learner.model_bytes();
    for (NodeId i = 0; i < c.size(); ++i)
      for (NodeId j : c.peers(i)) nodes_[i].est[j] = c.ctx().net.nominal_time(i, j, size);
  }

  // Its plan, if any, is no longer its own: dropped when its start comes.
  void on_down(NodeId n) override { nodes_[n].plan.reset(); }

 private:
  struct Plan {
    uint64_t id;
    NodeId peer;
    Time start, finish;
    std::vector<std::pair<NodeId, Side>> sides;  // what it reserves
  };
  struct Node {
    std::map<NodeId, Time> est;    // by neighbour
    std::optional<uint64_t> plan;  // its transfer planned or in flight
    int64_t last_send = 0;
    std::vector<std::function<void()>> waiting;  // transfers waiting for this node to be free
    // Its plans so far: how many, how many left its region, and the
    // number of the latest to each peer (the first plan is number 1).
    int64_t plans = 0, crossing = 0;
    std::map<NodeId, int64_t> planned_to;
  };

  void compute(NodeId i) override {
    c_.iterate(i, [this, i] {
      if (ready(i)) plan(i);
      compute(i);
    });
  }

  bool ready(NodeId i) const {
    return c_.up(i) && !nodes_[i].plan && c_.iterations(i) - nodes_[i].last_send >= opt_.local_steps;
  }

  // Which sides an exchange between i and j occupies.
  std::vector<std::pair<NodeId, Side>> sides_of(NodeId i, NodeId j) const {
    if (node_mode_) return {{i, kSend}, {i, kRecv}, {j, kSend}, {j, kRecv}};
    if (push_pull_) return {{i, kSend}, {j, kRecv}, {j, kSend}, {i, kRecv}};
    return {{i, kSend}, {j, kRecv}};
  }

  void plan(NodeId i) {
    const Time now = c_.now();
    std::vector<Plan> options;
    for (NodeId j : c_.peers(i)) {
      if (!c_.up(j)) continue;
      Plan p{next_plan_, j, now, now, sides_of(i, j)};
      for (auto [k, s] : p.sides) p.start = std::max(p.start, board_.free_at(i, k, s));
      p.finish = p.start + nodes_[i].est[j];
      options.push_back(std::move(p));
    }
    if (options.empty()) return;
    Plan chosen = select(i, admissible(i, std::move(options)));
    Node& n = nodes_[i];
    n.planned_to[chosen.peer] = ++n.plans;
    n.crossing += region_[chosen.peer] != region_[i];
    for (auto [k, s] : chosen.sides) board_.reserve(i, k, s, chosen.finish);
    nodes_[i].plan = next_plan_++;
    c_.ctx().sim.schedule_at(chosen.start, [this, i, chosen] { begin(i, chosen); });
  }

  // The interventions (rotate, cross_region_floor): each narrows the
  // candidates, and neither ever leaves none.
  std::vector<Plan> admissible(NodeId i, std::vector<Plan> options) const {
    const Node& n = nodes_[i];
    auto keep = [&options](auto&& pred) {
      std::vector<Plan> kept;
      for (const Plan& p : options)
        if (pred(p)) kept.push_back(p);
      if (!kept.empty()) options = std::move(kept);
    };
    if (n.crossing < opt_.cross_region_floor * static_cast<double>(n.plans + 1))
      keep([&](const Plan& p) { return region_[p.peer] != region_[i]; });
    if (opt_.rotate > 0) {
      // Peers of its last `rotate` plans are out; if that is every
      // candidate, the one it planned to least recently stays.
      int64_t oldest = std::numeric_limits<int64_t>::max();
      for (const Plan& p : options) oldest = std::min(oldest, planned_to(i, p.peer));
      const int64_t last_in = std::max(oldest, std::max<int64_t>(0, n.plans - opt_.rotate));
      keep([&](const Plan& p) { return planned_to(i, p.peer) <= last_in; });
    }
    return options;
  }

  // The number of i's latest plan to j; 0 if none.
  int64_t planned_to(NodeId i, NodeId j) const {
    auto it = nodes_[i].planned_to.find(j);
    return it == nodes_[i].planned_to.end() ? 0 : it->second;
  }

  Plan select(NodeId i, const std::vector<Plan>& options) {
    const Time now = c_.now();
    Rng& rng = c_.rng(i);
    auto min_finish = [&](const std::vector<const Plan*>& among) {
      Time best = Time::max();
      for (const Plan* p : among) best = std::min(best, p->finish);
      std::vector<const Plan*> ties;
      for (const Plan* p : among)
        if (p->finish == best) ties.push_back(p);
      return *ties[uniform_index(rng, ties.size())];
    };
    std::vector<const Plan*> all, free_now;
    for (const Plan& p : options) {
      all.push_back(&p);
      if (p.start == now) free_now.push_back(&p);
    }
    if (opt_.selection == Selection::kRandomEnabled)
      return free_now.empty() ? min_finish(all) : *free_now[uniform_index(rng, free_now.size())];
    if (opt_.selection == Selection::kWeighted) {
      // Probability proportional to 1 / (f_j - now).
      double total = 0;
      std::vector<double> w;
      for (const Plan* p : all) total += w.emplace_back(1.0 / std::max<int64_t>(1, (p->finish - now).ns()));
      double u = uniform01(rng) * total;
      for (size_t k = 0; k < all.size(); ++k)
        if ((u -= w[k]) < 0) return *all[k];
      return *all.back();
    }
    if (opt_.selection == Selection::kMix) {
      // The cheap set, and in it the peer planned to least recently
      // (never: first); then the sooner finish, then a uniform draw.
      Time best = Time::max();
      for (const Plan* p : all) best = std::min(best, p->finish);
      const double bound = (1 + opt_.slack) * static_cast<double>((best - now).ns());
      std::vector<const Plan*> cheap;
      for (const Plan* p : all)
        if (static_cast<double>((p->finish - now).ns()) <= bound) cheap.push_back(p);
      int64_t oldest = std::numeric_limits<int64_t>::max();
      for (const Plan* p : cheap) oldest = std::min(oldest, planned_to(i, p->peer));
      std::vector<const Plan*> stale;
      for (const Plan* p : cheap)
        if (planned_to(i, p->peer) == oldest) stale.push_back(p);
      return min_finish(stale);
    }
    return min_finish(all);
  }

  // Nodes of the exchange that still have a transfer in flight on a side it needs.
  NodeId busy_node(NodeId i, NodeId j) const {
    for (NodeId k : {i, j}) {
      bool sending = c_.outgoing(k) > 0, receiving = c_.incoming(k) > 0;
      if (node_mode_ && (sending || receiving)) return k;
      if (!node_mode_) {
        if ((k == i || push_pull_) && sending) return k;
        if ((k == j || push_pull_) && receiving) return k;
      }
    }
    return -1;
  }

  bool current(NodeId i, const Plan& plan) const { return nodes_[i].plan == plan.id; }

  // Ends a plan: its reservations go, and its planner, if it is still its
  // own, may plan again.
  void settle(NodeId i, const Plan& plan) {
    for (auto [k, s] : plan.sides) board_.release(k == i ? i : plan.peer, k, s, plan.finish);
    if (!current(i, plan)) return;
    nodes_[i].plan.reset();
    // link-free: planned again at once, with the model of its last finished iteration.
    if (opt_.ready == Ready::kLinkFree && ready(i)) plan_after_settling_.push_back(i);
  }

  void begin(NodeId i, const Plan& plan) {
    const NodeId j = plan.peer;
    if (!current(i, plan) || !c_.up(i) || !c_.up(j)) {
      settle(i, plan);
      return plan_settled();
    }
    if (NodeId busy = busy_node(i, j); busy >= 0) {
      nodes_[busy].waiting.push_back([this, i, plan] { begin(i, plan); });
      return;
    }
    nodes_[i].last_send = c_.iterations(i);
    auto pending = std::make_shared<int>(push_pull_ ? 2 : 1);
    auto done = [this, i, plan, pending](const FlowRecord& f) {
      if (f.src == i && !f.lost) {
        Time& est = nodes_[i].est[plan.peer];
        est = Time::ns(std::llround((1 - opt_.ewma) * est.ns() + opt_.ewma * (f.finish - f.start).ns()));
      }
      if (--*pending > 0) return;
      settle(i, plan);
      wake(i);
      wake(plan.peer);
      plan_settled();
    };
    c_.send(i, j, Cluster::Ends{{}, {}, {}, done});
    if (push_pull_) c_.send(j, i, Cluster::Ends{{}, {}, {}, done});
  }

  // Plans of the nodes that settle() found ready (link-free), made once the
  // transfers waiting for the freed sides have started, as an iteration's
  // end would see them.
  void plan_settled() {
    std::vector<NodeId> todo;
    todo.swap(plan_after_settling_);
    for (NodeId i : todo)
      if (ready(i)) plan(i);
  }

  void wake(NodeId k) {
    std::vector<std::function<void()>> w;
    w.swap(nodes_[k].waiting);
    for (auto& f : w) f();
  }

  const MethodOptions& opt_;
  InfoBoard board_;
  bool node_mode_, push_pull_;
  std::vector<Node> nodes_;
  std::vector<int> region_;  // by node
  uint64_t next_plan_ = 0;
  std::vector<NodeId> plan_after_settling_;
};

}  // namespace

MethodType gossip_scheduled_type() {
  MethodType t;
  t.name = "gossip-scheduled";
  t.summary = "the paper's method: overlap plus a schedule from shared free times and estimated transfer times";
  t.reference = true;
  t.send_rule = true;
  t.read_options = [](const JsonReader& r, MethodOptions& m) {
    m.selection = r.choice("selection", EnumNames<Selection>{{"min-finish", Selection::kMinFinish},
                                                             {"random-enabled", Selection::kRandomEnabled},
                                                             {"weighted", Selection::kWeighted},
                                                             {"mix", Selection::kMix}});
    m.info = r.choice("info", EnumNames<Info>{{"oracle", Info::kOracle}, {"gossiped", Info::kGossiped}});
    m.reservation = r.choice(
        "reservation", EnumNames<Reservation>{{"direction", Reservation::kDirection}, {"node", Reservation::kNode}});
    m.exchange =
        r.choice("exchange", EnumNames<Exchange>{{"push", Exchange::kPush}, {"push-pull", Exchange::kPushPull}});
    m.ewma = r.number("ewma", m.ewma);
    r.require(m.ewma > 0 && m.ewma <= 1, "ewma", "a number in (0, 1]");
    if (r.has("slack")) {
      r.require(m.selection == Selection::kMix, "slack", "no slack unless selection is mix");
      m.slack = r.number("slack");
      r.require(m.slack >= 0 && m.slack <= 1e6, "slack", "a number in [0, 1e6]");
    }
    const int64_t rotate = r.integer("rotate", 0);
    r.require(rotate >= 0 && rotate <= 1000000, "rotate", "an integer in [0, 1000000]");
    m.rotate = static_cast<int>(rotate);
    m.cross_region_floor = r.number("cross_region_floor", 0);
    r.require(m.cross_region_floor >= 0 && m.cross_region_floor <= 1, "cross_region_floor", "a number in [0, 1]");
  };
  t.make = [](Cluster& c) { return std::make_unique<GossipScheduled>(c); };
  return t;
}

}  // namespace gossipsim
