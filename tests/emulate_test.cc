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
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "emulate/netns.h"
#include "emulate/probe.h"
#include "emulate/real_network.h"
#include "emulate/real_transfers.h"
#include "emulate/sockets.h"
#include "emulate/wan_emulator.h"
#include "sim/network.h"
#include "sim/simulator.h"
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

#define SKIP_IF_LATE(wan)                                                                           \
  if (!(wan).lag().valid)                                                                           \
  GTEST_SKIP() << "the forwarder fell behind (" << (wan).lag().late << " of " << (wan).lag().events \
               << " events late, p99 " << (wan).lag().p99_us << " us): timing not checked on this machine now"

// At low load an ICMP echo (84 bytes: 6.7 us on each of the 3 resources
// each way at 100 Mbit/s) comes back after twice the one-way latency plus
// that serialization, within 0.2 ms, and never sooner.
// Warm-ups share no resource in a round, neither their data's nor their
// ACKs': on test::kDumbbell (a, c behind r1; b, d behind r2), a->b
// and c->d share the middle link and go in two rounds, so do a->b and b->a
// (one's data, the other's ACKs); a->c and b->d, on disjoint paths, go
// together. (No emulator: the routes are the simulator's, as the emulator's.)
TEST(WarmUp, RoundsKeepEveryWarmUpAloneOnItsPath) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("gossipsim-warm-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << test::kDumbbell;
  Topology t = test::topology_from(nlohmann::json{{"generator", "file"}, {"path", file.string()}}.dump());
  std::filesystem::remove(file);
  Simulator sim;
  Network net(sim, t);
  auto resources = [&](NodeId s, NodeId d) {
    std::vector<int> r;
    for (const Network::Hop& h : net.hops(s, d)) r.push_back(h.resource);
    return r;
  };
  const NodeId a = 0, b = 1, c = 2, d = 3;
  using Rounds = std::vector<std::vector<std::pair<NodeId, NodeId>>>;
  EXPECT_EQ(emulate::warm_rounds({{a, b}, {c, d}}, resources), (Rounds{{{a, b}}, {{c, d}}}));
  EXPECT_EQ(emulate::warm_rounds({{a, b}, {b, a}}, resources), (Rounds{{{a, b}}, {{b, a}}}));
  EXPECT_EQ(emulate::warm_rounds({{a, c}, {b, d}}, resources), (Rounds{{{a, c}, {b, d}}}));
  // Every ordered pair of the four: each round's resources are disjoint, and
  // every pair is warmed once.
  std::set<std::pair<NodeId, NodeId>> all;
  for (NodeId s = 0; s < 4; ++s)
    for (NodeId e = 0; e < 4; ++e)
      if (s != e) all.insert({s, e});
  size_t warmed = 0;
  for (const auto& round : emulate::warm_rounds(all, resources)) {
    std::multiset<int> used;
    for (const auto& [s, e] : round) {
      for (int r : resources(s, e)) used.insert(r);
      for (int r : resources(e, s)) used.insert(r);
    }
    EXPECT_EQ(std::set<int>(used.begin(), used.end()).size(), used.size());
    warmed += round.size();
  }
  EXPECT_EQ(warmed, all.size());
}

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
      "cd " + dir.string() + " && " + GOSSIPSIM_BINARY + " net emulate slow.json --time-limit 0.5 --out slow.csv",
      &out);
  // 3: the forwarder fell behind on this machine now (a loaded or sanitized
  // build); the result is written all the same, marked invalid.
  EXPECT_TRUE(rc == 0 || rc == 3) << rc << "\n" << out;
  EXPECT_NE(out.find("1 of 1 transfers did not finish within --time-limit 0.5 s"), std::string::npos) << out;
  std::ifstream csv(dir / "slow.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n0,0,1,1000000,flow,0.000000000,,\n"), std::string::npos) << text;
  fs::remove_all(dir);
}

