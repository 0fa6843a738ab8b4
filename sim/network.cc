#include "sim/network.h"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <cassert>
#include <cmath>
#include <queue>
#include <stdexcept>

namespace gossipsim {

struct Network::Flow {
  FlowRecord record;
  const Route* route = nullptr;
  double remaining = 0;  // bytes
  double rate = 0;       // bytes per second
  int64_t updated = 0;   // ns at which `remaining` was last brought up to date
  int64_t finish = -1;   // ns, while draining
  bool draining = false;
  bool fixed = false;    // scratch for progressive filling
  uint64_t stamp = 0;
  FlowDone on_done;
};

namespace {
uint64_t key(size_t u, size_t v) { return (static_cast<uint64_t>(u) << 32) | v; }
}  // namespace

Network::Network(Simulator& sim, const Topology& topology)
    : sim_(sim), topology_(topology), routes_(topology.node_count()) {
  const Graph& g = topology.graph;
  resources_.resize(2 * topology.node_count() + 2 * boost::num_edges(g));
  for (NodeId n = 0; n < topology.node_count(); ++n) {
    resources_[uplink(n)].capacity = g[topology.nodes[n]].up.bytes_per_second();
    resources_[downlink(n)].capacity = g[topology.nodes[n]].down.bytes_per_second();
  }
  size_t e = 0;
  for (auto [it, end] = boost::edges(g); it != end; ++it, ++e) {
    size_t u = boost::source(*it, g), v = boost::target(*it, g);
    edge_index_.emplace(key(u, v), e);
    edge_index_.emplace(key(v, u), e);
    double c = g[*it].capacity.bytes_per_second();
    resources_[2 * topology.node_count() + 2 * e].capacity = c;
    resources_[2 * topology.node_count() + 2 * e + 1].capacity = c;
  }
}

Network::~Network() { sim_.cancel(next_event_); }

void Network::build_routes_from(NodeId src) {
  const Graph& g = topology_.graph;
  const size_t nv = boost::num_vertices(g);
  // Weight latency*(V+1)+1: shortest latency first, then fewest hops.
  std::vector<int64_t> weight(boost::num_edges(g));
  size_t e = 0;
  for (auto [it, end] = boost::edges(g); it != end; ++it, ++e)
    weight[e] = g[*it].latency.ns() * static_cast<int64_t>(nv + 1) + 1;
  auto weight_of = [&](Graph::edge_descriptor d) {
    return weight[edge_index_.at(key(boost::source(d, g), boost::target(d, g)))];
  };
  std::vector<Vertex> pred(nv);
  std::vector<int64_t> dist(nv);
  boost::dijkstra_shortest_paths(
      g, topology_.nodes[src],
      boost::predecessor_map(pred.data())
          .distance_map(dist.data())
          .weight_map(boost::make_function_property_map<Graph::edge_descriptor, int64_t>(weight_of)));
  auto& row = routes_[src];
  row.resize(topology_.node_count());
  for (NodeId dst = 0; dst < topology_.node_count(); ++dst) {
    Route& r = row[dst];
    r.resources.clear();
    Vertex v = topology_.nodes[dst];
    if (dst != src && pred[v] == v) continue;  // unreachable: empty route
    std::vector<int> path;
    int64_t latency = 0;
    double bottleneck = std::min(resources_[uplink(src)].capacity, resources_[downlink(dst)].capacity);
    while (v != topology_.nodes[src]) {
      Vertex u = pred[v];
      size_t edge = edge_index_.at(key(u, v));
      int res = 2 * topology_.node_count() + 2 * static_cast<int>(edge) + (u < v ? 0 : 1);
      path.push_back(res);
      bottleneck = std::min(bottleneck, resources_[res].capacity);
      latency += g[boost::edge(u, v, g).first].latency.ns();
      v = u;
    }
    r.resources.push_back(uplink(src));
    r.resources.insert(r.resources.end(), path.rbegin(), path.rend());
    r.resources.push_back(downlink(dst));
    r.latency = Time::ns(latency);
    r.bottleneck = Rate::bytes_per_second(bottleneck);
  }
}

const Route& Network::route(NodeId src, NodeId dst) {
  if (routes_[src].empty()) build_routes_from(src);
  const Route& r = routes_[src][dst];
  if (r.resources.empty()) throw std::runtime_error("no route between two nodes: the graph is not connected");
  return r;
}

Time Network::nominal_time(NodeId src, NodeId dst, Bytes size) {
  const Route& r = route(src, dst);
  return r.latency + transfer_time(size, r.bottleneck);
}

FlowId Network::start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done) {
  if (src == dst) throw std::invalid_argument("a flow needs two different nodes");
  const Route& r = route(src, dst);
  uint32_t slot;
  if (free_flows_.empty()) {
    slot = static_cast<uint32_t>(flows_.size());
    flows_.push_back(std::make_unique<Flow>());
  } else {
    slot = free_flows_.back();
    free_flows_.pop_back();
    *flows_[slot] = Flow{};
  }
  Flow& f = *flows_[slot];
  f.record = FlowRecord{next_id_++, src, dst, size, sim_.now(), sim_.now(), sim_.now()};
  f.route = &r;
  f.remaining = static_cast<double>(size.count);
  f.on_done = std::move(on_done);
  live_ids_.emplace(f.record.id, slot);
  ++live_;
  if (r.latency == Time::zero()) activate(slot);
  else sim_.schedule(r.latency, [this, slot] { activate(slot); });
  return f.record.id;
}

