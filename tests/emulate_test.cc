// The emulated WAN (emulate/): latency, rate, queue and teardown, measured
// through it with real sockets, and `net emulate`'s refusals. Skips, saying
// why, where namespaces or TUN devices cannot be made (not root, no
// /dev/net/tun); leaves nothing behind (the namespaces and devices live
// only as long as the descriptors of the process that made them).
//
// Timing checks hold only while the forwarder kept time: a run whose lag
// made it invalid (a loaded machine, a sanitizer build) skips them and says
// so, as bench/fidelity does, instead of failing or passing on bad numbers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "emulate/netns.h"
#include "emulate/probe.h"
#include "emulate/real_transfers.h"
#include "emulate/wan_emulator.h"
#include "test_util.h"

namespace gossipsim::emulate {
namespace {

namespace fs = std::filesystem;

#define SKIP_UNLESS_EMULATOR() \
  if (auto why = unavailable()) GTEST_SKIP() << *why

// Two nodes on one link: access and link at `mbps`, `latency_ms` one way.
Topology pair(double mbps, double latency_ms) {
  LinkDefaults d;
  d.latency_ms = Distribution::constant(latency_ms);
  d.bandwidth_mbps = d.up_mbps = d.down_mbps = Distribution::constant(mbps);
  return test::topology_from(R"({"generator":"complete","nodes":2})", d);
}

sockaddr_in at(NodeId n, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr = EmulatedWan::address(n);
  a.sin_port = htons(port);
  return a;
}

#define SKIP_IF_LATE(wan)                                                                                          \
  if (!(wan).lag().valid)                                                                                          \
  GTEST_SKIP() << "the forwarder fell behind (" << (wan).lag().late << " of " << (wan).lag().events               \
               << " events late, p99 " << (wan).lag().p99_us << " us): timing not checked on this machine now"

// At low load an ICMP echo (84 bytes: 6.7 us on each of the 3 resources
// each way at 100 Mbit/s) comes back after twice the one-way latency plus
// that serialization, within 0.2 ms, and never sooner.
TEST(Emulator, PingRoundTripsTakeTwiceTheOneWayLatency) {
  SKIP_UNLESS_EMULATOR();
  EmulatedWan wan(pair(100, 20));
  std::vector<double> rtts = ping_ms(wan, 0, 1, 30, 0.05);
  ASSERT_GE(rtts.size(), 28u) << "echoes lost";
  SKIP_IF_LATE(wan);
  std::sort(rtts.begin(), rtts.end());
  const double expected = 40 + 6 * 84 * 8 / 100e6 * 1e3;
  EXPECT_GE(rtts.front(), expected - 0.001);
  EXPECT_NEAR(rtts[rtts.size() / 2], expected, 0.2);
}

// One long flow on a warm connection: its goodput is the capacity times the
// payload share of a 1500-byte packet with TCP timestamps (1448 / 1500),
// within 5%.
TEST(Emulator, ALongTcpFlowGetsItsCapacity) {
  SKIP_UNLESS_EMULATOR();
  EmulatedWan wan(pair(50, 10));
  RealTransferOptions opt;
  opt.connections = Connections::kWarm;
  const int64_t size = 12'500'000;  // 2 s at 50 Mbit/s
  std::vector<ReplayTransfer> t = {{0, 1, size, 0.0, false}};
  wan.reset_lag();
  const auto r = run_real_transfers(wan, t, opt);
  ASSERT_GE(r[0].finish_s, 0) << "did not finish";
  SKIP_IF_LATE(wan);
  const double goodput = size / (r[0].finish_s - r[0].start_s - 0.010);  // less the last byte's latency
  const double expected = 50e6 / 8 * 1448.0 / 1500.0;
  EXPECT_NEAR(goodput / expected, 1.0, 0.05) << goodput * 8 / 1e6 << " Mbit/s";
}

// A burst of 40 full packets into a queue of 5: the uplink keeps 5 (the one
// being sent included) and drops 35; nothing is lost further on.
TEST(Emulator, ADropTailQueueKeepsItsLengthAndDropsTheRest) {
  SKIP_UNLESS_EMULATOR();
  EmulatorOptions o;
  o.queue_packets = 5;
  EmulatedWan wan(pair(1, 5), o);  // 1500 bytes take 12 ms: the burst is in before the first leaves
  Fd a = socket_in(wan.ns(0), AF_INET, SOCK_DGRAM), b = socket_in(wan.ns(1), AF_INET, SOCK_DGRAM);
  const sockaddr_in ba = at(1, 7001);
  ASSERT_EQ(::bind(b.get(), reinterpret_cast<const sockaddr*>(&ba), sizeof ba), 0);
  std::vector<char> payload(1472, 'x');  // 1500 bytes with IP and UDP headers
  for (int i = 0; i < 40; ++i)
    ASSERT_EQ(::sendto(a.get(), payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr*>(&ba), sizeof ba),
              static_cast<ssize_t>(payload.size()));
  timeval tv{1, 0};
  ::setsockopt(b.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int received = 0;
  while (::recv(b.get(), payload.data(), payload.size(), 0) > 0) ++received;
  EXPECT_EQ(received, 5);
  EXPECT_EQ(wan.lag().drops, 35);
}

// The network namespaces alive on the machine: those of processes and
// those held only by an open descriptor (as the emulator holds them; lsns
// sees only the first kind).
int namespaces() {
  std::set<std::string> seen;
  std::error_code ec;
  for (const auto& p : fs::directory_iterator("/proc", ec)) {
    const std::string pid = p.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto note = [&](const fs::path& link) {
      std::error_code e;
      const std::string target = fs::read_symlink(link, e).string();
      if (!e && target.rfind("net:[", 0) == 0) seen.insert(target);
    };
    note(p.path() / "ns/net");
    for (const auto& fd : fs::directory_iterator(p.path() / "fd", ec)) note(fd.path());
  }
  return static_cast<int>(seen.size());
}

// Made by a process, gone with it, however it ends: nothing is mounted or
// left persistent, so SIGKILL cleans up as well as a normal exit.
TEST(Emulator, NamespacesDevicesAndProcessesGoWithTheProcessEvenOnSigkill) {
  SKIP_UNLESS_EMULATOR();
  const int before = namespaces();
  {
    EmulatedWan wan(pair(10, 5));
    EXPECT_EQ(namespaces(), before + 2);
  }
  EXPECT_EQ(namespaces(), before);
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-emu-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "pair.json") << test::two_nodes(1, 1, 1, 50);
  std::ofstream(dir / "long.json") << R"({"topology": {"generator": "file", "path": "pair.json"},
    "transfers": [{"src": 0, "dst": 1, "bytes": 100000000, "start_s": 0}]})";
  const std::string cmd = std::string(GOSSIPSIM_BINARY) + " net emulate " + (dir / "long.json").string();
  test::run_shell(cmd + " > /dev/null 2>&1 & echo $! > " + (dir / "pid").string());
  for (int i = 0; i < 100 && namespaces() < before + 2; ++i) ::usleep(100'000);
  EXPECT_EQ(namespaces(), before + 2) << "the emulator did not start";
  int pid = 0;
  std::ifstream(dir / "pid") >> pid;
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 50 && namespaces() > before; ++i) ::usleep(100'000);
  EXPECT_EQ(namespaces(), before) << "namespaces outlived a SIGKILLed emulator";
  EXPECT_NE(test::run_shell("pgrep -f -- '[n]et emulate " + (dir / "long.json").string() + "' > /dev/null"), 0);
  fs::remove_all(dir);
}

// Bad input: one line, exit 2, nothing made.
// A transfer that cannot finish within --time-limit (1 MB at 1 Mbit/s takes
// 8 s; the limit is 0.5 s) is written with empty finish and duration, and
// stderr says how many did not finish.
TEST(Emulator, NetEmulateSaysWhichTransfersDidNotFinish) {
  SKIP_UNLESS_EMULATOR();
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-emu-limit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "slow.json") << R"({"topology": {"generator": "file", "path": "pair.json"},
    "transfers": [{"src": 0, "dst": 1, "bytes": 1000000, "start_s": 0}]})";
  std::ofstream(dir / "pair.json") << test::two_nodes(1, 1, 1, 5);
  std::string out;
  const int rc = test::run_shell(
      "cd " + dir.string() + " && " + GOSSIPSIM_BINARY + " net emulate slow.json --time-limit 0.5 --out slow.csv", &out);
  // 3: the forwarder fell behind on this machine now (a loaded or sanitized
  // build); the result is written all the same, marked invalid.
  EXPECT_TRUE(rc == 0 || rc == 3) << rc << "\n" << out;
  EXPECT_NE(out.find("1 of 1 transfers did not finish within --time-limit 0.5 s"), std::string::npos) << out;
  std::ifstream csv(dir / "slow.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n0,0,1,1000000,flow,0.000000000,,\n"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(Emulator, NetEmulateRefusesWhatItCannotRunInOneLine) {
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-emu-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "pair.json") << test::two_nodes(10000, 10000, 10000, 5);
  std::ofstream(dir / "fast.json") << R"({"topology": {"generator": "file", "path": "pair.json"},
    "transfers": [{"src": 0, "dst": 1, "bytes": 1000, "start_s": 0}]})";
  std::ofstream(dir / "unknown.json") << R"({"topology": {"generator": "file", "path": "pair.json"},
    "transfers": [{"src": 0, "dst": 7, "bytes": 1000, "start_s": 0}]})";
  const std::string bin = GOSSIPSIM_BINARY;
  auto one_line = [&](const std::string& args, const std::string& expected) {
    std::string out;
    EXPECT_EQ(test::run_shell("cd " + dir.string() + " && " + bin + " net emulate " + args, &out), 2) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  };
  const int before = namespaces();
  one_line("unknown.json", "unknown.json: /transfers/0/dst: expected a node id in [0, 2) or its name n0..n1, other than src");
  one_line("fast.json", "fast.json: /transfers/0: expected a route the emulator keeps time on: a bottleneck of at "
                        "most 200 Mbit/s (--max-rate-mbps); this one's is 10000 Mbit/s");
  one_line("fast.json --max-rate-mbps 0", "--max-rate-mbps: expected a number of Mbit/s in (0, 1e5]");
  one_line("fast.json --queue-packets 0", "--queue-packets: expected an integer in [1, 1000000]");
  // Without root (any user here, as root too via setpriv): the machine cannot run it.
  std::string out;
  const int rc = test::run_shell("cd " + dir.string() + " && setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                     bin + " net emulate fast.json --max-rate-mbps 20000",
                                 &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("net emulate: expected a machine that can run it: the emulated WAN needs root"),
            std::string::npos)
      << out;
  EXPECT_EQ(namespaces(), before);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gossipsim::emulate
