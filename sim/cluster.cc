#include "sim/cluster.h"

#include <cmath>
#include <stdexcept>

namespace gossipsim {

Cluster::Cluster(const MethodContext& ctx, int nodes)
    : ctx_(ctx), gosgd_(ctx.options.merge == "gosgd"), jitter_(ctx.scenario.compute.jitter) {
  const Streams streams(ctx.scenario.seed);
  nodes_.resize(nodes);
  for (NodeId n = 0; n < nodes; ++n) {
    Rng speed = streams.stream("compute-speed", n);
    nodes_[n].base = milliseconds(ctx.scenario.compute.iteration_ms.sample(speed));
    const ComputeOverrides& o = ctx.scenario.compute.overrides;
    if (!o.empty() && n < static_cast<NodeId>(o.iteration_ms.size())) {
      if (!std::isnan(o.iteration_ms[n])) nodes_[n].base = milliseconds(o.iteration_ms[n]);
      nodes_[n].jitter = std::isnan(o.jitter[n]) ? jitter_ : o.jitter[n];
    } else {
      nodes_[n].jitter = jitter_;
    }
    if (nodes_[n].base <= Time::zero()) nodes_[n].base = nanoseconds(1);
    nodes_[n].jitter_rng = streams.stream("compute-jitter", n);
    nodes_[n].choice_rng = streams.stream("peer-choice", n);
  }
}

void Cluster::iterate(NodeId n, std::function<void()> then, bool run_kernel) {
  Node& node = nodes_[n];
  if (node.computing) throw std::logic_error("a node started an iteration while computing");
  Time duration = node.base;
  if (node.jitter > 0) {
    double u = 2 * uniform01(node.jitter_rng) - 1;
    duration = Time::ns(std::max<int64_t>(1, std::llround(node.base.ns() * (1 + node.jitter * u))));
  }
  node.computing = true;
  node.iteration_start = now();
  ctx_.sim.schedule(duration, [this, n, duration, run_kernel, then = std::move(then)] {
    Node& node = nodes_[n];
    if (run_kernel) ctx_.learner.step(n);
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
  bytes_sent_ += f.size.count;
  ++transfers_done_;
  ctx_.recorder.transfers[row].finish = f.finish;
  ctx_.recorder.transfers[row].finished = true;
  comm_change(f.src, -1, 0);
  comm_change(f.dst, 0, -1);
  ++nodes_[f.dst].received;
}

void Cluster::send(NodeId src, NodeId dst, Sent sent) {
  double weight = 1;
  if (gosgd_) weight = (nodes_[src].weight /= 2);
  const Bytes size = ctx_.learner.model_bytes();
  Pending p{ctx_.learner.snapshot(src), weight, begin_transfer(src, dst, size)};
  ctx_.net.start_flow(src, dst, size, [this, p, sent = std::move(sent)](const FlowRecord& f) {
    end_transfer(f, p.row);
    ctx_.recorder.event({"send", 'X', f.start, f.finish - f.start, f.src, kSendTrack});
    ctx_.recorder.event({"transfer", 's', f.start, Time::zero(), f.src, kSendTrack, f.id});
    ctx_.recorder.event({"transfer", 'f', f.finish, Time::zero(), f.dst, kReceiveTrack, f.id});
    deliver(f.dst, p);
    if (sent) sent(f);
  });
}

void Cluster::send_bytes(NodeId src, NodeId dst, Bytes size, Sent sent) {
  const size_t row = begin_transfer(src, dst, size);
  ctx_.net.start_flow(src, dst, size, [this, row, sent = std::move(sent)](const FlowRecord& f) {
    end_transfer(f, row);
    if (sent) sent(f);
  });
}

void Cluster::deliver(NodeId dst, Pending p) {
  if (nodes_[dst].computing) nodes_[dst].inbox.push_back(std::move(p));
  else merge(dst, p);
}

void Cluster::merge(NodeId dst, const Pending& p) {
  Node& d = nodes_[dst];
  if (gosgd_) {
    ctx_.learner.merge(dst, p.model, d.weight, p.weight);
    d.weight += p.weight;
  } else {
    ctx_.learner.merge(dst, p.model, 1, 1);
  }
  ++merges_;
  TransferRow& row = ctx_.recorder.transfers[p.row];
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
    rows.push_back(r);
  }
}

}  // namespace gossipsim
