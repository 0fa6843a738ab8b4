#include "sim/network.h"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>

namespace gossipsim {

namespace {
uint64_t key(size_t u, size_t v) { return (static_cast<uint64_t>(u) << 32) | v; }
// BBR's startup pacing: its gain 2 / ln 2, less Linux's 1% margin
// (bbr_pacing_margin_percent).
constexpr double kBbrStartupPacing = 2.8853900817779268 * 0.99;
}  // namespace

Network::Network(Simulator& sim, const Topology& topology, const FlowModel& model)
    : sim_(sim),
      topology_(topology),
      model_(model),
      capacity_factor_(model.tcp          ? model.bandwidth_factor
                       : model.slow_start ? model.payload_factor
                                          : 1.0),
      routes_(topology.node_count()),
      peers_routed_(topology.node_count(), 0) {
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
    link_latency_.push_back(g[*it].latency.ns());
    double c = g[*it].capacity.bytes_per_second();
    resources_[2 * topology.node_count() + 2 * e].capacity = c;
    resources_[2 * topology.node_count() + 2 * e + 1].capacity = c;
  }
}

Network::~Network() { sim_.cancel(next_event_); }

// Shortest-path trees: searches from a node's peers are stopped once they
// are all settled; whole trees are kept for the few other sources used last.
// The routes themselves are kept for the pairs that are used, not all pairs.
namespace {
// Notes the vertices a search reaches, and ends it once every vertex it
// waits for is settled.
struct SearchDone {};
struct Visitor : boost::default_dijkstra_visitor {
  std::vector<char>* wanted;
  std::vector<Vertex>* reached;
  size_t* left;
  template <typename G>
  void discover_vertex(Vertex v, const G&) {
    reached->push_back(v);
  }
  template <typename G>
  void examine_vertex(Vertex v, const G&) {
    if ((*wanted)[v] && (*wanted)[v]-- && --*left == 0) throw SearchDone{};
  }
};
}  // namespace

// A search from `src`, its tree left in search_.pred. With `targets` it
// stops once they are all settled, and only their branches are valid.
void Network::search(NodeId src, const std::vector<NodeId>* targets) {
  const Graph& g = topology_.graph;
  const size_t nv = boost::num_vertices(g);
  constexpr int64_t kFar = std::numeric_limits<int64_t>::max();
  Search& s = search_;
  if (s.dist.size() != nv) {
    s.dist.assign(nv, kFar);
    s.pred.resize(nv);
    std::iota(s.pred.begin(), s.pred.end(), Vertex{0});
    s.color.assign(nv, boost::white_color);
    s.wanted.assign(nv, 0);
  }
  for (Vertex v : s.reached) {
    s.dist[v] = kFar;
    s.pred[v] = v;
    s.color[v] = boost::white_color;
  }
  s.reached.clear();
  // Weight latency*(V+1)+1: shortest latency first, then fewest hops.
  auto weight_of = [&](Graph::edge_descriptor d) { return g[d].latency.ns() * static_cast<int64_t>(nv + 1) + 1; };
  size_t left = 0;
  if (targets)
    for (NodeId t : *targets)
      if (!s.wanted[topology_.nodes[t]]) s.wanted[topology_.nodes[t]] = 1, ++left;
  Visitor visitor;
  visitor.wanted = &s.wanted;
  visitor.reached = &s.reached;
  visitor.left = &left;
  const Vertex from = topology_.nodes[src];
  s.dist[from] = 0;
  try {
    boost::dijkstra_shortest_paths_no_init(
        g, from, s.pred.data(), s.dist.data(),
        boost::make_function_property_map<Graph::edge_descriptor, int64_t>(weight_of),
        boost::get(boost::vertex_index, g), std::less<int64_t>(), std::plus<int64_t>(), int64_t{0}, visitor,
        s.color.data());
  } catch (const SearchDone&) {
  }
  if (targets)
    for (NodeId t : *targets) s.wanted[topology_.nodes[t]] = 0;  // unreached ones too
}

const Route& Network::route(NodeId src, NodeId dst) {
  auto& row = routes_[src];
  if (auto it = row.find(dst); it != row.end()) return it->second;
  // The pairs a method uses are mostly a node's peers: one search, stopped
  // once they are all reached, gives all their routes.
  const bool has_peers = src < static_cast<NodeId>(topology_.peers.size());
  if (has_peers && !peers_routed_[src]) {
    const auto& peers = topology_.peers[src];
    if (std::find(peers.begin(), peers.end(), dst) != peers.end()) {
      peers_routed_[src] = 1;
      search(src, &peers);
      for (NodeId p : peers) build_route(src, p, search_.pred);
      return row.at(dst);
    }
  }
  auto tree = trees_.find(src);
  if (tree == trees_.end()) {
    if (trees_.size() >= 64) trees_.clear();
    search(src, nullptr);
    tree = trees_.emplace(src, search_.pred).first;
  }
  return build_route(src, dst, tree->second);
}

