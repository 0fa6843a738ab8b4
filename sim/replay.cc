#include "sim/replay.h"

#include <fmt/format.h>

#include "sim/network.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace gossipsim {

std::string replay_transfers(const nlohmann::json& doc, const std::string& file, const SizeLimits& limits) {
  JsonReader r(doc, file);
  r.expect_object();
  uint64_t seed = static_cast<uint64_t>(r.integer("seed", 1));
  NetworkOptions network;
  if (auto n = r.child("network")) network = parse_network(*n);
  Topology topo = build_topology(r.at("topology"), network.links, Streams(seed), limits);
  Simulator sim;
  Network net(sim, topo, network.model);
  struct Row {
    FlowRecord rec;
    bool control = false;
  };
  JsonReader list = r.at("transfers");
  std::vector<Row> rows(list.array_size());
  for (size_t i = 0; i < rows.size(); ++i) {
    JsonReader t = list.element(i);
    // Ranges are checked on the 64-bit values, before any narrowing.
    const int64_t src64 = t.integer("src"), dst64 = t.integer("dst");
    t.require(src64 >= 0 && src64 < topo.node_count(), "src", fmt::format("a node id in [0, {})", topo.node_count()));
    t.require(dst64 >= 0 && dst64 < topo.node_count() && dst64 != src64, "dst",
              fmt::format("a node id in [0, {}) other than src", topo.node_count()));
    const NodeId src = static_cast<NodeId>(src64), dst = static_cast<NodeId>(dst64);
    int64_t size = t.integer("bytes", 0);
    t.require(size >= 0 && size <= kMaxReplayBytes, "bytes", fmt::format("an integer in [0, {}]", kMaxReplayBytes));
    double start = t.number("start_s", 0.0);
    t.require(start >= 0 && start <= kMaxVirtualSeconds, "start_s",
              fmt::format("a number of seconds in [0, {:g}]", kMaxVirtualSeconds));
    bool control = t.boolean("control", false);
    t.done();
    // Alone on its route the transfer would take this long; sharing only
    // slows it by the number of flows, so this bounds what time can reach.
    const double alone = net.route(src, dst).latency.seconds() +
                         (control ? 0.0 : static_cast<double>(size) / net.route(src, dst).bottleneck.bytes_per_second());
    t.require(start + alone * static_cast<double>(rows.size()) <= kMaxVirtualSeconds, "bytes",
              fmt::format("a transfer that ends within {:g} virtual seconds (this one takes {:.4g} s alone on its "
                          "route)",
                          kMaxVirtualSeconds, alone));
    rows[i].control = control;
    rows[i].rec.src = src;
    rows[i].rec.dst = dst;
    rows[i].rec.size = bytes(size);
    rows[i].rec.start = seconds(start);
    sim.schedule_at(seconds(start), [&, i, src, dst, size, control] {
      if (control) {
        net.send_control(src, dst, [&, i] { rows[i].rec.finish = sim.now(); });
      } else {
        net.start_flow(src, dst, bytes(size), [&, i](const FlowRecord& f) { rows[i].rec = f; });
      }
    });
  }
  r.string("description", "");
  r.done();
  sim.run();
  std::string csv = "id,src,dst,bytes,kind,start_s,finish_s,duration_s\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const FlowRecord& f = rows[i].rec;
    csv += fmt::format("{},{},{},{},{},{:.9f},{:.9f},{:.9f}\n", i, f.src, f.dst, f.size.count,
                       rows[i].control ? "control" : "flow", f.start.seconds(), f.finish.seconds(),
                       (f.finish - f.start).seconds());
  }
  return csv;
}

}  // namespace gossipsim
