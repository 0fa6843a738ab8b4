#include "emulate/wan_emulator.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <queue>
#include <stdexcept>

#include "sim/network.h"
#include "sim/simulator.h"

namespace gossipsim::emulate {

namespace {

// The forwarder polls without sleeping while a packet came in the last
// kBusyNs, and when idle wakes kSpinNs before its next event.
constexpr int64_t kBusyNs = 200'000'000, kSpinNs = 100'000;

// Lags up to this many microseconds are counted one bucket each; longer ones
// in the last bucket (their maximum is kept apart).
constexpr int kLagBuckets = 10001;

}  // namespace

struct EmulatedWan::Forwarder {
  struct Hop {
    int resource;
    double ns_per_byte;
    int64_t latency_ns;
  };
  struct Resource {
    int64_t free_at = 0;             // when the packet being sent leaves it
    std::deque<int64_t> departures;  // of the packets waiting or being sent, in order
  };
  struct Packet {
    std::vector<uint8_t> data;
    int len = 0;
    int dst = 0;
    const std::vector<Hop>* route = nullptr;
  };
  struct Event {
    int64_t time;
    uint64_t seq;
    int packet;
    size_t hop;  // == route size: delivery
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  EmulatorOptions opt;
  int n = 0;
  std::vector<Fd> tuns;
  std::vector<std::vector<Hop>> routes;  // [src * n + dst]
  std::vector<Resource> resources;
  std::vector<Packet> packets;
  std::vector<int> free_packets;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;
  Fd epoll;
  std::atomic<bool> stop{false};
  std::thread thread;

  std::array<std::atomic<int64_t>, kLagBuckets> lag_buckets{};
  std::atomic<int64_t> lag_max_ns{0}, n_events{0}, n_late{0}, n_packets{0}, n_bytes{0}, n_drops{0}, n_write_failures{0};

  void record_lag(int64_t lag) {
    lag = std::max<int64_t>(0, lag);
    const int64_t us = lag / 1000;
    lag_buckets[std::min<int64_t>(us, kLagBuckets - 1)].fetch_add(1, std::memory_order_relaxed);
    int64_t m = lag_max_ns.load(std::memory_order_relaxed);
    while (lag > m && !lag_max_ns.compare_exchange_weak(m, lag, std::memory_order_relaxed)) {
    }
    n_events.fetch_add(1, std::memory_order_relaxed);
    if (static_cast<double>(lag) > opt.late_us * 1000) n_late.fetch_add(1, std::memory_order_relaxed);
  }

  int take_packet() {
    if (free_packets.empty()) {
      packets.emplace_back();
      packets.back().data.resize(static_cast<size_t>(opt.mtu) + 64);
      return static_cast<int>(packets.size()) - 1;
    }
    const int p = free_packets.back();
    free_packets.pop_back();
    return p;
  }

  static int node_of(const uint8_t* a) {
    if (a[0] != 10 || a[1] != 77) return -1;
    return (a[2] << 8 | a[3]) - 1;
  }

  // Every packet waiting on node `src`'s device enters its route now.
  void read_from(int src, int64_t now) {
    for (;;) {
      const int p = take_packet();
      Packet& pk = packets[p];
      const ssize_t len = ::read(tuns[src].get(), pk.data.data(), pk.data.size());
      if (len <= 0) {
        free_packets.push_back(p);
        return;
      }
      const int dst = len >= 20 && (pk.data[0] >> 4) == 4 ? node_of(pk.data.data() + 16) : -1;
      if (dst < 0 || dst >= n || dst == src) {  // not for another node (IPv6, multicast): not a WAN packet
        free_packets.push_back(p);
        continue;
      }
      pk.len = static_cast<int>(len);
      pk.dst = dst;
      pk.route = &routes[static_cast<size_t>(src) * n + dst];
      n_packets.fetch_add(1, std::memory_order_relaxed);
      n_bytes.fetch_add(len, std::memory_order_relaxed);
      arrive(p, 0, now);
    }
  }

  // Packet p reaches hop h (or, past the last, its destination) at time t.
  void arrive(int p, size_t h, int64_t t) {
    Packet& pk = packets[p];
    if (h == pk.route->size()) {
      if (::write(tuns[pk.dst].get(), pk.data.data(), static_cast<size_t>(pk.len)) != pk.len)
        n_write_failures.fetch_add(1, std::memory_order_relaxed);
      free_packets.push_back(p);
      return;
    }
    const Hop& hop = (*pk.route)[h];
    Resource& r = resources[hop.resource];
    while (!r.departures.empty() && r.departures.front() <= t) r.departures.pop_front();
    if (static_cast<int>(r.departures.size()) >= opt.queue_packets) {
      n_drops.fetch_add(1, std::memory_order_relaxed);
      free_packets.push_back(p);
      return;
    }
    const int64_t depart = std::max(t, r.free_at) + static_cast<int64_t>(pk.len * hop.ns_per_byte + 0.5);
    r.free_at = depart;
    r.departures.push_back(depart);
    events.push({depart + hop.latency_ns, seq++, p, h + 1});
  }