// 600 transfers at once take 1,200 sockets: past the usual soft limit of
// open files, they failed with "Too many open files". The soft limit is
// raised to the hard one; where even that is short, the one line says the
// limit and what the run may need.
TEST(Emulator, NetEmulateRaisesTheOpenFileLimitAndSaysWhenEvenThatIsShort) {
  SKIP_UNLESS_EMULATOR();
  const fs::path dir = fs::temp_directory_path() / ("gossipsim-emu-files-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json transfers = nlohmann::json::array();
  for (int i = 0; i < 600; ++i)
    transfers.push_back({{"src", i % 2}, {"dst", 1 - i % 2}, {"bytes", 20000}, {"start_s", 0}});
  std::ofstream(dir / "many.json") << nlohmann::json{
      {"topology", {{"generator", "file"}, {"path", "pair.json"}}},
      {"transfers", transfers}}.dump();
  std::ofstream(dir / "pair.json") << test::two_nodes(50, 50, 50, 5);
  const std::string cd = "cd " + dir.string() + " && ";
  std::string out;
  int rc = test::run_shell(cd + "ulimit -S -n 256 && " + GOSSIPSIM_BINARY + " net emulate many.json --out a.csv", &out);
  EXPECT_TRUE(rc == 0 || rc == 3) << rc << "\n" << out;  // 3: the forwarder fell behind on a loaded machine
  EXPECT_EQ(out.find("Too many open files"), std::string::npos) << out;
  rc = test::run_shell(cd + "ulimit -n 300 && " + GOSSIPSIM_BINARY + " net emulate many.json --out b.csv", &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("600 transfers take up to 1456 open files if they all overlap; this process may hold 300"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Too many open files (this process may hold 300 open files, the hard limit of ulimit -n, and "
                     "holds 300; each transfer in flight takes two, and this run may need up to 1456"),
            std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists(dir / "b.csv"));
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
  one_line("unknown.json",
           "unknown.json: /transfers/0/dst: expected a node id in [0, 2) or its name n0..n1, other than src");
  one_line("fast.json",
           "fast.json: /transfers/0: expected a route the emulator keeps time on: a bottleneck of at "
           "most 200 Mbit/s (--max-rate-mbps); this one's is 10000 Mbit/s");
  one_line("fast.json --max-rate-mbps 0", "--max-rate-mbps: expected a number of Mbit/s in (0, 1e5]");
  one_line("fast.json --queue-packets 0", "--queue-packets: expected an integer in [1, 1000000]");
  // Without root (any user here, as root too via setpriv): the machine cannot run it.
  std::string out;
  const int rc = test::run_shell("cd " + dir.string() + " && setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                     bin + " net emulate fast.json --max-rate-mbps 20000",
                                 &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("net emulate: expected a machine that can run it: the emulated WAN needs root"), std::string::npos)
      << out;
  EXPECT_EQ(namespaces(), before);
  fs::remove_all(dir);
}

// ---- gossipsim run --real (emulate/real_network.h) ----

// A folder of its own for a real-run test, removed at the end.
struct RealRunDir {
  explicit RealRunDir(const std::string& name)
      : dir(fs::temp_directory_path() / ("gossipsim-real-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~RealRunDir() { fs::remove_all(dir); }
  // Writes `scenario` as s.json and runs `gossipsim ARGS` in the folder.
  int run(const nlohmann::json& scenario, const std::string& args, std::string* out) const {
    std::ofstream(dir / "s.json") << scenario.dump(2);
    return test::run_shell("cd " + dir.string() + " && " + GOSSIPSIM_BINARY + " " + args, out);
  }
  nlohmann::json summary(const std::string& result) const {
    return nlohmann::json::parse(std::ifstream(dir / result / "summary.json"));
  }
  fs::path dir;
};

// Two nodes on one link of `latency_ms` one way, access and link at 100
// Mbit/s, 50 ms iterations without jitter, 1,000-byte models, timeline only.
nlohmann::json real_pair(double latency_ms, const std::string& method, double stop_s) {
  return {{"name", "real-pair"},
          {"topology", {{"generator", "complete"}, {"nodes", 2}}},
          {"network",
           {{"access", {{"up_mbps", 100}, {"down_mbps", 100}}},
            {"links", {{"bandwidth_mbps", 100}, {"latency_ms", latency_ms}}}}},
          {"compute", {{"iteration_ms", 50}}},
          {"workload", {{"dataset", "synthetic"}, {"model", "mlp"}, {"model_bytes", 1000}}},
          {"methods", {method}},
          {"stop", {{"virtual_s", stop_s}}},
          {"eval", {{"every_s", 1}}}};
}

// The median of transfers.csv's finish_s - start_s.
double median_transfer_s(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<double> d;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (f.size() > 6 && !f[6].empty()) d.push_back(std::stod(f[6]) - std::stod(f[5]));
  }
  if (d.empty()) return -1;
  std::sort(d.begin(), d.end());
  return d[d.size() / 2];
}

// The dilated topology, by hand: latencies times k, capacities over k.
TEST(Emulator, ADilatedTopologyHasItsLatenciesTimesKAndItsCapacitiesOverK) {
  const Topology t = pair(100, 20);
  const Topology d = dilated(t, 4);
  for (auto e : boost::make_iterator_range(boost::edges(d.graph))) {
    EXPECT_EQ(d.graph[e].latency.ns(), 80'000'000);
    EXPECT_DOUBLE_EQ(d.graph[e].capacity.megabits_per_second(), 25);
  }
  for (NodeId n = 0; n < 2; ++n) {
    EXPECT_DOUBLE_EQ(d.graph[d.nodes[n]].up.megabits_per_second(), 25);
    EXPECT_DOUBLE_EQ(d.graph[d.nodes[n]].down.megabits_per_second(), 25);
  }
}

// A 1,000-byte model (1,016 bytes with its header: one segment) over a
// fresh connection arrives after the handshake's round trip and one more
// way: 3 x 30 ms, plus its serialization on three resources at 100 Mbit/s
// (about 0.26 ms); over a warm one after one way, 30 ms. Dilated (2, 3),
// the same in virtual time. Overlap never waits for the network, so its
// iterations end every 50 ms whatever the transfers take: by the last
// evaluation, at 3 s (which runs before the iterations that end at 3 s, as
// in a simulation), 59 per node, 118 in all.
TEST(Emulator, ARealTransferTakesItsRoundTripsAndIterationsKeepTheirTime) {
  SKIP_UNLESS_EMULATOR();
  RealRunDir d("timing");
  for (const auto& [connections, dilation, expected_ms] :
       std::vector<std::tuple<std::string, double, double>>{{"fresh", 2, 90}, {"warm", 3, 30}}) {
    nlohmann::json sc = real_pair(30, "gossip-overlap", 3);
    sc["network"]["real"] = {{"connections", connections}, {"dilation", dilation}, {"max_lag_ms", 1}};
    std::string out;
    const int rc = d.run(sc, "run s.json --real --kernels none --quiet --out " + connections, &out);
    ASSERT_TRUE(rc == 0 || rc == 3) << out;
    const nlohmann::json s = d.summary(connections);
    EXPECT_EQ(s["real"], true);
    EXPECT_EQ(s["deterministic"], false);
    const nlohmann::json& m = s["methods"][0];
    EXPECT_EQ(m["iterations"], 118) << connections;
    EXPECT_EQ(m["real"]["connections"], connections);
    EXPECT_EQ(m["real"]["dilation"], dilation);
    EXPECT_GT(m["transfers"].get<int>(), 20);
    if (rc == 3) {
      std::cout << "timing not checked (" << connections << "): " << m["real"]["invalid_because"] << "\n";
      continue;
    }
    const double median_ms = 1e3 * median_transfer_s(d.dir / connections / "gossip-overlap" / "transfers.csv");
    EXPECT_GE(median_ms, expected_ms) << connections;
    EXPECT_LE(median_ms, expected_ms + 2) << connections;
  }
}

// Every method runs for real and writes the usual outputs; plot draws the
// real run beside the simulation and writes the table of differences, or,
// where this machine made the real run invalid, refuses it in one line.
TEST(Emulator, EveryMethodRunsForRealAndPlotComparesItWithTheSimulation) {
  SKIP_UNLESS_EMULATOR();
  RealRunDir d("methods");
  const std::vector<std::string> methods = {"gossip", "gossip-overlap", "gossip-scheduled", "gosgd", "dpsgd", "adpsgd",
                                            "sgp",    "osgp",           "allreduce",        "single"};
  nlohmann::json sc = real_pair(20, "gossip", 1.5);
  sc["topology"]["nodes"] = 3;
  sc["methods"] = methods;
  sc["network"]["real"] = {{"max_lag_ms", 50}};
  std::string out;
  const int rc = d.run(sc, "run s.json --real --kernels none --quiet --out real", &out);
  ASSERT_TRUE(rc == 0 || rc == 3) << out;
  ASSERT_EQ(d.run(sc, "run s.json --kernels none --quiet --out sim", &out), 0) << out;
  const nlohmann::json s = d.summary("real");
  ASSERT_EQ(s["methods"].size(), methods.size());
  for (const auto& m : s["methods"]) {
    const std::string label = m["label"];
    EXPECT_TRUE(fs::exists(d.dir / "real" / label / "transfers.csv")) << label;
    EXPECT_TRUE(fs::exists(d.dir / "real" / label / "metrics.csv")) << label;
    EXPECT_EQ(m["real"]["deterministic"], false) << label;
    EXPECT_GT(m["real"]["events"].get<int>(), 0) << label;
    EXPECT_NEAR(m["virtual_s"].get<double>(), 1.5, 1e-9) << label;
    if (label != "single") EXPECT_GT(m["transfers"].get<int>(), 0) << label;
  }
  const int plot =
      test::run_shell("cd " + d.dir.string() + " && " + GOSSIPSIM_BINARY + " plot sim real --out cmp", &out);
  if (rc == 3) {
    EXPECT_EQ(plot, 2) << out;
    EXPECT_NE(out.find("is marked invalid"), std::string::npos) << out;
    return;
  }
  ASSERT_EQ(plot, 0) << out;
  std::ifstream md(d.dir / "cmp" / "sim_vs_real.md");
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const std::string& label : {"gossip", "gossip-scheduled", "allreduce"})
    EXPECT_NE(text.find("## " + label + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| real | 1 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| sim maxmin | 1 |"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(d.dir / "cmp" / "activity.png"));
}

// The lag monitor: a bound no real run can meet (1e-6 virtual ms) marks the
// run invalid in its summary, says so on stderr and exits 3, the outputs
// written all the same.
TEST(Emulator, ARunWhoseEventsFireLateIsMarkedInvalid) {
  SKIP_UNLESS_EMULATOR();
  RealRunDir d("lag");
  nlohmann::json sc = real_pair(5, "gossip-overlap", 1);
  sc["network"]["real"] = {{"max_lag_ms", 1e-6}};
  std::string out;
  EXPECT_EQ(d.run(sc, "run s.json --real --kernels none --quiet --out r", &out), 3) << out;
  EXPECT_NE(out.find("gossipsim: run --real: gossip-overlap is invalid: events fired"), std::string::npos) << out;
  const nlohmann::json m = d.summary("r")["methods"][0];
  EXPECT_EQ(m["real"]["valid"], false);
  EXPECT_NE(m["real"]["invalid_because"].get<std::string>().find("above max_lag_ms 1e-06"), std::string::npos);
  EXPECT_GT(m["real"]["late_events"].get<int>(), 0);
}

// SIGINT stops a real run at its next event: what was done is written,
// marked incomplete, exit 130. SIGKILL leaves no result. Either way no
// namespace, device or process outlives it.
TEST(Emulator, ARealRunLeavesNothingBehindAfterSigintOrSigkill) {
  SKIP_UNLESS_EMULATOR();
  RealRunDir d("signals");
  std::ofstream(d.dir / "s.json") << real_pair(10, "gossip-overlap", 120).dump(2);
  const int before = namespaces();
  for (const int sig : {SIGINT, SIGKILL}) {
    const std::string out = sig == SIGINT ? "int" : "kill";
    test::run_shell("cd " + d.dir.string() + " && { " + GOSSIPSIM_BINARY +
                    " run s.json --real --kernels none --quiet --out " + out + " > " + out +
                    ".log 2>&1 & echo $! > pid; }");
    int pid = 0;
    std::ifstream(d.dir / "pid") >> pid;
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 100 && namespaces() < before + 2; ++i) ::usleep(100'000);
    EXPECT_EQ(namespaces(), before + 2) << "the real run did not start";
    ::usleep(500'000);
    ::kill(pid, sig);
    for (int i = 0; i < 100 && (::kill(pid, 0) == 0 || namespaces() > before); ++i) ::usleep(100'000);
    EXPECT_EQ(namespaces(), before) << "namespaces outlived a real run stopped by signal " << sig;
    EXPECT_NE(test::run_shell("pgrep -f -- '[r]un s.json --real --kernels none --quiet --out " + out + "' > /dev/null"),
              0);
    if (sig == SIGINT) {
      std::ifstream log(d.dir / "int.log");
      const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      EXPECT_NE(text.find("a real run is not resumed"), std::string::npos) << text;
      const nlohmann::json s = d.summary("int");
      EXPECT_EQ(s["complete"], false);
      EXPECT_EQ(s["methods"][0]["stop_reason"], "interrupted");
    } else {
      EXPECT_FALSE(fs::exists(d.dir / "kill" / "summary.json"));
    }
  }
}

// What run --real cannot run: one line naming the scenario path or option,
// exit 2, no result folder, nothing made.
TEST(Emulator, RunRealRefusesWhatItCannotRunInOneLine) {
  RealRunDir d("refusals");
  const int before = namespaces();
  auto one_line = [&](const nlohmann::json& sc, const std::string& args, const std::string& expected) {
    std::string out;
    EXPECT_EQ(d.run(sc, "run s.json --real --kernels none --quiet --out r " + args, &out), 2) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_FALSE(fs::exists(d.dir / "r")) << expected;
  };
  const nlohmann::json base = real_pair(10, "gossip", 2);
  nlohmann::json churn = base;
  churn["churn"] = {{{"nodes", {1}}, {"events", {{1, "crash"}}}}};
  one_line(churn, "", "s.json: /churn: expected no churn with run --real");
  nlohmann::json profiles = base;
  profiles["network"]["profiles"] = {{{"link", {"n0", "n1"}}, {"capacity_mbps", {{"points", {{1, 50}}}}}}};
  one_line(profiles, "", "s.json: /network/profiles: expected no profiles with run --real");
  nlohmann::json fast = base;
  fast["network"]["access"] = {{"up_mbps", 1000}, {"down_mbps", 1000}};
  fast["network"]["links"]["bandwidth_mbps"] = 1000;
  one_line(fast, "",
           "s.json: /network/real/dilation: expected a dilation that brings every route to at most 200 "
           "Mbit/s, where the emulator keeps time on this machine: the route n0 to n1 has a bottleneck of "
           "1000 Mbit/s, so at least 5");
  nlohmann::json vegas = base;
  vegas["network"]["real"] = {{"congestion", "vegas9"}};
  one_line(vegas, "", "s.json: /network/real/congestion: expected \"default\" or a congestion control this kernel has");
  one_line(base, "--checkpoint-every 1", "--checkpoint-every: expected no checkpoints with --real");
  std::string out;
  EXPECT_EQ(d.run(base, "run --real --resume r", &out), 2) << out;
  EXPECT_NE(out.find("--resume: expected a simulated run: a real run (--real) is not resumed"), std::string::npos)
      << out;
  // Without root: the machine cannot run it.
  std::ofstream(d.dir / "s.json") << base.dump(2);
  const int rc = test::run_shell("cd " + d.dir.string() + " && setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                     GOSSIPSIM_BINARY +
                                     " run s.json --real --kernels none --quiet --out /tmp/gossipsim-real-nobody",
                                 &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("run --real: expected a machine that can run it: the emulated WAN needs root"), std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists("/tmp/gossipsim-real-nobody"));
  EXPECT_EQ(namespaces(), before);
}

// scripts/sim-vs-real says what it does not know in one line, exit 2,
// before it sets up, builds or runs anything (no root needed to refuse).
TEST(SimVsReal, RefusesWhatItDoesNotKnowBeforeRunningAnything) {
  const std::string script = std::string(GOSSIPSIM_SOURCE_DIR) + "/scripts/sim-vs-real";
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"--congestion vegas", "--congestion: expected bbr, cubic or reno, got 'vegas'"},
           {"--methods gossip,foo", "--methods: expected some of gossip,gossip-overlap,gossip-scheduled,allreduce"},
           {"--methods ''", "--methods: expected some of"},
           {"--congestion", "--congestion: expected a value"},
           {"--connections persistent", "--connections: expected fresh or warm"},
           {"--bogus 1", "usage: scripts/sim-vs-real"}}) {
    std::string out;
    EXPECT_EQ(test::run_shell(script + " --out /nonexistent/never " + args, &out), 2) << args << ": " << out;
    EXPECT_NE(out.find(said), std::string::npos) << args << ": " << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << args << ": " << out;
  }
  EXPECT_FALSE(fs::exists("/nonexistent/never"));
}

}  // namespace
}  // namespace gossipsim::emulate
