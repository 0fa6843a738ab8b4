#include "input/replay_reader.h"

#include <fmt/format.h>

#include "input/scenario_reader.h"
#include "sim/network.h"
#include "sim/simulator.h"

namespace gossipsim {

ReplayInput read_replay(const nlohmann::json& doc, const std::string& file, const SizeLimits& limits) {
  JsonReader r(doc, file);
  r.expect_object();
  uint64_t seed = static_cast<uint64_t>(r.integer("seed", 1));
  NetworkOptions network;
  if (auto n = r.child("network")) network = parse_network(*n);
  ReplayInput in{build_topology(r.at("topology"), network.links, Streams(seed), limits), network.model, {}};
  Simulator sim;
  Network net(sim, in.topology, in.model);  // for the routes the checks need
  const NodeId nodes = in.topology.node_count();
  JsonReader list = r.at("transfers");
  in.transfers.resize(list.array_size());
  for (size_t i = 0; i < in.transfers.size(); ++i) {
    JsonReader t = list.element(i);
    // Ranges are checked on the 64-bit values, before any narrowing.
    // A node id, or its name in every output ("n3", as transfers.csv writes it).
    auto node = [&](const char* key) -> int64_t {
      if (!t.has(key) || !t.at(key).value().is_string()) return t.integer(key);
      const std::string s = t.string(key);
      int64_t id = -1;
      if (s.size() > 1 && s.size() < 12 && s[0] == 'n' && s.find_first_not_of("0123456789", 1) == std::string::npos)
        id = std::stoll(s.substr(1));
      return id;
    };
    const int64_t src64 = node("src"), dst64 = node("dst");
    t.require(src64 >= 0 && src64 < nodes, "src",
              fmt::format("a node id in [0, {}) or its name n0..n{}", nodes, nodes - 1));
    t.require(dst64 >= 0 && dst64 < nodes && dst64 != src64, "dst",
              fmt::format("a node id in [0, {}) or its name n0..n{}, other than src", nodes, nodes - 1));
    ReplayTransfer& x = in.transfers[i];
    x.src = static_cast<NodeId>(src64);
    x.dst = static_cast<NodeId>(dst64);
    x.bytes = t.integer("bytes", 0);
    t.require(x.bytes >= 0 && x.bytes <= kMaxReplayBytes, "bytes",
              fmt::format("an integer in [0, {}]", kMaxReplayBytes));
    x.start_s = t.number("start_s", 0.0);
    t.require(x.start_s >= 0 && x.start_s <= kMaxVirtualSeconds, "start_s",
              fmt::format("a number of seconds in [0, {:g}]", kMaxVirtualSeconds));
    x.control = t.boolean("control", false);
    t.done();
    // Alone on its route the transfer would take this long; sharing only
    // slows it by the number of flows, so this bounds what time can reach.
    const double alone = net.alone_seconds(x.src, x.dst, x.control ? 0 : x.bytes);
    t.require(x.start_s + alone * static_cast<double>(in.transfers.size()) <= kMaxVirtualSeconds, "bytes",
              fmt::format("a transfer that ends within {:g} virtual seconds (this one takes {:.4g} s alone on its "
                          "route)",
                          kMaxVirtualSeconds, alone));
  }
  r.string("description", "");
  r.done();
  return in;
}

}  // namespace gossipsim