const Route& Network::build_route(NodeId src, NodeId dst, const std::vector<Vertex>& pred) {
  auto& row = routes_[src];
  if (auto it = row.find(dst); it != row.end()) return it->second;
  Vertex v = topology_.nodes[dst];
  if (dst != src && pred[v] == v) throw std::runtime_error("no route between two nodes: the graph is not connected");
  Route r;
  std::vector<int> path;
  int64_t latency = 0;
  double bottleneck = std::min(resources_[uplink(src)].capacity, resources_[downlink(dst)].capacity);
  while (v != topology_.nodes[src]) {
    Vertex u = pred[v];
    size_t edge = edge_index_.at(key(u, v));
    int res = 2 * topology_.node_count() + 2 * static_cast<int>(edge) + (u < v ? 0 : 1);
    path.push_back(res);
    bottleneck = std::min(bottleneck, resources_[res].capacity);
    latency += link_latency_[edge];
    v = u;
  }
  r.resources.push_back(uplink(src));
  r.resources.insert(r.resources.end(), path.rbegin(), path.rend());
  r.resources.push_back(downlink(dst));
  r.latency = Time::ns(latency);
  r.bottleneck = Rate::bytes_per_second(bottleneck);
  return row.emplace(dst, std::move(r)).first->second;
}

std::vector<Network::Hop> Network::hops(NodeId src, NodeId dst) {
  std::vector<Hop> out;
  const int links_from = 2 * topology_.node_count();
  for (int r : route(src, dst).resources) {
    const Time latency = r < links_from ? Time::zero() : Time::ns(link_latency_[(r - links_from) / 2]);
    out.push_back({r, resources_[r].capacity, latency});
  }
  return out;
}

Time Network::nominal_time(NodeId src, NodeId dst, Bytes size) {
  const Route& r = route(src, dst);
  if (model_.slow_start)
    return latency_phase(r) + Time::ns(std::llround(alone_drain_seconds(r, static_cast<double>(size.count)) * 1e9));
  return latency_phase(r) + transfer_time(size, Rate::bytes_per_second(alone_rate(r)));
}

double Network::alone_seconds(NodeId src, NodeId dst, int64_t size) {
  const Route& r = route(src, dst);
  return latency_phase(r).seconds() + (size > 0 ? alone_drain_seconds(r, static_cast<double>(size)) : 0.0);
}

// How long `bytes` drain alone on the route once the latency phase is over:
// at the alone rate, and under slowstart in rounds of one round trip whose
// windows double until one fills the pipe.
double Network::alone_drain_seconds(const Route& r, double bytes) const {
  const double rate = alone_rate(r);
  const double rtt = 2 * r.latency.seconds();
  if (!model_.slow_start || model_.connections == FlowModel::Connections::kWarm || rtt <= 0) return bytes / rate;
  double t = 0, window = model_.initial_window_bytes;
  if (model_.paced() && rate > 0) {  // end_startup_round's rounds, alone: the first a burst, then paced
    double pace = 0, bandwidth = 0, spread = 0;
    for (;;) {
      const double speed = pace > 0 ? std::min(rate, pace) : rate, sent = std::min(window, speed * rtt);
      if (bytes <= sent) return t + bytes / speed;
      if (sent < window && speed == rate) break;  // its share held it: the pipe is full, on at the rate
      bytes -= sent;
      t += rtt;
      const double spread_now = sent < window ? rtt : sent / speed;
      bandwidth = std::max(bandwidth, sent / (rtt + std::max(0.0, spread_now - spread)));
      spread = spread_now;
      pace = std::max(pace, kBbrStartupPacing * bandwidth);
      window = std::min(window + sent, model_.max_window_bytes);
      if (window >= model_.max_window_bytes) break;
    }
    return t + bytes / rate;
  }
  while (bytes > window && window < rate * rtt && window < model_.max_window_bytes) {
    bytes -= window;
    t += rtt;
    window = std::min(2 * window, model_.max_window_bytes);
  }
  return t + bytes / rate;
}

// The rate of a flow alone on its route: its bottleneck (tcp: the usable
// share of it, and at most the window over the round trip).
double Network::alone_rate(const Route& r) const {
  const double rate = r.bottleneck.bytes_per_second() * capacity_factor_, bound = window_bound(r);
  return bound > 0 ? std::min(rate, bound) : rate;
}

// tcp and slowstart: the largest window over the round trip (bytes per
// second); 0: no bound. tcp scales it by bandwidth_factor, as SimGrid's LV08
// does (its rate bound is bandwidth_factor x gamma / RTT), so a flow's window
// counts its payload the way its capacity does.
double Network::window_bound(const Route& r) const {
  if (r.latency <= Time::zero()) return 0;
  if (model_.tcp) return model_.bandwidth_factor * model_.window_bytes / (2 * r.latency.seconds());
  if (model_.slow_start) return model_.max_window_bytes / (2 * r.latency.seconds());
  return 0;
}

