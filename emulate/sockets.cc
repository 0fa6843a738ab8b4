#include "emulate/sockets.h"

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
#include <stdexcept>

namespace gossipsim::emulate {

TcpSettings configure_tcp(EmulatedWan& wan, Connections connections, const std::string& congestion) {
  const std::string idle = connections == Connections::kWarm ? "0" : "1";
  for (NodeId n = 0; n < wan.nodes(); ++n) {
    write_net_sysctl(wan.ns(n), "ipv4/tcp_slow_start_after_idle", idle);
    // A connection does not inherit the ssthresh and RTT an earlier one to
    // the same host left in the metrics cache: every fresh connection starts
    // as the first between two hosts does, whatever ran before it.
    write_net_sysctl(wan.ns(n), "ipv4/tcp_no_metrics_save", "1");
  }
  TcpSettings s;
  const int ns = wan.ns(0);
  s.congestion = congestion.empty() ? read_net_sysctl(ns, "ipv4/tcp_congestion_control") : congestion;
  s.available = read_net_sysctl(ns, "ipv4/tcp_available_congestion_control");
  s.slow_start_after_idle = read_net_sysctl(ns, "ipv4/tcp_slow_start_after_idle");
  s.no_metrics_save = read_net_sysctl(ns, "ipv4/tcp_no_metrics_save");
  s.rmem = read_net_sysctl(ns, "ipv4/tcp_rmem");
  s.wmem = read_net_sysctl(ns, "ipv4/tcp_wmem");
  utsname u{};
  ::uname(&u);
  s.kernel = u.release;
  return s;
}

namespace {

constexpr uint16_t kPort = 5001;
constexpr int64_t kWarmId = -1;
constexpr int64_t kControl = -1;  // a header's length for a control message

[[noreturn]] void fail(const std::string& what) {
  const int error = errno;
  throw std::runtime_error("real transfers: " + what + ": " + std::strerror(error) + open_files_advice(error));
}

sockaddr_in endpoint(NodeId n) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr = EmulatedWan::address(n);
  a.sin_port = htons(kPort);
  return a;
}

// Messages on a stream: an 8-byte id (a message's, or kWarmId), an 8-byte
// length (kControl: a control message, nothing follows), then that many bytes.
struct Header {
  int64_t id, length;
};

}  // namespace

// One end of a connection, with what it still has to send or to read.
struct Sockets::Conn {
  Fd fd;
  bool sender = false, listener = false;
  bool connected = false;
  int64_t fresh_id = -1;  // fresh sender: the one message it carries (then its receiver closes it)
  // Sender: messages waiting (fresh: one), and the one being written.
  std::deque<Header> queue;
  Header out{};
  int64_t out_header_left = 0, out_left = 0;  // bytes of the header and of the payload still to write
  // Receiver: the header being read and the payload still to come.
  char in_header[sizeof(Header)]{};
  size_t in_header_got = 0;
  int64_t in_left = -1, in_id = 0;  // in_left < 0: reading a header
};

Sockets::Sockets(EmulatedWan& wan, Options options, Arrived payload_arrived, Arrived control_arrived)
    : wan_(wan),
      opt_(std::move(options)),
      payload_arrived_(std::move(payload_arrived)),
      control_arrived_(std::move(control_arrived)) {
  epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
  zeros_.assign(1 << 20, 0);
  scratch_.resize(1 << 20);
  for (NodeId n = 0; n < wan_.nodes(); ++n) {
    auto c = std::make_unique<Conn>();
    c->listener = true;
    c->fd = socket_in(wan_.ns(n), AF_INET, SOCK_STREAM | SOCK_NONBLOCK);
    int one = 1;
    ::setsockopt(c->fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = endpoint(n);
    if (::bind(c->fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) fail("bind");
    if (::listen(c->fd.get(), 4096) != 0) fail("listen");
    listeners_.push_back(c.get());
    watch(add(std::move(c)), EPOLLIN);
  }
}

Sockets::~Sockets() = default;

Sockets::Conn* Sockets::add(std::unique_ptr<Conn> c) {
  Conn* p = c.get();
  conns_.emplace(p, std::move(c));
  return p;
}

void Sockets::watch(Conn* c, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->fd.get(), &ev) != 0) fail("epoll_ctl");
}

