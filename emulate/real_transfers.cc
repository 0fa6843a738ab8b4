#include "emulate/real_transfers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

namespace gossipsim::emulate {

const EnumNames<Connections>& connections_names() {
  static const EnumNames<Connections> names = {
      {"fresh", Connections::kFresh}, {"persistent", Connections::kPersistent}, {"warm", Connections::kWarm}};
  return names;
}

namespace {

constexpr uint16_t kPort = 5001;
constexpr int64_t kWarmId = -1;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("real transfers: " + what + ": " + std::strerror(errno));
}

sockaddr_in endpoint(NodeId n) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr = EmulatedWan::address(n);
  a.sin_port = htons(kPort);
  return a;
}

// Messages on a stream: an 8-byte id (a transfer, or kWarmId), an 8-byte
// length, then that many bytes.
struct Header {
  int64_t id, length;
};

// One end of a connection, with what it still has to send or to read.
struct Conn {
  Fd fd;
  bool sender = false;
  bool connected = false;
  // Sender: messages waiting (fresh: one), and the one being written.
  std::deque<Header> queue;
  Header out{};
  int64_t out_header_left = 0, out_left = 0;  // bytes of the header and of the payload still to write
  // Receiver: the header being read and the payload still to come.
  char in_header[sizeof(Header)]{};
  size_t in_header_got = 0;
  int64_t in_left = -1, in_id = 0;  // in_left < 0: reading a header
};

class Driver {
 public:
  Driver(EmulatedWan& wan, const std::vector<ReplayTransfer>& transfers, const RealTransferOptions& options)
      : wan_(wan), transfers_(transfers), opt_(options), finish_(transfers.size(), -1) {
    epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
    zeros_.assign(1 << 20, 0);
    scratch_.resize(1 << 20);
  }