Time Network::latency_phase(const Route& r) const {
  if (model_.slow_start)  // the first byte's way; a fresh connection's handshake first
    return model_.connections == FlowModel::Connections::kFresh ? r.latency * 3 : r.latency;
  if (!model_.tcp) return r.latency;
  return Time::ns(std::llround(static_cast<double>(r.latency.ns()) * model_.latency_factor));
}

// LV08: the share of a saturated resource goes by 1 / penalty, the penalty
// being the route's latency plus weight_S / capacity for each of its
// resources (SimGrid's CM02/LV08 sharing); the rate never exceeds the
// window over the round-trip time.
void Network::weigh(Flow& f) const {
  if (model_.slow_start) {
    f.bound = window_bound(*f.route);
    f.slow_start = model_.connections != FlowModel::Connections::kWarm && f.route->latency > Time::zero();
    f.window = f.window_left = model_.initial_window_bytes;
    return;
  }
  if (!model_.tcp) return;
  const double latency = f.route->latency.seconds();
  double penalty = latency;
  for (int r : f.route->resources)
    if (resources_[r].capacity > 0) penalty += model_.weight_s_bytes / resources_[r].capacity;
  f.weight = penalty > 0 ? 1 / penalty : 1e9;
  f.bound = window_bound(*f.route);
}

FlowId Network::start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done, bool background) {
  if (src == dst) throw std::invalid_argument("a flow needs two different nodes");
  const Route& r = route(src, dst);
  if (r.resources.size() > 255) throw std::runtime_error("a route of more than 253 links");
  uint32_t slot;
  if (free_flows_.empty()) {
    slot = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    cold_.emplace_back();
  } else {
    slot = free_flows_.back();
    free_flows_.pop_back();
    uint32_t version = flows_[slot].version;
    flows_[slot] = Flow{};
    flows_[slot].version = version + 1;
  }
  Flow& f = flows_[slot];
  f.route = &r;
  f.length = static_cast<uint8_t>(std::min<size_t>(r.resources.size(), 255));
  if (f.length <= Flow::kInline) std::copy(r.resources.begin(), r.resources.end(), f.inline_resources);
  f.remaining = static_cast<double>(size.count);
  FlowCold& c = cold_[slot];
  c.record = FlowRecord{next_id_++, src, dst, size, sim_.now(), sim_.now(), sim_.now(), background, false, {}};
  c.on_done = std::move(on_done);
  c.startup = {};
  const FlowId id = c.record.id;
  live_ids_.emplace(id, slot);
  ++live_;
  Time latency = latency_phase(r);
  if (model_.queues()) {  // the handshake's and the first byte's way wait behind the queues there
    const int n = static_cast<int>(r.resources.size());
    const int64_t now = sim_.now().ns();
    double delay = queue_delay_s(r.resources.data(), n, false, now);  // the first byte's
    if (model_.connections == FlowModel::Connections::kFresh)         // SYN and SYN-ACK
      delay += queue_delay_s(r.resources.data(), n, false, now) + queue_delay_s(r.resources.data(), n, true, now);
    latency += Time::ns(std::llround(delay * 1e9));
  }
  if (latency == Time::zero())
    activate(slot);
  else
    sim_.schedule(latency, [this, slot, id] {
      if (cold_[slot].record.id == id && !cold_[slot].record.lost) activate(slot);  // else cut meanwhile
    });
  return id;
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
  return Rate::bytes_per_second(slot == UINT32_MAX ? 0.0 : flows_[slot].rate);
}

void Network::activate(uint32_t slot) {
  Flow& f = flows_[slot];
  f.draining = true;
  f.updated = sim_.now().ns();
  cold_[slot].record.drain_start = sim_.now();
  weigh(f);
  for (int r : f.route->resources) resources_[r].flows.push_back(slot);
  count_bottleneck(slot, bottleneck_kbps(f));
  if (f.slow_start) start_round(slot, cold_[slot].record.id);
  resolve(f.route->resources);
}

// slowstart: a round begins now and ends a round trip later (with queues,
// the round trip through them as they are now).
void Network::start_round(uint32_t slot, FlowId id) {
  Flow& f = flows_[slot];
  const int64_t now = sim_.now().ns();
  Time rtt = f.route->latency * 2;
  if (model_.queues()) rtt = round_trip(f, now, slot);
  if (model_.paced()) {  // the first round leaves in a burst, as Linux's does; later ones at the pace
    FlowCold::Startup& p = cold_[slot].startup;
    p.round_start = now;
    p.round_s = rtt.seconds();
    p.sent_at = -1;
    f.bound = p.pace > 0 ? std::min(window_bound(*f.route), p.pace) : window_bound(*f.route);
  }
  sim_.schedule(rtt, [this, slot, id] { end_round(slot, id); });
}