void Network::send_control(NodeId src, NodeId dst, Simulator::Action on_arrival) {
  sim_.schedule(src == dst ? Time::zero() : route(src, dst).latency, std::move(on_arrival));
}

uint32_t Network::slot_of(FlowId id) const {
  auto it = live_ids_.find(id);
  return it == live_ids_.end() ? UINT32_MAX : it->second;
}

Rate Network::rate(FlowId id) const {
  uint32_t slot = slot_of(id);
  return Rate::bytes_per_second(slot == UINT32_MAX ? 0.0 : flows_[slot]->rate);
}

void Network::activate(uint32_t slot) {
  Flow& f = *flows_[slot];
  f.draining = true;
  f.updated = sim_.now().ns();
  f.record.drain_start = sim_.now();
  for (int r : f.route->resources) resources_[r].flows.push_back(slot);
  resolve(f.route->resources);
}

// Re-solves max-min rates for the group of draining flows connected to the
// seed resources, then updates their finish times.
void Network::resolve(const std::vector<int>& seeds) {
  ++changes_;
  const uint64_t stamp = ++stamp_;
  const int64_t now = sim_.now().ns();
  auto& group = scratch_flows_;
  auto& touched = scratch_resources_;
  group.clear();
  touched.clear();
  for (int r : seeds)
    if (resources_[r].stamp != stamp) {
      resources_[r].stamp = stamp;
      touched.push_back(r);
    }
  // Breadth-first over resource -> flows -> resources.
  for (size_t i = 0; i < touched.size(); ++i) {
    for (uint32_t s : resources_[touched[i]].flows) {
      Flow& f = *flows_[s];
      if (f.stamp == stamp) continue;
      f.stamp = stamp;
      group.push_back(s);
      for (int r : f.route->resources)
        if (resources_[r].stamp != stamp) {
          resources_[r].stamp = stamp;
          touched.push_back(r);
        }
    }
  }
  flows_resolved_ += group.size();
  // Bring every flow's remaining bytes up to now at its old rate.
  for (uint32_t s : group) {
    Flow& f = *flows_[s];
    f.remaining = std::max(0.0, f.remaining - f.rate * static_cast<double>(now - f.updated) * 1e-9);
    f.updated = now;
    f.fixed = false;
  }
  // Progressive filling: repeatedly saturate the resource with the smallest
  // fair share, fixing the rates of the flows through it.
  using Share = std::pair<double, int>;
  std::priority_queue<Share, std::vector<Share>, std::greater<Share>> heap;
  for (int r : touched) {
    Resource& res = resources_[r];
    res.remaining = res.capacity;
    res.unfixed = static_cast<int>(res.flows.size());
    if (res.unfixed > 0) heap.emplace(res.remaining / res.unfixed, r);
  }
  while (!heap.empty()) {
    auto [share, r] = heap.top();
    heap.pop();
    Resource& res = resources_[r];
    if (res.unfixed == 0 || share != res.remaining / res.unfixed) continue;  // stale entry
    for (uint32_t s : res.flows) {
      Flow& f = *flows_[s];
      if (f.fixed) continue;
      f.fixed = true;
      f.rate = share;
      for (int q : f.route->resources) {
        Resource& other = resources_[q];
        other.remaining = std::max(0.0, other.remaining - share);
        --other.unfixed;
        if (q != r && other.unfixed > 0) heap.emplace(other.remaining / other.unfixed, q);
      }
    }
  }
  for (uint32_t s : group) {
    Flow& f = *flows_[s];
    int64_t finish = f.rate > 0 ? now + std::llround(f.remaining * 1e9 / f.rate) : INT64_MAX;
    if (finish != f.finish) {
      if (f.finish >= 0) finishing_.erase({f.finish, s});
      f.finish = finish;
      finishing_.emplace(finish, s);
    }
  }
  reschedule();
}

void Network::reschedule() {
  int64_t next = finishing_.empty() ? -1 : finishing_.begin()->first;
  if (next == next_event_time_ && sim_.is_pending(next_event_)) return;
  sim_.cancel(next_event_);
  next_event_time_ = next;
  if (next >= 0 && next != INT64_MAX)
    next_event_ = sim_.schedule_at(Time::ns(next), [this] { on_completion_event(); });
}

void Network::on_completion_event() {
  const int64_t now = sim_.now().ns();
  std::vector<uint32_t> done;
  std::vector<int> seeds;
  while (!finishing_.empty() && finishing_.begin()->first <= now) {
    uint32_t s = finishing_.begin()->second;
    finishing_.erase(finishing_.begin());
    Flow& f = *flows_[s];
    f.finish = -1;
    f.draining = false;
    f.record.finish = sim_.now();
    for (int r : f.route->resources) {
      auto& list = resources_[r].flows;
      list.erase(std::find(list.begin(), list.end(), s));
      seeds.push_back(r);
    }
    done.push_back(s);
  }
  next_event_time_ = -1;
  next_event_ = EventHandle();
  resolve(seeds);
  for (uint32_t s : done) {
    Flow& f = *flows_[s];
    FlowRecord record = f.record;
    FlowDone callback = std::move(f.on_done);
    live_ids_.erase(record.id);
    --live_;
    free_flows_.push_back(s);
    if (callback) callback(record);
  }
}

}  // namespace gossipsim
