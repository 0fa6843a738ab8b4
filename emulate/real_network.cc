#include "emulate/real_network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "base/error.h"

namespace gossipsim::emulate {

namespace {

// A wait that sees nothing for this long has lost a transfer: the run stops
// rather than hang.
constexpr int64_t kStuckNs = 600'000'000'000;

double percentile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  const size_t i =
      std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0 ? 1 : 0));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return static_cast<double>(v[i]);
}

}  // namespace

void check_real_run(const Scenario& sc) {
  auto refuse = [&](const std::string& path, const std::string& expected) {
    throw InputError(sc.file, path, expected);
  };
  if (!sc.churn.empty()) refuse("/churn", "expected no churn with run --real (the emulated WAN's nodes stay up)");
  if (!sc.network.profiles.empty())
    refuse("/network/profiles",
           "expected no profiles with run --real (the emulated WAN's capacities and latencies are fixed)");
  if (!sc.network.cross_traffic.empty())
    refuse("/network/cross_traffic", "expected no cross-traffic with run --real (not emulated yet)");
  if (!sc.compute.profiles.empty()) refuse("/compute/profiles", "expected no compute profiles with run --real");
  const RealRunOptions& o = sc.network.real;
  Simulator sim;
  Network net(sim, sc.topology);
  double fastest = 0;
  std::string which;
  for (NodeId a = 0; a < sc.topology.node_count(); ++a)
    for (NodeId b : sc.topology.peers[a]) {
      const double mbps = net.route(a, b).bottleneck.megabits_per_second();
      if (mbps > fastest) fastest = mbps, which = fmt::format("n{} to n{}", a, b);
    }
  if (fastest / o.dilation > kEmulatorMaxMbps)
    refuse("/network/real/dilation",
           fmt::format(
               "expected a dilation that brings every route to at most {:g} Mbit/s, where the emulator keeps time on "
               "this machine: the route {} has a bottleneck of {:g} Mbit/s, so at least {:g}",
               kEmulatorMaxMbps, which, fastest, std::ceil(fastest / kEmulatorMaxMbps)));
  if (o.congestion != "default") {
    std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
    std::string available, name;
    std::getline(in, available);
    std::istringstream names(available);
    bool found = false;
    while (names >> name) found = found || name == o.congestion;
    if (!found)
      refuse("/network/real/congestion",
             fmt::format("expected \"default\" or a congestion control this kernel has ({}); not {}", available,
                         o.congestion));
  }
  if (auto why = unavailable()) throw InputError("run --real", "", "expected a machine that can run it: " + *why);
  raise_open_file_limit();  // two sockets a transfer in flight, more than 1,024 on large topologies
}

std::function<std::unique_ptr<RealTimeNetwork>(Simulator&, const Scenario&)> real_network_for(const Scenario& sc) {
  RealNetworkOptions o;
  const RealRunOptions& r = sc.network.real;
  o.connections = r.connections;
  o.congestion = r.congestion == "default" ? "" : r.congestion;
  o.dilation = r.dilation;
  o.max_lag_ms = r.max_lag_ms;
  o.queue_packets = r.queue_packets;
  return [o](Simulator& sim, const Scenario& s) -> std::unique_ptr<RealTimeNetwork> {
    return std::make_unique<RealNetwork>(sim, s.topology, s.network.model, o);
  };
}

Topology dilated(const Topology& topology, double k) {
  Topology t = topology;
  for (auto e : boost::make_iterator_range(boost::edges(t.graph))) {
    EdgeInfo& info = t.graph[e];
    info.capacity = Rate::bytes_per_second(info.capacity.bytes_per_second() / k);
    info.latency = Time::ns(std::llround(static_cast<double>(info.latency.ns()) * k));
  }
  for (auto v : boost::make_iterator_range(boost::vertices(t.graph))) {
    VertexInfo& info = t.graph[v];
    info.up = Rate::bytes_per_second(info.up.bytes_per_second() / k);
    info.down = Rate::bytes_per_second(info.down.bytes_per_second() / k);
  }
  return t;
}

RealNetwork::RealNetwork(Simulator& sim, const Topology& topology, const FlowModel& model, RealNetworkOptions options)
    : sim_(sim),
      opt_(std::move(options)),
      model_(model_sim_, topology, model),
      dilated_(dilated(topology, opt_.dilation)) {
  EmulatorOptions eo;
  eo.queue_packets = opt_.queue_packets;
  // The forwarder's bound on late packets, 500 us, is one of virtual time:
  // under dilation k a packet may be k times as late in wall time.
  eo.late_us *= opt_.dilation;
  wan_ = std::make_unique<EmulatedWan>(dilated_, eo);
  tcp_ = configure_tcp(*wan_, opt_.connections, opt_.congestion);
  sockets_ = std::make_unique<Sockets>(
      *wan_, Sockets::Options{opt_.connections, opt_.congestion, 4 << 20},
      [this](int64_t id, int64_t at) { arrived(id, at); }, [this](int64_t id, int64_t at) { control_arrived(id, at); });
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (NodeId n = 0; n < topology.node_count(); ++n)
    for (NodeId p : topology.peers[n]) pairs.insert({n, p});
  sockets_->open_pairs(pairs);
}

RealNetwork::~RealNetwork() = default;

int64_t RealNetwork::wall_of(Time t) const {
  if (t == Time::max()) return std::numeric_limits<int64_t>::max();
  return t0_ + std::llround(static_cast<double>(t.ns()) * opt_.dilation);
}

Time RealNetwork::virtual_of(int64_t wall_ns) const {
  return Time::ns(std::llround(static_cast<double>(wall_ns - t0_) / opt_.dilation));
}

