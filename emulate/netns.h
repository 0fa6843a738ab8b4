// Network namespaces and TUN devices held by file descriptors only, so that
// nothing outlives the process that made them, however it ends.
//
// A namespace is made by a short-lived child that unshares its network and
// waits; the parent opens /proc/<child>/ns/net, which keeps the namespace
// alive, and reaps the child. Nothing is mounted (unlike `ip netns add`),
// so when the parent's descriptors close, at exit or on SIGKILL, the
// namespace and every device and socket in it go with them. A TUN device is
// created inside a namespace by a thread that enters it (setns affects only
// the calling thread) and is not persistent: it disappears with its
// descriptor. Sockets made in a namespace keep it for their whole life.
//
// Needs root (CAP_SYS_ADMIN for namespaces, CAP_NET_ADMIN for devices) and
// /dev/net/tun; available() says in one line why not, where it cannot run.
#pragma once

#include <netinet/in.h>
#include <time.h>

#include <optional>
#include <string>

namespace gossipsim::emulate {

// Nanoseconds on `clock` (the monotonic one unless said): the emulator's
// time base, and the realtime one of kernel packet timestamps.
inline int64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  timespec t;
  ::clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// Empty when namespaces and TUN devices can be made here; otherwise why not,
// in one line ("needs root", "no /dev/net/tun", ...).
std::optional<std::string> unavailable();

// The emulated WAN holds two sockets per transfer in flight (and TUN devices
// and namespaces per node): thousands at once pass the usual soft limit of
// 1,024 open files. Raises this process's soft limit to its hard limit and
// returns it.
uint64_t raise_open_file_limit();
// How many files this process holds open now.
uint64_t open_files();
// How many open files the command expects to need at most (its transfers
// all at once), for open_files_advice to say.
void note_open_files_needed(uint64_t files);
// What to say when opening a socket failed with EMFILE or ENFILE: the
// limit, what is open, and the fix; empty for any other errno.
std::string open_files_advice(int error);

// A file descriptor, closed once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A new network namespace with its loopback up; the descriptor holds it.
Fd new_namespace();

// While alive, the calling thread is in `ns` (a namespace descriptor); it
// returns to the namespace it was in.
class InNamespace {
 public:
  explicit InNamespace(int ns);
  ~InNamespace();
  InNamespace(const InNamespace&) = delete;
  InNamespace& operator=(const InNamespace&) = delete;

 private:
  Fd home_;
};

// A TUN device (IPv4 packets, no packet information header) named `name` in
// namespace `ns`, with `address`/`prefix`, the given MTU, up; non-blocking.
Fd new_tun(int ns, const std::string& name, in_addr address, int prefix, int mtu);

// A sysctl under /proc/sys/net in namespace `ns`, e.g. "ipv4/tcp_slow_start_after_idle".
std::string read_net_sysctl(int ns, const std::string& key);
void write_net_sysctl(int ns, const std::string& key, const std::string& value);

// A socket made in namespace `ns`.
Fd socket_in(int ns, int domain, int type, int protocol = 0);

}  // namespace gossipsim::emulate
