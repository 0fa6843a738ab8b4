#include "sim/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/error.h"

namespace gossipsim {

Cluster::Cluster(const MethodContext& ctx, int nodes)
    : ctx_(ctx), sum_weights_(ctx.options.merge == MergeRule::kSumWeights), jitter_(ctx.scenario.compute.jitter) {
  const Streams streams(ctx.scenario.seed);
  nodes_.resize(nodes);
  for (NodeId n = 0; n < nodes; ++n) {
    Rng speed = streams.stream("compute-speed", n);
    nodes_[n].base = milliseconds(ctx.scenario.compute.iteration_ms.sample(speed));
    const ComputeOverrides& o = ctx.scenario.compute.overrides;
    if (!o.empty() && n < static_cast<NodeId>(o.iteration_ms.size())) {
      if (o.iteration_ms[n]) nodes_[n].base = milliseconds(*o.iteration_ms[n]);
      nodes_[n].jitter = o.jitter[n].value_or(jitter_);
    } else {
      nodes_[n].jitter = jitter_;
    }
    if (nodes_[n].base <= Time::zero()) nodes_[n].base = nanoseconds(1);
    nodes_[n].jitter_rng = streams.stream("compute-jitter", n);
    nodes_[n].choice_rng = streams.stream("peer-choice", n);
    up_nodes_.push_back(n);
  }
}

void Cluster::iterate(NodeId n, std::function<void()> then, bool run_kernel) {
  Node& node = nodes_[n];
  if (!node.up) return;
  GOSSIPSIM_CHECK(!node.computing, "a node started an iteration while computing");
  Time duration = node.base;
  if (node.jitter > 0) {
    double u = 2 * uniform01(node.jitter_rng) - 1;
    duration = Time::ns(std::max<int64_t>(1, std::llround(node.base.ns() * node.speed * (1 + node.jitter * u))));
  } else if (node.speed != 1) {
    duration = Time::ns(std::max<int64_t>(1, std::llround(node.base.ns() * node.speed)));
  }
  node.computing = true;
  node.iteration_start = now();
  node.iteration = ctx_.sim.schedule(duration, [this, n, duration, run_kernel, then = std::move(then)] {
    Node& node = nodes_[n];
    if (run_kernel) ctx_.learner.step(n, now());
    node.computing = false;
    node.compute_total += duration;
    ++node.iterations;
    ++total_iterations_;
    ctx_.recorder.event({"compute", 'X', node.iteration_start, duration, n, kComputeTrack});
    std::vector<Pending> inbox;
    inbox.swap(node.inbox);
    for (const Pending& p : inbox) merge(n, p);
    if (then) then();
  });
}

const std::vector<NodeId>& Cluster::peers(NodeId n) const { return ctx_.scenario.topology.peers.at(n); }

NodeId Cluster::random_peer(NodeId n) {
  const auto& p = peers(n);
  return p[uniform_index(nodes_[n].choice_rng, p.size())];
}

std::optional<NodeId> Cluster::up_peer(NodeId n) {
  if (up_nodes_.size() == nodes_.size()) return random_peer(n);
  std::vector<NodeId> up;
  for (NodeId p : peers(n))
    if (nodes_[p].up) up.push_back(p);
  if (up.empty()) return std::nullopt;
  return up[uniform_index(nodes_[n].choice_rng, up.size())];
}

void Cluster::abandon_iteration(NodeId n) {
  Node& node = nodes_[n];
  if (!node.computing) return;
  ctx_.sim.cancel(node.iteration);
  node.computing = false;
  node.compute_total += now() - node.iteration_start;  // spent, though its result is thrown away
}

void Cluster::membership_changed() {
  up_nodes_.clear();
  for (NodeId n = 0; n < size(); ++n)
    if (nodes_[n].up) up_nodes_.push_back(n);
  // With nobody up, evaluations keep averaging every model as it was left.
  ctx_.learner.set_evaluated(up_nodes_.empty() || up_nodes_.size() == nodes_.size() ? std::vector<NodeId>{}
                                                                                    : up_nodes_);
}

void Cluster::start_down(NodeId n) {
  nodes_[n].up = false;
  nodes_[n].down_since = now();
  membership_changed();
}

void Cluster::go_down(NodeId n, bool crash) {
  Node& node = nodes_[n];
  GOSSIPSIM_CHECK(node.up, "a node that is down went down");
  node.up = false;
  ++node.life;
  node.down_since = now();
  // Before anything below can call back into a method (a cut transfer's
  // sender hears of it at once): up_peer() must no longer offer this node.
  membership_changed();
  abandon_iteration(n);
  const std::string name = fmt::format("n{}", n);
  ctx_.recorder.network_events.push_back({now(), crash ? "crash" : "leave", name, 0, ""});
  std::vector<Pending> inbox;
  inbox.swap(node.inbox);
  for (const Pending& p : inbox) {
    if (crash)
      lose(p.row, now(), "receiver crashed before merging it");
    else
      merge(n, p);
  }
  if (crash)
    cut_where([n](const FlowRecord& f) { return f.src == n || f.dst == n; },
              [n](const FlowRecord& f) { return f.src == n ? "sender crashed" : "receiver crashed"; });
  else
    cut_where([n](const FlowRecord& f) { return f.dst == n; }, [](const FlowRecord&) { return "receiver left"; });
}

void Cluster::come_up(NodeId n, const std::string& model) {
  Node& node = nodes_[n];
  GOSSIPSIM_CHECK(!node.up, "a node that is up joined");
  node.up = true;
  node.down_total += now() - node.down_since;
  node.weight = 1;
  if (model == "fresh")
    ctx_.learner.reset_node(n, {});
  else if (model == "average" && !up_nodes_.empty())
    ctx_.learner.reset_node(n, up_nodes_);
  ctx_.recorder.network_events.push_back({now(), "join", fmt::format("n{}", n), 0, model});
  membership_changed();
}

void Cluster::cut_where(const std::function<bool(const FlowRecord&)>& which,
                        const std::function<std::string(const FlowRecord&)>& reason) {
  auto cut = ctx_.net.cancel_flows([&](const FlowRecord& f) { return !f.background && which(f); });
  for (auto& [record, done] : cut) {
    record.lost_reason = reason(record);
    if (done) done(record);
  }
}

void Cluster::cut(const std::vector<FlowId>& flows, const std::string& reason) {
  cut_where([&](const FlowRecord& f) { return std::find(flows.begin(), flows.end(), f.id) != flows.end(); },
            [reason](const FlowRecord&) { return reason; });
}

void Cluster::lose(size_t row, Time when, const std::string& reason) {
  TransferRow& t = ctx_.recorder.transfers[row];
  t.lost = true;
  ++transfers_lost_;
  ctx_.recorder.network_events.push_back(
      {when, "lost", fmt::format("n{}->n{}", t.src, t.dst), static_cast<double>(t.bytes), reason});
}

void Cluster::comm_change(NodeId n, int delta_out, int delta_in) {
  Node& node = nodes_[n];
  bool before = node.outgoing + node.incoming > 0;
  node.outgoing += delta_out;
  node.incoming += delta_in;
  bool after = node.outgoing + node.incoming > 0;
  if (!before && after) node.comm_since = now();
  if (before && !after) node.comm_total += now() - node.comm_since;
}

size_t Cluster::begin_transfer(NodeId src, NodeId dst, Bytes size) {
  TransferRow row;
  row.src = src;
  row.dst = dst;
  row.bytes = size.count;
  row.snapshot = row.start = now();
  row.sender_iterations_at_snapshot = nodes_[src].iterations;
  ctx_.recorder.transfers.push_back(row);
  ++nodes_[src].sent;
  comm_change(src, 1, 0);
  comm_change(dst, 0, 1);
  return ctx_.recorder.transfers.size() - 1;
}

void Cluster::end_transfer(const FlowRecord& f, size_t row) {
  if (f.lost) {
    lose(row, f.finish, f.lost_reason.empty() ? "cut" : f.lost_reason);
    comm_change(f.src, -1, 0);
    comm_change(f.dst, 0, -1);
    return;
  }
  bytes_sent_ += f.size.count;
  ++transfers_done_;
  ctx_.recorder.transfers[row].finish = f.finish;
  ctx_.recorder.transfers[row].finished = true;
  comm_change(f.src, -1, 0);
  comm_change(f.dst, 0, -1);
  ++nodes_[f.dst].received;
}

FlowId Cluster::send(NodeId src, NodeId dst, Ends ends) {
  double weight = 1;
  if (sum_weights_) weight = (nodes_[src].weight /= 2);
  const Bytes size = ctx_.learner.model_bytes();
  Pending p{ctx_.learner.snapshot(src), weight, begin_transfer(src, dst, size)};
  ctx_.recorder.transfers[p.row].weight = weight;
  const bool holds = static_cast<bool>(ends.hold);
  auto hold = owned_by(dst, std::move(ends.hold));
  auto received = owned_by(dst, std::move(ends.received));
  auto sent = owned_by(src, std::move(ends.sent));
  return ctx_.net.start_flow(
      src, dst, size,
      [this, p, hold = std::move(hold), received = std::move(received), sent = std::move(sent),
       ended = std::move(ends.ended), holds](const FlowRecord& f) {
        end_transfer(f, p.row);
        if (!f.lost) {
          ctx_.recorder.event({"send", 'X', f.start, f.finish - f.start, f.src, kSendTrack});
          ctx_.recorder.event({"transfer", 's', f.start, Time::zero(), f.src, kSendTrack, f.id});
          ctx_.recorder.event({"transfer", 'f', f.finish, Time::zero(), f.dst, kReceiveTrack, f.id});
          if (holds)
            hold(Held{p.model, p.row, f.src, p.weight});
          else
            deliver(f.dst, p);
        }
        received(f);
        sent(f);
        if (ended) ended(f);
      });
}

FlowId Cluster::send_bytes(NodeId src, NodeId dst, Bytes size, Ended sent) {
  const size_t row = begin_transfer(src, dst, size);
  return ctx_.net.start_flow(src, dst, size, [this, row, sent = owned_by(src, std::move(sent))](const FlowRecord& f) {
    end_transfer(f, row);
    if (!f.lost) {  // on the timeline as a model's transfer is (allreduce's ring chunks)
      ctx_.recorder.event({"send", 'X', f.start, f.finish - f.start, f.src, kSendTrack});
      ctx_.recorder.event({"transfer", 's', f.start, Time::zero(), f.src, kSendTrack, f.id});
      ctx_.recorder.event({"transfer", 'f', f.finish, Time::zero(), f.dst, kReceiveTrack, f.id});
    }
    sent(f);
  });
}

void Cluster::deliver(NodeId dst, Pending p) {
  if (nodes_[dst].computing)
    nodes_[dst].inbox.push_back(std::move(p));
  else
    merge(dst, p);
}

void Cluster::merge(NodeId dst, const Pending& p) {
  Node& d = nodes_[dst];
  if (sum_weights_) {
    ctx_.learner.merge(dst, p.model, d.weight, p.weight);
    d.weight += p.weight;
  } else {
    ctx_.learner.merge(dst, p.model, 1, 1);
  }
  merged(dst, p.row);
}

void Cluster::merge_held(NodeId dst, const Held& h, double w_self, double w_other) {
  GOSSIPSIM_CHECK(!nodes_[dst].computing, "a held model was merged into a node that is computing");
  ctx_.learner.merge(dst, h.model, w_self, w_other);
  merged(dst, h.row);
}

void Cluster::merge_held(NodeId dst, const Held& h) {
  GOSSIPSIM_CHECK(!nodes_[dst].computing, "a held model was merged into a node that is computing");
  merge(dst, Pending{h.model, h.weight, h.row});
}

void Cluster::merged(NodeId dst, size_t transfer) {
  ++merges_;
  TransferRow& row = ctx_.recorder.transfers[transfer];
  row.merge = now();
  row.merged = true;
  row.sender_iterations_at_merge = nodes_[row.src].iterations;
  ctx_.recorder.event({"merge", 'i', now(), Time::zero(), dst, kReceiveTrack});
}

void Cluster::close() {
  auto& rows = ctx_.recorder.nodes;
  rows.clear();
  for (auto& n : nodes_) {
    NodeRow r;
    r.compute = n.compute_total;
    if (n.computing) r.compute += now() - n.iteration_start;
    r.communicating = n.comm_total + (n.outgoing + n.incoming > 0 ? now() - n.comm_since : Time::zero());
    r.idle = now() - r.compute;
    r.iterations = n.iterations;
    r.sent = n.sent;
    r.received = n.received;
    r.weight = n.weight;
    r.down = n.down_total + (n.up ? Time::zero() : now() - n.down_since);
    rows.push_back(r);
  }
}

}  // namespace gossipsim
