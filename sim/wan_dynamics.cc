#include "sim/wan_dynamics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"
#include "sim/network.h"
#include "sim/recorder.h"
#include "sim/simulator.h"

namespace gossipsim {

WanDynamics::WanDynamics(Simulator& sim, Network& net, Recorder& recorder, std::vector<WanProfile> profiles,
                         std::vector<CrossTraffic> traffic, SetSpeed set_speed, uint64_t seed, int64_t max_cross_flows)
    : sim_(sim),
      net_(net),
      recorder_(recorder),
      profiles_(std::move(profiles)),
      traffic_(std::move(traffic)),
      set_speed_(std::move(set_speed)),
      next_(profiles_.size(), 0),
      cycle_(profiles_.size(), Time::zero()),
      max_cross_flows_(max_cross_flows) {
  const Streams streams(seed);
  for (size_t k = 0; k < traffic_.size(); ++k) traffic_rng_.push_back(streams.stream("cross-traffic", k));
}

void WanDynamics::start() {
  std::set<std::pair<std::string, std::string>> seen;
  for (const WanProfile& c : profiles_) {
    if (!seen.insert({c.kind(), c.name}).second) continue;
    double value = 1;  // a compute profile's factor starts at 1
    switch (c.target) {
      case WanProfile::Target::kLinkCapacity:
        value = net_.link_capacity(c.a, c.b).megabits_per_second();
        break;
      case WanProfile::Target::kLinkLatency:
        value = net_.link_latency(c.a, c.b).seconds() * 1e3;
        break;
      case WanProfile::Target::kUp:
        value = net_.access_capacity(c.node, true).megabits_per_second();
        break;
      case WanProfile::Target::kDown:
        value = net_.access_capacity(c.node, false).megabits_per_second();
        break;
      case WanProfile::Target::kCompute:
        break;
    }
    starting_.push_back({c.kind(), c.name, value});
  }
  for (size_t p = 0; p < profiles_.size(); ++p) schedule_next(p);
  for (size_t k = 0; k < traffic_.size(); ++k) {
    const Time first = traffic_[k].start + seconds(traffic_[k].interarrival_s.sample(traffic_rng_[k]));
    if (first < traffic_[k].until) sim_.schedule_at(first, [this, k] { next_flow(k); });
  }
}

void WanDynamics::next_flow(size_t k) {
  const CrossTraffic& c = traffic_[k];
  Rng& rng = traffic_rng_[k];
  const NodeId src = c.from[uniform_index(rng, c.from.size())];
  std::vector<NodeId> to;
  for (NodeId n : c.to)
    if (n != src) to.push_back(n);
  const double size_mb = c.size_mb.sample(rng);
  if (!to.empty()) {
    const NodeId dst = to[uniform_index(rng, to.size())];
    const Bytes size{std::max<int64_t>(1, std::llround(size_mb * 1e6))};
    if (++cross_started_ > max_cross_flows_)
      throw InputError(c.file, c.pointer + "/interarrival_s",
                       fmt::format("expected gaps that make at most {} cross-traffic flows in a run; its draws made "
                                   "more by {:.6g} virtual s (about {:.3g} were expected over [start_s, until_s])",
                                   max_cross_flows_, sim_.now().seconds(), c.expected_flows));
    recorder_.network_events.push_back(
        {sim_.now(), "cross-traffic", fmt::format("n{}->n{}", src, dst), static_cast<double>(size.count), c.name});
    net_.start_flow(
        src, dst, size,
        [this](const FlowRecord& f) {
          if (f.lost) return;
          ++cross_finished_;
          cross_bytes_ += f.size.count;
        },
        /*background=*/true);
  }
  const Time next = sim_.now() + seconds(c.interarrival_s.sample(rng));
  if (next < c.until) sim_.schedule_at(next, [this, k] { next_flow(k); });
}

void WanDynamics::schedule_next(size_t p) {
  const WanProfile& c = profiles_[p];
  const auto& points = c.values->points;
  if (next_[p] == points.size()) {
    if (c.values->period == Time::zero()) return;  // the last value holds for ever
    next_[p] = 0;
    cycle_[p] += c.values->period;
  }
  const Time at = cycle_[p] + points[next_[p]].first;
  if (at.ns() > static_cast<int64_t>(kMaxVirtualSeconds * 1e9)) return;
  sim_.schedule_at(at, [this, p] {
    const WanProfile& c = profiles_[p];
    const double value = c.values->points[next_[p]].second;
    switch (c.target) {
      case WanProfile::Target::kLinkCapacity:
        net_.set_link_capacity(c.a, c.b, mbps(value));
        break;
      case WanProfile::Target::kLinkLatency:
        net_.set_link_latency(c.a, c.b, milliseconds(value));
        break;
      case WanProfile::Target::kUp:
        net_.set_access_capacity(c.node, true, mbps(value));
        break;
      case WanProfile::Target::kDown:
        net_.set_access_capacity(c.node, false, mbps(value));
        break;
      case WanProfile::Target::kCompute:
        if (set_speed_) set_speed_(c.node, value);
        break;
    }
    recorder_.network_events.push_back({sim_.now(), c.kind(), c.name, value, ""});
    ++next_[p];
    schedule_next(p);
  });
}

}  // namespace gossipsim