// `back`: the ACKs' way, each resource's other direction (resources come
// in pairs: uplink and downlink of a node, a link's two directions).
double Network::queue_delay_s(const int* route, int length, bool back, int64_t now, uint32_t own) const {
  double delay = 0;
  for (int k = 0; k < length; ++k) {
    const int r = back ? route[k] ^ 1 : route[k];
    if (resources_[r].capacity > 0) delay += queue_bytes(r, now, own) / resources_[r].capacity;
  }
  return delay;
}

Time Network::round_trip(const Flow& f, int64_t now, uint32_t own) const {
  const double queued =
      queue_delay_s(f.resources(), f.length, false, now, own) + queue_delay_s(f.resources(), f.length, true, now, own);
  return f.route->latency * 2 + Time::ns(std::llround(queued * 1e9));
}

// queues: the queue a resource holds now, wire bytes (sim/flow_model.h):
// for each flow whose rate it fixes, what that flow has in flight beyond
// what the pipe holds (its rate x its route's round trip), and for a flow
// still sending in rounds at least what of its round's window it has yet
// to send (it went out faster than the resource drains it and waits here),
// except for the flow `own` itself (the first packet of its round is not
// behind the rest); at most the drop-tail queue.
double Network::queue_bytes(int r, int64_t now, uint32_t own) const {
  const Resource& res = resources_[r];
  if (res.fixing == 0) return 0;  // no flow's rate is fixed here (a loose link, say): nothing waits
  const bool bbr = model_.congestion == FlowModel::Congestion::kBbr;
  double queue = 0;
  for (uint32_t s : res.flows) {
    const Flow& f = flows_[s];
    if (f.at != r || f.rate <= 0) continue;
    const double sent = f.rate * static_cast<double>(now - f.updated) * 1e-9;
    const double left = std::max(0.0, f.remaining - sent);
    const double pipe = f.rate * 2 * f.route->latency.seconds();
    // BBR past startup keeps twice its estimate of the pipe in flight.
    const double window = bbr && !f.slow_start ? 2 * pipe : f.window;
    double q = std::max(0.0, std::min(window, left) - pipe);
    if (s != own && f.slow_start) q = std::max(q, std::min(left, round_waiting(f, sent)));
    queue += q;
  }
  return std::min(queue / capacity_factor_, model_.queue_packets * model_.packet_bytes);
}

// queues: what of a flow's round has left its host but not yet passed the
// resource that fixes its rate, `sent` bytes after `updated`. With
// round_sending burst, all of every window left at the round's start. With
// acked, a connection's first window leaves at once and later ones as the
// last round's ACKs come back, at `gain` times the rate they pass: in slow
// start 2 (a segment more for each one ACKed: cubic, reno) or BBR's
// startup pacing gain 2 / ln 2; past slow start 1 (the round's excess over
// its pipe is then the standing queue, counted apart). With `passed` of
// the window W through, gain g has sent min(W, g x passed): min(W - passed,
// (g - 1) x passed) of it waits. With paced, the first window leaves at
// once and later ones at the flow's pacing bound: bound / rate x passed has
// left, so min(W - passed, (bound / rate - 1) x passed) waits (nothing
// while the bound is the rate).
double Network::round_waiting(const Flow& f, double sent) const {
  const double to_pass = std::max(0.0, f.window_left - sent);
  const bool first = !f.avoiding && f.window <= model_.initial_window_bytes;
  if (first || model_.round_sending == FlowModel::RoundSending::kBurst) return to_pass;
  if (model_.paced()) return std::min(to_pass, std::max(0.0, f.bound / f.rate - 1) * (f.window - to_pass));
  if (f.avoiding) return 0;
  const double gain = model_.congestion == FlowModel::Congestion::kBbr ? 2 / std::log(2.0) : 2;
  return std::min(to_pass, (gain - 1) * (f.window - to_pass));
}

// Notes the resource that fixed flow s's rate (-1: none), keeping each
// resource's count of the flows it fixes.
void Network::place(uint32_t s, int r) {
  Flow& f = flows_[s];
  if (f.at == r) return;
  if (f.at >= 0) --resources_[f.at].fixing;
  if (r >= 0) ++resources_[r].fixing;
  f.at = r;
}

// slowstart: the window of the round is sent; the flow waits, at rate 0,
// for the round's end.
void Network::pause(uint32_t slot) {
  Flow& f = flows_[slot];
  f.paused = true;
  f.finish = -1;
  ++f.version;
  if (model_.paced()) cold_[slot].startup.sent_at = sim_.now().ns();
}