  void run() {
    // A high nice value, not a real-time class: the loop polls without
    // sleeping while busy, and a real-time thread that never sleeps is
    // throttled by the kernel (sched_rt_runtime_us: 50 ms of every second).
    if (opt.realtime_priority) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), -15);
    epoll_event ready[64];
    int64_t last_packet = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      int64_t now = now_ns();
      while (!events.empty() && events.top().time <= now) {
        const Event e = events.top();
        events.pop();
        record_lag(now - e.time);
        arrive(e.packet, e.hop, e.time);  // at its own time: lag never enters the model
      }
      // While packets come (one in the last kBusyNs), poll without sleeping:
      // on a virtual machine a thread woken from sleep starts some 100 us
      // late, which would delay packets that arrive meanwhile. Idle, sleep
      // until shortly before the next event.
      const int64_t next = events.empty() ? now + 50'000'000 : events.top().time;
      const int64_t wait = next - now_ns();
      int got;
      if (now - last_packet > kBusyNs && wait > kSpinNs) {
        const timespec ts{static_cast<time_t>((wait - kSpinNs) / 1'000'000'000),
                          static_cast<long>((wait - kSpinNs) % 1'000'000'000)};
        got = ::epoll_pwait2(epoll.get(), ready, 64, &ts, nullptr);
      } else {
        got = ::epoll_wait(epoll.get(), ready, 64, 0);
      }
      now = now_ns();
      if (got > 0) last_packet = now;
      for (int i = 0; i < got; ++i) {
        const int src = static_cast<int>(ready[i].data.u32);
        if (src >= 0 && src < n) read_from(src, now);
      }
    }
  }
};

in_addr EmulatedWan::address(NodeId n) {
  const uint32_t host = static_cast<uint32_t>(n) + 1;
  return in_addr{htonl((10u << 24) | (77u << 16) | host)};
}

std::vector<int> EmulatedWan::resources(NodeId src, NodeId dst) const {
  std::vector<int> out;
  for (const Forwarder::Hop& h : forwarder_->routes.at(static_cast<size_t>(src) * forwarder_->n + dst))
    out.push_back(h.resource);
  return out;
}

EmulatedWan::EmulatedWan(const Topology& topology, EmulatorOptions options) : forwarder_(new Forwarder) {
  if (auto why = unavailable()) throw std::runtime_error(*why);
  const int n = topology.node_count();
  if (n > 1000) throw std::runtime_error(fmt::format("the emulated WAN holds at most 1,000 nodes ({} asked)", n));
  if (options.mtu < 576 || options.mtu > 9000)
    throw std::runtime_error(fmt::format("the emulated WAN's MTU must be in [576, 9000] ({} asked)", options.mtu));
  Forwarder& f = *forwarder_;
  f.opt = options;
  f.n = n;
  Simulator sim;
  Network net(sim, topology);
  for (NodeId src = 0; src < n; ++src)
    for (NodeId dst = 0; dst < n; ++dst) {
      std::vector<Forwarder::Hop> route;
      if (src != dst)
        for (const Network::Hop& h : net.hops(src, dst)) {
          route.push_back({h.resource, 1e9 / h.capacity, h.latency.ns()});
          max_capacity_ = std::max(max_capacity_, h.capacity);
          if (h.resource >= static_cast<int>(f.resources.size())) f.resources.resize(h.resource + 1);
        }
      f.routes.push_back(std::move(route));
    }
  f.epoll = Fd(::epoll_create1(EPOLL_CLOEXEC));
  for (NodeId i = 0; i < n; ++i) {
    ns_.push_back(new_namespace());
    f.tuns.push_back(new_tun(ns_.back().get(), "gs0", address(i), 16, options.mtu));
    try {
      write_net_sysctl(ns_.back().get(), "ipv6/conf/gs0/disable_ipv6", "1");
    } catch (const std::exception&) {
      // no IPv6 here: nothing to silence
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (::epoll_ctl(f.epoll.get(), EPOLL_CTL_ADD, f.tuns.back().get(), &ev) != 0)
      throw std::runtime_error(std::string("emulated WAN: epoll: ") + std::strerror(errno));
  }
  f.thread = std::thread([&f] { f.run(); });
}

EmulatedWan::~EmulatedWan() {
  forwarder_->stop = true;
  if (forwarder_->thread.joinable()) forwarder_->thread.join();
}

LagStats EmulatedWan::lag() const {
  const Forwarder& f = *forwarder_;
  LagStats s;
  s.events = f.n_events.load();
  s.late = f.n_late.load();
  s.max_us = f.lag_max_ns.load() / 1e3;
  s.packets = f.n_packets.load();
  s.bytes = f.n_bytes.load();
  s.drops = f.n_drops.load();
  s.write_failures = f.n_write_failures.load();
  int64_t seen = 0;
  bool have50 = false;
  for (int b = 0; b < kLagBuckets; ++b) {
    seen += f.lag_buckets[b].load();
    if (!have50 && seen * 2 >= s.events) s.p50_us = b, have50 = true;
    if (seen * 100 >= s.events * 99) {
      s.p99_us = b;
      break;
    }
  }
  s.valid = s.events == 0 || static_cast<double>(s.late) <= f.opt.late_fraction * static_cast<double>(s.events);
  return s;
}

void EmulatedWan::reset_lag() {
  Forwarder& f = *forwarder_;
  for (auto& b : f.lag_buckets) b = 0;
  f.lag_max_ns = 0;
  f.n_events = f.n_late = f.n_packets = f.n_bytes = f.n_drops = f.n_write_failures = 0;
}

}  // namespace gossipsim::emulate