void Sockets::close(Conn* c) {
  if (!c->fd) return;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
  c->fd = Fd();
  closed_.push_back(c);
}

Sockets::Conn* Sockets::connect_from(NodeId src, NodeId dst) {
  auto c = std::make_unique<Conn>();
  c->sender = true;
  c->fd = socket_in(wan_.ns(src), AF_INET, SOCK_STREAM | SOCK_NONBLOCK);
  if (!opt_.congestion.empty() &&
      ::setsockopt(c->fd.get(), IPPROTO_TCP, TCP_CONGESTION, opt_.congestion.data(), opt_.congestion.size()) != 0)
    fail("congestion control " + opt_.congestion);
  // No Nagle (as gRPC, Gloo and NCCL's sockets set it): a message's last,
  // partial segment leaves at once instead of waiting a round trip for the
  // ACK of what is in flight. Its 16-byte header is corked into the first
  // payload segment (MSG_MORE), so it costs no packet of the window.
  const int one = 1;
  if (::setsockopt(c->fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
  const sockaddr_in a = endpoint(dst);
  if (::connect(c->fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS)
    fail("connect");
  Conn* p = add(std::move(c));
  watch(p, EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP);
  return p;
}

std::vector<std::vector<std::pair<NodeId, NodeId>>> warm_rounds(
    const std::set<std::pair<NodeId, NodeId>>& pairs,
    const std::function<std::vector<int>(NodeId, NodeId)>& resources) {
  std::vector<std::vector<std::pair<NodeId, NodeId>>> rounds;
  std::vector<std::set<int>> busy;
  for (const auto& pair : pairs) {
    std::vector<int> used = resources(pair.first, pair.second);
    for (int r : resources(pair.second, pair.first)) used.push_back(r);
    auto shares = [&](const std::set<int>& taken) {
      for (int u : used)
        if (taken.count(u)) return true;
      return false;
    };
    size_t r = 0;
    while (r < rounds.size() && shares(busy[r])) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[r].push_back(pair);
    busy[r].insert(used.begin(), used.end());
  }
  return rounds;
}

void Sockets::open_pairs(const std::set<std::pair<NodeId, NodeId>>& pairs) {
  if (opt_.connections == Connections::kFresh) return;
  for (const auto& pair : pairs)
    if (!pairs_.count(pair)) pairs_[pair] = connect_from(pair.first, pair.second);
  const int64_t limit = now_ns() + 600'000'000'000;
  auto wait_until = [&](auto&& done) {
    while (!done() && now_ns() < limit) poll(10'000'000);
    if (!done()) throw std::runtime_error("real transfers: the connections did not open (and warm) within 600 s");
  };
  wait_until([&] {
    for (const auto& pair : pairs)
      if (!pairs_.at(pair)->connected) return false;
    return true;
  });
  if (opt_.connections != Connections::kWarm) return;
  int64_t target = warmed_;
  for (const auto& round : warm_rounds(pairs, [&](NodeId a, NodeId b) { return wan_.resources(a, b); })) {
    for (const auto& pair : round) enqueue(pairs_.at(pair), kWarmId, opt_.warm_bytes);
    target += static_cast<int64_t>(round.size());
    wait_until([&] { return warmed_ == target; });
  }
}

void Sockets::send(NodeId src, NodeId dst, int64_t id, int64_t bytes) {
  Conn* c;
  if (opt_.connections == Connections::kFresh) {
    c = connect_from(src, dst);
    c->fresh_id = id;
    fresh_[id] = c;
  } else {
    Conn*& p = pairs_[{src, dst}];
    if (!p) p = connect_from(src, dst);
    c = p;
  }
  enqueue(c, id, bytes);
}

void Sockets::send_control(NodeId src, NodeId dst, int64_t id) {
  Conn*& p = control_pairs_[{src, dst}];
  if (!p) p = connect_from(src, dst);
  enqueue(p, id, kControl);
}

void Sockets::cancel(int64_t id) {
  if (auto it = fresh_.find(id); it != fresh_.end()) close(it->second);
}

void Sockets::enqueue(Conn* c, int64_t id, int64_t length) {
  c->queue.push_back({id, length});
  if (c->connected) send_some(c);
}

void Sockets::send_some(Conn* c) {
  while (c->fd) {
    if (c->out_header_left == 0 && c->out_left == 0) {
      if (c->queue.empty()) return;
      c->out = c->queue.front();
      c->queue.pop_front();
      c->out_header_left = sizeof(Header);
      c->out_left = std::max<int64_t>(0, c->out.length);
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

void Sockets::receive_some(Conn* c) {
  while (c->fd) {
    ssize_t n;
    if (c->in_left < 0) {
      n = ::recv(c->fd.get(), c->in_header + c->in_header_got, sizeof(Header) - c->in_header_got, 0);
      if (n > 0 && (c->in_header_got += static_cast<size_t>(n)) == sizeof(Header)) {
        Header h;
        std::memcpy(&h, c->in_header, sizeof h);
        c->in_id = h.id;
        c->in_header_got = 0;
        if (h.length == kControl) {
          if (control_arrived_) control_arrived_(h.id, now_ns());
          continue;
        }
        c->in_left = h.length;
        if (c->in_left == 0) received(c);
      }
    } else {
      n = ::recv(c->fd.get(), scratch_.data(), static_cast<size_t>(std::min<int64_t>(c->in_left, scratch_.size())), 0);
      if (n > 0 && (c->in_left -= n) == 0) received(c);
    }
    if (n == 0) {  // the sender closed
      close(c);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == ECONNRESET) {  // a cancelled message's sender closed mid-stream
        close(c);
        return;
      }
      fail("recv");
    }
  }
}

// The payload on c has arrived whole, now.
void Sockets::received(Conn* c) {
  c->in_left = -1;
  if (c->in_id == kWarmId) {
    ++warmed_;
    return;
  }
  const int64_t id = c->in_id;
  if (opt_.connections == Connections::kFresh) close(c);  // its only message: close, its sender sees it
  payload_arrived_(id, now_ns());
}

void Sockets::accept_all(Conn* listener) {
  for (;;) {
    const int fd = ::accept4(listener->fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      fail("accept");
    }
    auto c = std::make_unique<Conn>();
    c->fd = Fd(fd);
    Conn* p = add(std::move(c));
    watch(p, EPOLLIN | EPOLLET | EPOLLRDHUP);
    receive_some(p);
  }
}

void Sockets::poll(int64_t wait_ns) {
  epoll_event events[256];
  wait_ns = std::max<int64_t>(0, wait_ns);
  const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
  const int n = ::epoll_pwait2(epoll_.get(), events, 256, &ts, nullptr);
  if (n < 0 && errno != EINTR) fail("epoll");
  for (int i = 0; i < n; ++i) {
    Conn* c = static_cast<Conn*>(events[i].data.ptr);
    if (!c->fd) continue;
    if (c->listener) {
      accept_all(c);
      continue;
    }
    if (!c->sender) {
      receive_some(c);
      continue;
    }
    if ((events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && c->connected && c->out_left == 0 &&
        c->out_header_left == 0 && c->queue.empty()) {
      close(c);  // its receiver closed after the last message: done
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
  }
  for (Conn* c : closed_) {
    if (c->fresh_id >= 0) fresh_.erase(c->fresh_id);
    conns_.erase(c);
  }
  closed_.clear();
}

}  // namespace gossipsim::emulate
