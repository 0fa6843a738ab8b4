#include "emulate/netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace gossipsim::emulate {

namespace {

[[noreturn]] void fail(const std::string& what) {
  const int error = errno;
  throw std::runtime_error("emulated WAN: " + what + ": " + std::strerror(error) + open_files_advice(error));
}

void set_flags_up(int sock, const char* name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (::ioctl(sock, SIOCGIFFLAGS, &ifr) != 0) fail(std::string("reading the flags of ") + name);
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (::ioctl(sock, SIOCSIFFLAGS, &ifr) != 0) fail(std::string("bringing up ") + name);
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

uint64_t raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  return r.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(r.rlim_cur);
}

namespace {
std::atomic<uint64_t> g_files_needed{0};
}  // namespace

void note_open_files_needed(uint64_t files) { g_files_needed = files; }

uint64_t open_files() {
  // Counted by probing each descriptor: listing /proc/self/fd takes one
  // more, which a process at its limit does not have.
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  const uint64_t most = std::min<uint64_t>(r.rlim_cur, 1 << 20);
  uint64_t n = 0;
  for (uint64_t fd = 0; fd < most; ++fd) n += ::fcntl(static_cast<int>(fd), F_GETFD) != -1 ? 1 : 0;
  return n;
}

std::string open_files_advice(int error) {
  if (error != EMFILE && error != ENFILE) return "";
  if (error == ENFILE)
    return fmt::format(" (the whole system is out of open files, {} held by this process: fewer transfers at once)",
                       open_files());
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  const uint64_t needed = std::max<uint64_t>(g_files_needed, 2 * static_cast<uint64_t>(r.rlim_cur));
  return fmt::format(
      " (this process may hold {} open files, the hard limit of ulimit -n, and holds {}; each "
      "transfer in flight takes two, and this run may need up to {}: raise the hard limit, e.g. "
      "ulimit -Hn {} as root, or run fewer transfers at once)",
      r.rlim_cur, open_files(), needed, needed);
}

std::optional<std::string> unavailable() {
  if (::geteuid() != 0) return "the emulated WAN needs root (network namespaces and TUN devices)";
  struct stat st;
  if (::stat("/dev/net/tun", &st) != 0) return "the emulated WAN needs /dev/net/tun, which this machine lacks";
  const int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (tun < 0) return std::string("the emulated WAN cannot open /dev/net/tun: ") + std::strerror(errno);
  ::close(tun);
  try {
    Fd ns = new_namespace();
  } catch (const std::exception& e) {
    return std::string("the emulated WAN cannot make a network namespace here (") + e.what() + ")";
  }
  return std::nullopt;
}

Fd new_namespace() {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) fail("a pipe");
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    const char ok = ::unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(1);
    ::pause();  // until the parent has opened the namespace and kills us
    ::_exit(0);
  }
  ::close(ready[1]);
  char ok = 'n';
  const ssize_t n = ::read(ready[0], &ok, 1);
  ::close(ready[0]);
  Fd ns;
  if (n == 1 && ok == 'y')
    ns = Fd(::open(("/proc/" + std::to_string(child) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
  const int saved = errno;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  errno = saved;
  if (n != 1 || ok != 'y') {
    errno = EPERM;
    fail("unshare(CLONE_NEWNET)");
  }
  if (!ns) fail("opening the namespace of a child");
  InNamespace in(ns.get());
  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) fail("a socket");
  set_flags_up(sock.get(), "lo");
  return ns;
}

InNamespace::InNamespace(int ns) {
  home_ = Fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!home_) fail("opening this thread's namespace");
  if (::setns(ns, CLONE_NEWNET) != 0) fail("entering a namespace");
}

InNamespace::~InNamespace() {
  if (home_) ::setns(home_.get(), CLONE_NEWNET);
}

Fd new_tun(int ns, const std::string& name, in_addr address, int prefix, int mtu) {
  InNamespace in(ns);
  Fd tun(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!tun) fail("opening /dev/net/tun");
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(tun.get(), TUNSETIFF, &ifr) != 0) fail("creating TUN device " + name);
  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) fail("a socket");
  auto set_addr = [&](unsigned long request, in_addr a, const char* what) {
    ifreq r{};
    std::strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
    auto* sin = reinterpret_cast<sockaddr_in*>(&r.ifr_addr);
    sin->sin_family = AF_INET;
    sin->sin_addr = a;
    if (::ioctl(sock.get(), request, &r) != 0) fail(std::string("setting the ") + what + " of " + name);
  };
  set_addr(SIOCSIFADDR, address, "address");
  in_addr mask{htonl(prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix))};
  set_addr(SIOCSIFNETMASK, mask, "netmask");
  ifreq m{};
  std::strncpy(m.ifr_name, name.c_str(), IFNAMSIZ - 1);
  m.ifr_mtu = mtu;
  if (::ioctl(sock.get(), SIOCSIFMTU, &m) != 0) fail("setting the MTU of " + name);
  set_flags_up(sock.get(), name.c_str());
  return tun;
}

std::string read_net_sysctl(int ns, const std::string& key) {
  InNamespace in(ns);
  std::ifstream f("/proc/sys/net/" + key);
  std::string v;
  std::getline(f, v);
  return v;
}

void write_net_sysctl(int ns, const std::string& key, const std::string& value) {
  InNamespace in(ns);
  std::ofstream f("/proc/sys/net/" + key);
  f << value << "\n";
  f.flush();
  if (!f) fail("writing /proc/sys/net/" + key);
}

Fd socket_in(int ns, int domain, int type, int protocol) {
  InNamespace in(ns);
  Fd s(::socket(domain, type | SOCK_CLOEXEC, protocol));
  if (!s) fail("a socket");
  return s;
}

}  // namespace gossipsim::emulate