  std::vector<RealTransfer> run() {
    listen_everywhere();
    if (opt_.connections != Connections::kFresh) open_pairs();
    t0_ = now_ns() + 50'000'000;
    std::vector<size_t> order;
    for (size_t i = 0; i < transfers_.size(); ++i)
      if (!transfers_[i].control) order.push_back(i), ++pending_;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return transfers_[a].start_s < transfers_[b].start_s; });
    size_t next = 0;
    const int64_t deadline = t0_ + static_cast<int64_t>(opt_.time_limit_s * 1e9);
    while (pending_ > 0 && now_ns() < deadline) {
      while (next < order.size() && due(order[next]) <= now_ns()) start(order[next++]);
      const int64_t wake = next < order.size() ? std::min(due(order[next]), deadline) : deadline;
      poll(std::max<int64_t>(0, wake - now_ns()));
    }
    std::vector<RealTransfer> out(transfers_.size());
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].start_s = transfers_[i].start_s;
      out[i].finish_s = finish_[i] < 0 ? -1 : (finish_[i] - t0_) / 1e9;
    }
    return out;
  }

 private:
  int64_t due(size_t i) const { return t0_ + static_cast<int64_t>(transfers_[i].start_s * 1e9); }

  void watch(Conn* c, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = c;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->fd.get(), &ev) != 0) fail("epoll_ctl");
  }

  void listen_everywhere() {
    for (NodeId n = 0; n < wan_.nodes(); ++n) {
      auto c = std::make_unique<Conn>();
      c->fd = socket_in(wan_.ns(n), AF_INET, SOCK_STREAM | SOCK_NONBLOCK);
      int one = 1;
      ::setsockopt(c->fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      const sockaddr_in a = endpoint(n);
      if (::bind(c->fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) fail("bind");
      if (::listen(c->fd.get(), 4096) != 0) fail("listen");
      listeners_.push_back(c.get());
      watch(c.get(), EPOLLIN);
      conns_.push_back(std::move(c));
    }
  }

  Conn* connect_from(NodeId src, NodeId dst) {
    auto c = std::make_unique<Conn>();
    c->sender = true;
    c->fd = socket_in(wan_.ns(src), AF_INET, SOCK_STREAM | SOCK_NONBLOCK);
    if (!opt_.congestion.empty() &&
        ::setsockopt(c->fd.get(), IPPROTO_TCP, TCP_CONGESTION, opt_.congestion.data(), opt_.congestion.size()) != 0)
      fail("congestion control " + opt_.congestion);
    // No Nagle (as gRPC, Gloo and NCCL's sockets set it): a transfer's last,
    // partial segment leaves at once instead of waiting a round trip for the
    // ACK of what is in flight. Its 16-byte header is corked into the first
    // payload segment (MSG_MORE), so it costs no packet of the window.
    const int one = 1;
    if (::setsockopt(c->fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
    const sockaddr_in a = endpoint(dst);
    if (::connect(c->fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS)
      fail("connect");
    watch(c.get(), EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP);
    conns_.push_back(std::move(c));
    return conns_.back().get();
  }

  // persistent and warm: a connection per ordered pair, open (and, warm,
  // warmed) before time 0.
  void open_pairs() {
    for (const ReplayTransfer& t : transfers_)
      if (!t.control && !pairs_.count({t.src, t.dst})) pairs_[{t.src, t.dst}] = connect_from(t.src, t.dst);
    const int64_t limit = now_ns() + 600'000'000'000;
    auto wait_until = [&](auto&& done) {
      while (!done() && now_ns() < limit) poll(10'000'000);
      if (!done()) throw std::runtime_error("real transfers: the connections did not open (and warm) within 600 s");
    };
    wait_until([&] {
      for (auto& [pair, c] : pairs_)
        if (!c->connected) return false;
      return true;
    });
    if (opt_.connections != Connections::kWarm) return;
    // Warmed in rounds in which no node sends or receives more than one
    // warm-up, so that each connection learns its path alone (BBR's
    // bandwidth estimate, CUBIC's window) rather than a share of a crowd.
    std::vector<std::vector<Conn*>> rounds;
    std::vector<std::pair<std::set<NodeId>, std::set<NodeId>>> busy;
    for (auto& [pair, c] : pairs_) {
      size_t r = 0;
      while (r < rounds.size() && (busy[r].first.count(pair.first) || busy[r].second.count(pair.second))) ++r;
      if (r == rounds.size()) {
        rounds.emplace_back();
        busy.emplace_back();
      }
      rounds[r].push_back(c);
      busy[r].first.insert(pair.first);
      busy[r].second.insert(pair.second);
    }
    int64_t target = 0;
    for (const auto& round : rounds) {
      for (Conn* c : round) enqueue(c, {kWarmId, opt_.warm_bytes});
      target += static_cast<int64_t>(round.size());
      wait_until([&] { return warmed_ == target; });
    }
  }

  void start(size_t i) {
    const ReplayTransfer& t = transfers_[i];
    Conn* c = opt_.connections == Connections::kFresh ? connect_from(t.src, t.dst) : pairs_.at({t.src, t.dst});
    enqueue(c, {static_cast<int64_t>(i), t.bytes});
  }

  void enqueue(Conn* c, Header h) {
    c->queue.push_back(h);
    if (c->connected) send_some(c);
  }

  void send_some(Conn* c) {
    for (;;) {
      if (c->out_header_left == 0 && c->out_left == 0) {
        if (c->queue.empty()) return;
        c->out = c->queue.front();
        c->queue.pop_front();
        c->out_header_left = sizeof(Header);
        c->out_left = c->out.length;
      }
      ssize_t n;
      if (c->out_header_left > 0) {
        const char* h = reinterpret_cast<const char*>(&c->out) + (sizeof(Header) - c->out_header_left);
        n = ::send(c->fd.get(), h, static_cast<size_t>(c->out_header_left),
                   MSG_NOSIGNAL | (c->out_left > 0 ? MSG_MORE : 0));
        if (n > 0) c->out_header_left -= n;
      } else {
        n = ::send(c->fd.get(), zeros_.data(), static_cast<size_t>(std::min<int64_t>(c->out_left, zeros_.size())),
                   MSG_NOSIGNAL);
        if (n > 0) c->out_left -= n;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail("send");
      }
    }
  }

  void receive_some(Conn* c) {
    for (;;) {
      ssize_t n;
      if (c->in_left < 0) {
        n = ::recv(c->fd.get(), c->in_header + c->in_header_got, sizeof(Header) - c->in_header_got, 0);
        if (n > 0 && (c->in_header_got += static_cast<size_t>(n)) == sizeof(Header)) {
          Header h;
          std::memcpy(&h, c->in_header, sizeof h);
          c->in_id = h.id;
          c->in_left = h.length;
          c->in_header_got = 0;
          if (c->in_left == 0) received(c);
          if (!c->fd) return;
        }
      } else {
        n = ::recv(c->fd.get(), scratch_.data(), static_cast<size_t>(std::min<int64_t>(c->in_left, scratch_.size())),
                   0);
        if (n > 0 && (c->in_left -= n) == 0) received(c);
        if (!c->fd) return;
      }
      if (n == 0) {  // the sender closed
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
        c->fd = Fd();
        return;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail("recv");
      }
    }
  }

  // The message on c has arrived whole, now.
  void received(Conn* c) {
    if (c->in_id == kWarmId) {
      ++warmed_;
    } else if (c->in_id >= 0 && static_cast<size_t>(c->in_id) < finish_.size() && finish_[c->in_id] < 0) {
      finish_[c->in_id] = now_ns();
      --pending_;
      if (opt_.connections == Connections::kFresh) {  // its only message: close, the sender sees it
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
        c->fd = Fd();
        c->in_left = -1;
        return;
      }
    }
    c->in_left = -1;
  }

  void accept_all(Conn* listener) {
    for (;;) {
      const int fd = ::accept4(listener->fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail("accept");
      }
      auto c = std::make_unique<Conn>();
      c->fd = Fd(fd);
      watch(c.get(), EPOLLIN | EPOLLET | EPOLLRDHUP);
      conns_.push_back(std::move(c));
      receive_some(conns_.back().get());
    }
  }

  void poll(int64_t wait_ns) {
    epoll_event events[256];
    const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
    const int n = ::epoll_pwait2(epoll_.get(), events, 256, &ts, nullptr);
    if (n < 0 && errno != EINTR) fail("epoll");
    for (int i = 0; i < n; ++i) {
      Conn* c = static_cast<Conn*>(events[i].data.ptr);
      if (!c->fd) continue;
      if (std::find(listeners_.begin(), listeners_.end(), c) != listeners_.end()) {
        accept_all(c);
        continue;
      }
      if (c->sender) {
        if ((events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && c->connected &&
            c->out_left == 0 && c->queue.empty()) {
          ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
          c->fd = Fd();
          continue;
        }
        if (events[i].events & EPOLLOUT) {
          if (!c->connected) {
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(c->fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
              errno = err;
              fail("connecting");
            }
            c->connected = true;
          }
          send_some(c);
        }
      } else {
        receive_some(c);
      }
    }
  }

  EmulatedWan& wan_;
  const std::vector<ReplayTransfer>& transfers_;
  const RealTransferOptions& opt_;
  std::vector<int64_t> finish_;
  Fd epoll_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Conn*> listeners_;
  std::map<std::pair<NodeId, NodeId>, Conn*> pairs_;
  std::vector<char> zeros_, scratch_;
  int64_t t0_ = 0, pending_ = 0, warmed_ = 0;
};

}  // namespace

std::vector<RealTransfer> run_real_transfers(EmulatedWan& wan, const std::vector<ReplayTransfer>& transfers,
                                             const RealTransferOptions& options, TcpSettings* settings) {
  const std::string idle = options.connections == Connections::kWarm ? "0" : "1";
  for (NodeId n = 0; n < wan.nodes(); ++n) {
    write_net_sysctl(wan.ns(n), "ipv4/tcp_slow_start_after_idle", idle);
    // A connection does not inherit the ssthresh and RTT an earlier one to
    // the same host left in the metrics cache: every fresh connection starts
    // as the first between two hosts does, whatever ran before it.
    write_net_sysctl(wan.ns(n), "ipv4/tcp_no_metrics_save", "1");
  }
  if (settings) {
    const int ns = wan.ns(0);
    settings->congestion =
        options.congestion.empty() ? read_net_sysctl(ns, "ipv4/tcp_congestion_control") : options.congestion;
    settings->available = read_net_sysctl(ns, "ipv4/tcp_available_congestion_control");
    settings->slow_start_after_idle = read_net_sysctl(ns, "ipv4/tcp_slow_start_after_idle");
    settings->no_metrics_save = read_net_sysctl(ns, "ipv4/tcp_no_metrics_save");
    settings->rmem = read_net_sysctl(ns, "ipv4/tcp_rmem");
    settings->wmem = read_net_sysctl(ns, "ipv4/tcp_wmem");
    utsname u{};
    ::uname(&u);
    settings->kernel = u.release;
  }
  Driver driver(wan, transfers, options);
  return driver.run();
}

}  // namespace gossipsim::emulate