// slowstart: a round trip of a flow in slow start ends. If its window was
// sent, the next round's is twice as large (a flow that reaches the largest
// window leaves slow start); if not, it was sending at its share all round:
// the pipe is full and it leaves slow start.
void Network::end_round(uint32_t slot, FlowId id) {
  if (cold_[slot].record.id != id || cold_[slot].record.lost || !flows_[slot].draining) return;
  Flow& f = flows_[slot];
  const int64_t now = sim_.now().ns();
  const double sent = f.rate * static_cast<double>(now - f.updated) * 1e-9;
  f.remaining = std::max(0.0, f.remaining - sent);
  f.window_left = std::max(0.0, f.window_left - sent);
  f.updated = now;
  if (model_.queues()) {
    end_round_queued(slot, id, now);
    return;
  }
  if (!f.paused) {
    f.slow_start = false;  // share-limited for a whole round trip
    if (f.rate > 0) set_finish(slot, now + std::llround(f.remaining * 1e9 / f.rate));
    reschedule();
    return;
  }
  f.paused = false;
  next_window(slot, id);
  f.rate = -1;  // forces fix() to give it a finish time again
  std::vector<int> seeds(f.resources(), f.resources() + f.length);
  resolve(seeds);
}

// slowstart: the next round's window is twice this one's; a flow that
// reaches the largest window leaves slow start, any other starts its round.
void Network::next_window(uint32_t slot, FlowId id) {
  Flow& f = flows_[slot];
  f.window = std::min(2 * f.window, model_.max_window_bytes);
  f.window_left = f.window;
  if (f.window >= model_.max_window_bytes)
    f.slow_start = false;
  else
    start_round(slot, id);
}

// slowstart with queues: the end of a round (sim/flow_model.h). bbr leaves
// startup once the pipe is full for a whole round (or at the largest
// window). cubic and reno go on in rounds: a queue on the route full at the
// round's end is a loss (cut to beta, then growth by segments);
// otherwise it doubles in slow start, whether the last one was all sent or
// not (what the pipe did not take waits in the queue).
void Network::end_round_queued(uint32_t slot, FlowId id, int64_t now) {
  Flow& f = flows_[slot];
  const auto cc = model_.congestion;
  const bool loss_based = cc == FlowModel::Congestion::kCubic || cc == FlowModel::Congestion::kReno;
  const double full = model_.queue_packets * model_.packet_bytes;
  const double segment = model_.packet_bytes * capacity_factor_;
  if (model_.paced()) {
    end_startup_round(slot, id);
    return;
  }
  if (!loss_based) {  // bbr: startup ends once the pipe is full for a whole round
    if (!f.paused)
      f.slow_start = false;
    else
      next_window(slot, id);
  } else {
    // A loss: a queue on its route is full (what the flow holds beyond its
    // pipe there included: the pipe and the queue together overflowed).
    bool loss = false;
    const int* route = f.resources();
    for (int k = 0; k < f.length && !loss; ++k) loss = queue_bytes(route[k], now, slot) >= full * (1 - 1e-9);
    const double beta = cc == FlowModel::Congestion::kCubic ? 0.7 : 0.5;
    if (loss)
      f.window = std::max(segment, beta * f.window);
    else if (f.avoiding)  // cubic: its TCP-friendly growth, 3 (1 - beta) / (1 + beta) segments a round trip
      f.window += cc == FlowModel::Congestion::kCubic ? 3 * (1 - beta) / (1 + beta) * segment : segment;
    else
      f.window *= 2;
    f.avoiding = f.avoiding || loss;
    f.window = std::min(f.window, model_.max_window_bytes);
    f.window_left = f.window;
    start_round(slot, id);
  }
  if (!f.paused) {  // it sent at its share all round and goes on at it: no rate moves, only its next stop
    const double until = f.slow_start ? std::min(f.remaining, f.window_left) : f.remaining;
    const double left_ns = f.rate > 0 ? until * 1e9 / f.rate : 0;
    if (f.rate > 0 && left_ns <= kMaxVirtualSeconds * 1e9) {
      set_finish(slot, now + std::llround(left_ns));
    } else {
      f.finish = -1;
      ++f.version;
    }
    reschedule();
    return;
  }
  f.paused = false;
  f.rate = -1;  // forces fix() to give it a finish time again
  std::vector<int> seeds(f.resources(), f.resources() + f.length);
  resolve(seeds);
}

// slowstart, paced (bbr): the end of a startup round, as Linux's BBR paces
// (sim/flow_model.h). Its bandwidth estimate takes the round's delivery
// rate: what it sent over the round trip, stretched by how much longer
// this round was sending than the last (Linux's rate samples span the
// send times since the last delivery); its pacing rate is the gain x that
// estimate, never lowered in startup. A round its share held short of its
// window ends startup (the pipe is full); otherwise the next round may send
// the window again plus what this one sent (its window grows by what is
// ACKed: doubling when all of it went).
void Network::end_startup_round(uint32_t slot, FlowId id) {
  Flow& f = flows_[slot];
  FlowCold::Startup& p = cold_[slot].startup;
  const double sent = f.window - f.window_left;
  const double spread = f.paused ? static_cast<double>(p.sent_at - p.round_start) * 1e-9 : p.round_s;
  p.bandwidth = std::max(p.bandwidth, sent / (p.round_s + std::max(0.0, spread - p.spread_s)));
  p.spread_s = spread;
  p.pace = std::max(p.pace, kBbrStartupPacing * p.bandwidth);
  if (!f.paused && f.at >= 0) {  // its share held it all round: startup ends
    f.slow_start = false;
    f.bound = window_bound(*f.route);
  } else {
    f.window = std::min(f.window + sent, model_.max_window_bytes);
    f.window_left = f.window;
    if (f.window >= model_.max_window_bytes) {
      f.slow_start = false;
      f.bound = window_bound(*f.route);
    } else {
      start_round(slot, id);
    }
  }
  f.paused = false;
  f.rate = -1;  // forces fix() to give it a finish time again
  std::vector<int> seeds(f.resources(), f.resources() + f.length);
  resolve(seeds);
}