void RealNetwork::begin() {
  wan_->reset_lag();
  t0_ = now_ns();
}

FlowId RealNetwork::start_flow(NodeId src, NodeId dst, Bytes size, FlowDone on_done, bool background) {
  const FlowId id = next_id_++;
  Live& f = flows_[id];
  f.record.id = id;
  f.record.src = src;
  f.record.dst = dst;
  f.record.size = size;
  f.record.start = f.record.drain_start = sim_.now();
  f.record.background = background;
  f.on_done = std::move(on_done);
  sockets_->send(src, dst, static_cast<int64_t>(id), size.count);
  return id;
}

void RealNetwork::arrived(int64_t id, int64_t at_ns) {
  auto it = flows_.find(static_cast<FlowId>(id));
  if (it == flows_.end()) return;
  Live f = std::move(it->second);
  flows_.erase(it);
  f.record.finish = std::max(virtual_of(at_ns), sim_.now());
  sim_.schedule_at(f.record.finish, [f = std::move(f)] { f.on_done(f.record); });
  scheduled_ = true;
}

std::vector<std::pair<FlowRecord, Transport::FlowDone>> RealNetwork::cancel_flows(
    const std::function<bool(const FlowRecord&)>& which) {
  std::vector<std::pair<FlowRecord, FlowDone>> cut;
  for (auto it = flows_.begin(); it != flows_.end();) {
    if (!which(it->second.record)) {
      ++it;
      continue;
    }
    sockets_->cancel(static_cast<int64_t>(it->first));
    it->second.record.lost = true;
    it->second.record.finish = sim_.now();
    cut.emplace_back(std::move(it->second.record), std::move(it->second.on_done));
    it = flows_.erase(it);
  }
  return cut;
}

void RealNetwork::send_control(NodeId src, NodeId dst, Simulator::Action on_arrival) {
  const int64_t id = next_control_++;
  controls_[id] = std::move(on_arrival);
  sockets_->send_control(src, dst, id);
}

void RealNetwork::control_arrived(int64_t id, int64_t at_ns) {
  auto it = controls_.find(id);
  if (it == controls_.end()) return;
  sim_.schedule_at(std::max(virtual_of(at_ns), sim_.now()), std::move(it->second));
  controls_.erase(it);
  scheduled_ = true;
}

bool RealNetwork::wait_until(Time t) {
  scheduled_ = false;
  const int64_t due = wall_of(t);
  int64_t quiet_since = now_ns();
  for (;;) {
    const int64_t now = now_ns();
    if (now >= due) {
      lags_ns_.push_back(now - due);
      return false;
    }
    if (now - quiet_since > kStuckNs)
      throw std::runtime_error(fmt::format("run --real: nothing arrived for {} s with {} transfers in flight",
                                           kStuckNs / 1'000'000'000, flows_.size()));
    sockets_->poll(std::min<int64_t>(due - now, 100'000'000));
    if (scheduled_) return true;
  }
}

nlohmann::json RealNetwork::report() const {
  const LagStats w = wan_->lag();
  const double k = opt_.dilation;
  const double p50 = percentile(lags_ns_, 0.5), p99 = percentile(lags_ns_, 0.99);
  const double max = lags_ns_.empty() ? 0.0 : static_cast<double>(*std::max_element(lags_ns_.begin(), lags_ns_.end()));
  int64_t late = 0;
  for (int64_t l : lags_ns_) late += static_cast<double>(l) / k > opt_.max_lag_ms * 1e6 ? 1 : 0;
  std::vector<std::string> why;
  if (p99 / k > opt_.max_lag_ms * 1e6)
    why.push_back(fmt::format("events fired {:.3g} virtual ms late at the 99th percentile, above max_lag_ms {:g}",
                              p99 / k / 1e6, opt_.max_lag_ms));
  if (!w.valid)
    why.push_back(fmt::format("the emulator fell behind ({} of {} packet events more than {:g} virtual us late)",
                              w.late, w.events, EmulatorOptions{}.late_us));
  if (w.write_failures > 0) why.push_back(fmt::format("the emulator failed to deliver {} packets", w.write_failures));
  std::string because;
  for (const auto& s : why) because += (because.empty() ? "" : "; ") + s;
  return {
      {"deterministic", false},
      {"connections", name_of(opt_.connections, connections_names())},
      {"dilation", k},
      {"tcp",
       {{"congestion_control", tcp_.congestion},
        {"available", tcp_.available},
        {"slow_start_after_idle", tcp_.slow_start_after_idle},
        {"no_metrics_save", tcp_.no_metrics_save},
        {"initial_window_segments", tcp_.initial_window_segments},
        {"rmem", tcp_.rmem},
        {"wmem", tcp_.wmem},
        {"kernel", tcp_.kernel}}},
      {"events", lags_ns_.size()},
      {"lag_virtual_ms", {{"p50", p50 / k / 1e6}, {"p99", p99 / k / 1e6}, {"max", max / k / 1e6}}},
      {"max_lag_ms", opt_.max_lag_ms},
      {"late_events", late},
      {"emulator",
       {{"queue_packets", opt_.queue_packets},
        {"packet_events", w.events},
        {"late_packet_events", w.late},
        {"lag_p50_us", w.p50_us},
        {"lag_p99_us", w.p99_us},
        {"lag_max_us", w.max_us},
        {"packets", w.packets},
        {"bytes", w.bytes},
        {"drops", w.drops},
        {"write_failures", w.write_failures}}},
      {"in_flight_at_end", flows_.size()},
      {"valid", why.empty()},
      {"invalid_because", because},
  };
}

}  // namespace gossipsim::emulate
