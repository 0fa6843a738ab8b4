// The emulated WAN's own fidelity on this machine (emulate/), printed as one
// JSON object for bench/fidelity:
//   ping   ICMP round trips between two nodes against twice the one-way
//          latency plus serialization, at low load (30 echoes 50 ms apart);
//   rate   one long TCP flow on a warm connection at capacities from 10 to
//          800 Mbit/s: goodput against capacity x 1448 / 1500, the data
//          packets per second carried, and the forwarder's lag (how late it handled
//          each event) with the run's validity. Where the lag grows, the
//          emulator no longer keeps time: that rate is its limit here.
//
//     build/bench/emulator_bench [--quick | --check]
//
// --check prints why the emulator cannot run here, or nothing.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulate/probe.h"
#include "emulate/real_transfers.h"
#include "emulate/wan_emulator.h"
#include "topologies/builder.h"

using namespace gossipsim;
using namespace gossipsim::emulate;

namespace {

Topology pair(double mbps, double latency_ms) {
  LinkDefaults d;
  d.latency_ms = Distribution::constant(latency_ms);
  d.bandwidth_mbps = d.up_mbps = d.down_mbps = Distribution::constant(mbps);
  nlohmann::json j = {{"generator", "complete"}, {"nodes", 2}};
  return build_topology(JsonReader(j, "emulator_bench"), d, Streams(1));
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

nlohmann::json lag_json(const LagStats& l) {
  return {{"events", l.events}, {"late", l.late},   {"p50_us", l.p50_us}, {"p99_us", l.p99_us},
          {"max_us", l.max_us}, {"drops", l.drops}, {"valid", l.valid}};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && std::strcmp(argv[1], "--check") == 0) {  // why it cannot run here; nothing if it can
    if (auto why = unavailable()) fmt::print("{}\n", *why);
    return 0;
  }
  if (auto why = unavailable()) {
    fmt::print("{}\n", nlohmann::json{{"unavailable", *why}}.dump());
    return 0;
  }
  nlohmann::json out;
  for (double latency_ms : {5.0, 25.0, 75.0}) {
    EmulatedWan wan(pair(100, latency_ms));
    const std::vector<double> rtts = ping_ms(wan, 0, 1, 30, 0.05);
    const double expected = 2 * latency_ms + 6 * 84 * 8 / 100e6 * 1e3;
    std::vector<double> error;
    for (double r : rtts) error.push_back(r - expected);
    out["ping"].push_back({{"one_way_ms", latency_ms},
                           {"expected_ms", expected},
                           {"echoes", rtts.size()},
                           {"error_median_ms", quantile(error, 0.5)},
                           {"error_p99_ms", quantile(error, 0.99)},
                           {"error_min_ms", quantile(error, 0)},
                           {"lag", lag_json(wan.lag())}});
  }
  const std::vector<double> rates =
      quick ? std::vector<double>{10, 100, 400} : std::vector<double>{10, 50, 100, 200, 400, 600, 800};
  for (double mbps : rates) {
    EmulatedWan wan(pair(mbps, 10));
    RealTransferOptions opt;
    opt.connections = Connections::kWarm;
    const auto size = static_cast<int64_t>(mbps * 1e6 / 8 * 2);  // 2 s at capacity
    wan.reset_lag();
    const auto r = run_real_transfers(wan, {{0, 1, size, 0.0, false}}, opt);
    const LagStats lag = wan.lag();
    const double seconds = r[0].finish_s - r[0].start_s - 0.010;  // less the last byte's latency
    const double expected = mbps * 1e6 / 8 * 1448.0 / 1500.0;
    out["rate"].push_back({{"mbps", mbps},
                           {"finished", r[0].finish_s >= 0},
                           {"goodput_ratio", r[0].finish_s >= 0 ? size / seconds / expected : 0.0},
                           {"data_packets_per_s", r[0].finish_s >= 0 ? size / 1448.0 / seconds : 0.0},
                           {"lag", lag_json(lag)}});
  }
  fmt::print("{}\n", out.dump());
  return 0;
}