// What the flow could take alone, as the looseness test counts it: its
// route's smallest capacity in kB/s, rounded up so that the sums over-count.
int64_t Network::bottleneck_kbps(const Flow& f) const {
  double least = f.route->bottleneck.bytes_per_second();  // as built
  if (capacities_changed_) {
    least = std::numeric_limits<double>::infinity();
    const int* route = f.resources();
    for (int k = 0; k < f.length; ++k) least = std::min(least, resources_[route[k]].capacity);
  }
  return static_cast<int64_t>(std::ceil(least / 1000));
}

void Network::count_bottleneck(uint32_t slot, int64_t kbps) {
  Flow& f = flows_[slot];
  int64_t& counted = f.bottleneck_kbps;
  if (kbps == counted) return;
  const int* route = f.resources();
  for (int k = 0; k < f.length; ++k) {
    Resource& res = resources_[route[k]];
    const bool was_loose = loose(res);
    res.bottlenecks_kbps += kbps - counted;
    if (!was_loose && loose(res) && !res.split) {  // its group may fall apart: re-solve every part
      res.split = true;
      split_.push_back(route[k]);
    }
  }
  counted = kbps;
}

bool Network::is_current(const Finish& e) const {
  const Flow& f = flows_[e.slot];
  return f.draining && f.version == e.version && f.finish == e.time;
}

void Network::set_finish(uint32_t slot, int64_t finish) {
  Flow& f = flows_[slot];
  f.finish = finish;
  ++f.version;
  finishing_.push_back(Finish{finish, slot, f.version});
  std::push_heap(finishing_.begin(), finishing_.end(), std::greater<Finish>{});
  // Stale entries are skipped when they reach the top; rebuild before they dominate.
  if (finishing_.size() > 4 * live_ + 64) {
    finishing_.erase(
        std::remove_if(finishing_.begin(), finishing_.end(), [this](const Finish& e) { return !is_current(e); }),
        finishing_.end());
    std::make_heap(finishing_.begin(), finishing_.end(), std::greater<Finish>{});
  }
}

// Re-solves max-min rates for the group of draining flows connected to the
// seed resources through resources that are not loose, and through those
// that have just become loose (their group may have fallen apart: every
// part is re-solved). Every flow crosses at least one resource that is not
// loose, its smallest, so a new flow is always reached. Only flows whose
// rate changes get a new finish time.
//
// Why a loose resource r changes nothing: a resource the filling fixes flows
// at is saturated, the rates of its flows summing to its capacity; each of
// them is at most its route's bottleneck, whose sum over r's flows is below
// r's capacity by the margin (1e-6, far above rounding): r is never fixed
// at, and its scratch values are read by nothing else. Leaving it out of the
// heap changes no other entry's order, and flows joined only through loose
// resources never exchange a value.
void Network::resolve(const std::vector<int>& seeds, bool whole) {
  ++changes_;
  if (++stamp_ == 0) {  // wrapped: forget every old mark
    for (auto& r : resources_) r.stamp = 0;
    for (auto& f : flows_) f.stamp = 0;
    stamp_ = 1;
  }
  gather_group(seeds, whole);
  for (int r : split_) resources_[r].split = false;
  split_.clear();
  flows_resolved_ += scratch_flows_.size();
  fill(sim_.now().ns());
  reschedule();
}

// The group of the seeds: breadth-first over resource -> flows -> resources,
// marking with the current stamp; its flows into scratch_flows_ (unfixed),
// its resources into scratch_resources_.
void Network::gather_group(const std::vector<int>& seeds, bool whole) {
  const uint32_t stamp = stamp_;
  auto& group = scratch_flows_;
  auto& touched = scratch_resources_;
  group.clear();
  touched.clear();
  for (int r : seeds)
    if (resources_[r].stamp != stamp) {
      resources_[r].stamp = stamp;
      touched.push_back(r);
    }
  const bool follow_all = whole || !skip_loose_;
  for (size_t i = 0; i < touched.size(); ++i) {
    const Resource& from = resources_[touched[i]];
    if (!follow_all && !from.split && loose(from)) continue;
    for (uint32_t s : from.flows) {
      Flow& f = flows_[s];
      if (f.stamp == stamp) continue;
      f.stamp = stamp;
      f.fixed = false;
      group.push_back(s);
      const int* route = f.resources();
      for (int k = 0; k < f.length; ++k)
        if (int r = route[k]; resources_[r].stamp != stamp) {
          resources_[r].stamp = stamp;
          touched.push_back(r);
        }
    }
  }
}

