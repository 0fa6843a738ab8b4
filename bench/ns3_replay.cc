// ns3_replay: a `gossipsim net replay` file run at packet level in ns-3, for
// bench/fidelity. Built only where ns-3 is installed (Debian's libns3-dev).
//
//   ns3_replay REPLAY.json [--queue-packets N]
//
// The topology is the one gossipsim builds from the file (same builder, same
// seed). Every graph vertex becomes an ns-3 node and every link a
// point-to-point link of its capacity and one-way latency (full duplex, as
// in the flow model). Each compute node gets a host behind its vertex over
// an access link whose two devices run at the node's uplink and downlink.
// Routes are ns-3's global routing with interface metrics equal to the
// link latency in microseconds plus one, i.e. the flow model's shortest
// latency, then fewest hops (ties may still break differently).
//
// Every transfer is a TCP connection of its own (ns-3's default congestion
// control, BulkSend, 1448-byte segments, socket buffers of 4 MiB like
// LV08's window), started at its start time; it finishes when its sink has
// received every byte. Queues are drop-tail, --queue-packets deep (default
// 1000). Control messages are not replayed (their rows are left out).
// Prints the CSV of `gossipsim net replay`: id,src,dst,bytes,kind,start_s,
// finish_s,duration_s (finish_s empty when a transfer did not finish).
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json_reader.h"
#include "input/replay_reader.h"
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

namespace {

struct Progress {
  int64_t bytes = 0, received = 0;
  double finish = -1;
};
std::vector<Progress> progress;

void on_rx(size_t i, ns3::Ptr<const ns3::Packet> p, const ns3::Address&) {
  Progress& x = progress[i];
  x.received += p->GetSize();
  if (x.finish < 0 && x.received >= x.bytes) x.finish = ns3::Simulator::Now().GetSeconds();
}

void set_metric(ns3::Ptr<ns3::NetDevice> device, uint16_t metric) {
  auto ipv4 = device->GetNode()->GetObject<ns3::Ipv4>();
  ipv4->SetMetric(ipv4->GetInterfaceForDevice(device), metric);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ns3;
  if (argc < 2) {
    std::cerr << "usage: ns3_replay REPLAY.json [--queue-packets N]\n";
    return 2;
  }
  const std::string file = argv[1];
  int queue_packets = 1000;
  for (int a = 2; a < argc; a += 2) {
    if (std::string(argv[a]) != "--queue-packets" || a + 1 >= argc) {
      std::cerr << "usage: ns3_replay REPLAY.json [--queue-packets N]\n";
      return 2;
    }
    char* end = nullptr;
    const long q = std::strtol(argv[a + 1], &end, 10);
    if (*argv[a + 1] == '\0' || *end != '\0' || q < 1 || q > 1000000) {
      std::cerr << "ns3_replay: --queue-packets: expected an integer in [1, 1000000]\n";
      return 2;
    }
    queue_packets = static_cast<int>(q);
  }
  gossipsim::ReplayInput in;
  try {
    in = gossipsim::read_replay(gossipsim::JsonReader::parse_file(file), file);
  } catch (const std::exception& e) {
    std::cerr << "ns3_replay: " << e.what() << "\n";
    return 2;
  }
  if (in.transfers.size() > 50000) {  // one TCP port each
    std::cerr << "ns3_replay: " << file << ": /transfers: expected at most 50000 transfers, got " << in.transfers.size()
              << "\n";
    return 2;
  }
  const gossipsim::Graph& g = in.topology.graph;

  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4194304));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4194304));

  NodeContainer vertices, hosts;
  vertices.Create(boost::num_vertices(g));
  hosts.Create(in.topology.node_count());
  InternetStackHelper stack;
  stack.Install(vertices);
  stack.Install(hosts);
  PointToPointHelper p2p;
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(fmt::format("{}p", queue_packets)));
  Ipv4AddressHelper addresses;
  addresses.SetBase("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> host_address(in.topology.node_count());

  for (gossipsim::NodeId n = 0; n < in.topology.node_count(); ++n) {
    const auto& v = g[in.topology.nodes[n]];
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    NetDeviceContainer d = p2p.Install(hosts.Get(n), vertices.Get(in.topology.nodes[n]));
    d.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(v.up.bytes_per_second() * 8))));
    d.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(v.down.bytes_per_second() * 8))));
    host_address[n] = addresses.Assign(d).GetAddress(0);
    addresses.NewNetwork();
    set_metric(d.Get(0), 1);
    set_metric(d.Get(1), 1);
  }
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const auto& e = g[*it];
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(e.latency.ns())));
    p2p.SetDeviceAttribute("DataRate",
                           DataRateValue(DataRate(static_cast<uint64_t>(e.capacity.bytes_per_second() * 8))));
    NetDeviceContainer d = p2p.Install(vertices.Get(boost::source(*it, g)), vertices.Get(boost::target(*it, g)));
    addresses.Assign(d);
    addresses.NewNetwork();
    const auto metric = static_cast<uint16_t>(std::min<int64_t>(65535, e.latency.ns() / 1000 + 1));
    set_metric(d.Get(0), metric);
    set_metric(d.Get(1), metric);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  progress.resize(in.transfers.size());
  double last = 0;
  for (size_t i = 0; i < in.transfers.size(); ++i) {
    const gossipsim::ReplayTransfer& x = in.transfers[i];
    progress[i].bytes = x.bytes;
    if (x.control || x.bytes == 0) continue;
    const uint16_t port = static_cast<uint16_t>(10000 + i);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer s = sink.Install(hosts.Get(x.dst));
    s.Start(Seconds(0));
    s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&on_rx, i));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(host_address[x.dst], port));
    bulk.SetAttribute("MaxBytes", UintegerValue(static_cast<uint64_t>(x.bytes)));
    bulk.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer b = bulk.Install(hosts.Get(x.src));
    b.Start(Seconds(x.start_s));
    last = std::max(last, x.start_s);
  }
  Simulator::Stop(Seconds(last + 3600));
  Simulator::Run();
  Simulator::Destroy();

  std::cout << "id,src,dst,bytes,kind,start_s,finish_s,duration_s\n";
  for (size_t i = 0; i < in.transfers.size(); ++i) {
    const gossipsim::ReplayTransfer& x = in.transfers[i];
    if (x.control) continue;
    const double finish = x.bytes == 0 ? x.start_s : progress[i].finish;
    if (finish < 0)
      std::cout << fmt::format("{},{},{},{},flow,{:.9f},,\n", i, x.src, x.dst, x.bytes, x.start_s);
    else
      std::cout << fmt::format("{},{},{},{},flow,{:.9f},{:.9f},{:.9f}\n", i, x.src, x.dst, x.bytes, x.start_s, finish,
                               finish - x.start_s);
  }
  return 0;
}
