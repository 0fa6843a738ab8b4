#include "emulate/probe.h"

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace gossipsim::emulate {

namespace {

// Reads one packet and the kernel's time of its arrival (CLOCK_REALTIME),
// as ping does: the reader's own wake-up delay stays out of the round trip.
ssize_t receive(int fd, std::vector<uint8_t>& into, int64_t* arrived_ns) {
  iovec io{into.data(), into.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &m, 0);
  *arrived_ns = now_ns(CLOCK_REALTIME);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
      timespec t;
      std::memcpy(&t, CMSG_DATA(c), sizeof t);
      *arrived_ns = int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
    }
  return n;
}

uint16_t checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

std::vector<double> ping_ms(EmulatedWan& wan, NodeId from, NodeId to, int count, double interval_s, int payload) {
  Fd s = socket_in(wan.ns(from), AF_INET, SOCK_RAW, IPPROTO_ICMP);
  timeval tv{1, 0};
  ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const int on = 1;
  ::setsockopt(s.get(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_addr = EmulatedWan::address(to);
  std::vector<double> out;
  std::vector<uint8_t> packet(sizeof(icmphdr) + static_cast<size_t>(payload), 0xab), reply(65536);
  for (int i = 0; i < count; ++i) {
    auto* h = reinterpret_cast<icmphdr*>(packet.data());
    std::memset(h, 0, sizeof *h);
    h->type = ICMP_ECHO;
    h->un.echo.id = htons(static_cast<uint16_t>(::getpid()));
    h->un.echo.sequence = htons(static_cast<uint16_t>(i));
    const uint16_t sum = checksum(packet.data(), packet.size());
    h->checksum = htons(sum);
    const int64_t t0 = now_ns(), sent = now_ns(CLOCK_REALTIME);
    if (::sendto(s.get(), packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&dst), sizeof dst) < 0)
      continue;
    for (;;) {  // the raw socket also sees our own requests on the way out: wait for the reply
      int64_t arrived;
      const ssize_t n = receive(s.get(), reply, &arrived);
      if (n <= 0) break;
      const size_t ihl = static_cast<size_t>(reply[0] & 0x0f) * 4;
      if (static_cast<size_t>(n) < ihl + sizeof(icmphdr)) continue;
      const auto* r = reinterpret_cast<const icmphdr*>(reply.data() + ihl);
      if (r->type == ICMP_ECHOREPLY && ntohs(r->un.echo.sequence) == i) {
        out.push_back((arrived - sent) / 1e6);
        break;
      }
    }
    const int64_t next = t0 + static_cast<int64_t>(interval_s * 1e9);
    while (now_ns() < next) ::usleep(static_cast<useconds_t>(std::max<int64_t>(1, (next - now_ns()) / 1000)));
  }
  return out;
}

}  // namespace gossipsim::emulate