// Progressive filling of the gathered group: saturate the resource with the
// smallest fair level (remaining capacity over the weight of its unfixed
// flows; under max-min every weight is 1 and the level is the fair share),
// fixing its flows at weight x level; repeat. Under tcp a flow's window
// bound enters the same heap at bound / weight and fixes that flow alone
// when it comes first. Fixing flows at the smallest level never lowers
// another resource's level, so a heap entry can only be below its
// resource's true level: on pop, a stale entry goes back in at the true
// value instead of being pushed at every change. Entries below 0 are flows
// (-(slot + 1)).
void Network::fill(int64_t now) {
  using Share = std::pair<double, int>;
  auto& heap = scratch_heap_;
  heap.clear();
  for (int r : scratch_resources_) {
    Resource& res = resources_[r];
    res.remaining = res.capacity * capacity_factor_;
    res.unfixed = static_cast<int>(res.flows.size());
    res.weight = res.unfixed;
    const bool skip = skip_loose_ && loose(res);
    if (model_.tcp && !skip) {
      res.weight = 0;
      for (uint32_t s : res.flows) res.weight += flows_[s].weight;
    }
    if (res.unfixed > 0 && !skip) heap.emplace_back(res.remaining / res.weight, r);
  }
  if (model_.tcp || model_.slow_start)
    for (uint32_t s : scratch_flows_) {
      const Flow& f = flows_[s];
      if (f.paused)
        heap.emplace_back(0.0, -static_cast<int>(s) - 1);
      else if (f.bound > 0)
        heap.emplace_back(f.bound / f.weight, -static_cast<int>(s) - 1);
    }
  std::make_heap(heap.begin(), heap.end(), std::greater<Share>{});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<Share>{});
    auto [key, r] = heap.back();
    heap.pop_back();
    if (r < 0) {
      const uint32_t s = static_cast<uint32_t>(-(r + 1));
      if (!flows_[s].fixed) {
        fix(s, flows_[s].paused ? 0.0 : flows_[s].bound, now);
        place(s, -1);
      }
      continue;
    }
    Resource& res = resources_[r];
    if (res.unfixed == 0) continue;
    const double level = res.remaining / res.weight;
    if (level != key) {
      heap.emplace_back(level, r);
      std::push_heap(heap.begin(), heap.end(), std::greater<Share>{});
      continue;
    }
    if (!skip_loose_ && loose(res)) ++loose_saturations_;  // the check of set_skip_loose(false)
    for (uint32_t s : res.flows)
      if (!flows_[s].fixed) {
        fix(s, flows_[s].weight * level, now);
        place(s, r);
      }
  }
}

// Fixes flow s at `rate` from `now`: a flow whose rate changes first drains
// at its old rate up to now, then gets its new finish time; its resources
// give up the rate.
void Network::fix(uint32_t s, double rate, int64_t now) {
  Flow& f = flows_[s];
  f.fixed = true;
  if (rate != f.rate) {
    const double sent = std::max(0.0, f.rate) * static_cast<double>(now - f.updated) * 1e-9;
    f.remaining = std::max(0.0, f.remaining - sent);
    if (f.slow_start) f.window_left = std::max(0.0, f.window_left - sent);
    f.updated = now;
    f.rate = rate;
    // In slow start the flow stops once its round's window is sent (a pause, not an end).
    const double until = f.slow_start && !f.paused ? std::min(f.remaining, f.window_left) : f.remaining;
    const double left_ns = rate > 0 ? until * 1e9 / rate : 0;
    if (rate > 0 && left_ns <= kMaxVirtualSeconds * 1e9) {
      set_finish(s, now + std::llround(left_ns));
    } else {  // stalled (a resource of capacity 0), or too slow to end in any run: no finish until its rate rises
      f.finish = -1;
      ++f.version;
    }
  }
  const int* route = f.resources();
  for (int k = 0; k < f.length; ++k) {
    Resource& other = resources_[route[k]];
    other.remaining = std::max(0.0, other.remaining - rate);
    other.weight -= f.weight;
    --other.unfixed;
  }
}

void Network::set_capacity(std::vector<int> resources, double bytes_per_second) {
  capacities_changed_ = true;
  for (int r : resources) resources_[r].capacity = bytes_per_second;
  for (int r : resources)
    for (uint32_t s : resources_[r].flows) count_bottleneck(s, bottleneck_kbps(flows_[s]));
  resolve(resources, true);
}

void Network::set_access_capacity(NodeId n, bool up, Rate capacity) {
  set_capacity({up ? uplink(n) : downlink(n)}, capacity.bytes_per_second());
}

size_t Network::edge(Vertex a, Vertex b) const {
  auto it = edge_index_.find(key(a, b));
  if (it == edge_index_.end()) throw std::invalid_argument("no link between these vertices");
  return it->second;
}

int Network::link_resource(Vertex a, Vertex b) const {
  return 2 * topology_.node_count() + 2 * static_cast<int>(edge(a, b));
}

void Network::set_link_capacity(Vertex a, Vertex b, Rate capacity) {
  const int first = link_resource(a, b);
  set_capacity({first, first + 1}, capacity.bytes_per_second());
}

Rate Network::link_capacity(Vertex a, Vertex b) const {
  return Rate::bytes_per_second(resources_[link_resource(a, b)].capacity);
}

Time Network::link_latency(Vertex a, Vertex b) const { return Time::ns(link_latency_[edge(a, b)]); }

void Network::set_link_latency(Vertex a, Vertex b, Time latency) {
  link_latency_[edge(a, b)] = latency.ns();
  const int links = 2 * topology_.node_count();
  const int first = link_resource(a, b);
  for (auto& row : routes_)
    for (auto& [dst, r] : row) {
      if (std::none_of(r.resources.begin(), r.resources.end(), [&](int k) { return k == first || k == first + 1; }))
        continue;
      int64_t sum = 0;
      for (int k : r.resources)
        if (k >= links) sum += link_latency_[(k - links) / 2];
      r.latency = Time::ns(sum);
    }
}

std::vector<std::pair<FlowRecord, Network::FlowDone>> Network::cancel_flows(
    const std::function<bool(const FlowRecord&)>& which) {
  std::vector<uint32_t> slots;
  for (auto [id, slot] : live_ids_)
    if (which(cold_[slot].record)) slots.push_back(slot);
  std::sort(slots.begin(), slots.end(),
            [&](uint32_t a, uint32_t b) { return cold_[a].record.id < cold_[b].record.id; });
  std::vector<std::pair<FlowRecord, FlowDone>> out;
  std::vector<int> seeds;
  for (uint32_t s : slots) {
    Flow& f = flows_[s];
    if (f.draining) {
      count_bottleneck(s, 0);
      place(s, -1);
      for (int r : f.route->resources) {
        auto& list = resources_[r].flows;
        list.erase(std::find(list.begin(), list.end(), s));
        seeds.push_back(r);
      }
    }
    f.draining = false;
    f.finish = -1;
    ++f.version;
    FlowCold& c = cold_[s];
    c.record.finish = sim_.now();
    c.record.lost = true;
    out.emplace_back(c.record, std::move(c.on_done));
    c.on_done = nullptr;
    live_ids_.erase(c.record.id);
    --live_;
    free_flows_.push_back(s);
  }
  if (!seeds.empty()) resolve(seeds);
  return out;
}

void Network::reschedule() {
  while (!finishing_.empty() && !is_current(finishing_.front())) {
    std::pop_heap(finishing_.begin(), finishing_.end(), std::greater<Finish>{});
    finishing_.pop_back();
  }
  int64_t next = finishing_.empty() ? -1 : finishing_.front().time;
  if (next == next_event_time_ && sim_.is_pending(next_event_)) return;
  sim_.cancel(next_event_);
  next_event_time_ = next;
  if (next >= 0) next_event_ = sim_.schedule_at(Time::ns(next), [this] { on_completion_event(); });
}

void Network::on_completion_event() {
  const int64_t now = sim_.now().ns();
  std::vector<uint32_t> done;
  std::vector<int> seeds;
  while (!finishing_.empty() && finishing_.front().time <= now) {
    Finish e = finishing_.front();
    std::pop_heap(finishing_.begin(), finishing_.end(), std::greater<Finish>{});
    finishing_.pop_back();
    if (!is_current(e)) continue;
    Flow& f = flows_[e.slot];
    if (f.slow_start && !f.paused) {
      const double sent = f.rate * static_cast<double>(now - f.updated) * 1e-9;
      if (f.remaining - sent > 0.5) {  // its window, not its bytes: a pause
        f.remaining -= sent;
        f.window_left = 0;
        f.updated = now;
        pause(e.slot);
        for (int r : f.route->resources) seeds.push_back(r);
        continue;
      }
    }
    f.finish = -1;
    f.draining = false;
    cold_[e.slot].record.finish = sim_.now();
    count_bottleneck(e.slot, 0);
    place(e.slot, -1);
    for (int r : f.route->resources) {
      auto& list = resources_[r].flows;
      list.erase(std::find(list.begin(), list.end(), e.slot));
      seeds.push_back(r);
    }
    done.push_back(e.slot);
  }
  next_event_time_ = -1;
  next_event_ = EventHandle();
  resolve(seeds);
  for (uint32_t s : done) {
    FlowRecord record = cold_[s].record;
    FlowDone callback = std::move(cold_[s].on_done);
    cold_[s].on_done = nullptr;
    live_ids_.erase(record.id);
    --live_;
    free_flows_.push_back(s);
    if (callback) callback(record);
  }
}

}  // namespace gossipsim
