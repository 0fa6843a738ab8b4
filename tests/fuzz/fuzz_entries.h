// The fuzzed entry points, shared by the libFuzzer targets (tests/fuzz/*.cc,
// built by scripts/fuzz with clang) and by the regression test that replays
// every input kept in tests/fuzz/regressions/ (FuzzRegressions in
// tests/fuzz_regression_test.cc). Each takes arbitrary bytes; refusing them
// with an InputError is the expected outcome, and anything else (another
// exception, a crash, a sanitizer report, a hang) is a finding.
//
// Limits are lowered inside the harness so that one input cannot ask for a
// graph of ten million links: the paths that check sizes still run, on
// smaller numbers.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "base/json_reader.h"
#include "input/replay_reader.h"
#include "input/scenario_reader.h"
#include "input/sweep.h"
#include "input/wan_reader.h"
#include "sim/network.h"
#include "sim/recorder.h"
#include "sim/simulator.h"
#include "sim/wan_dynamics.h"
#include "topologies/builder.h"

namespace gossipsim::fuzz {

inline SizeLimits harness_limits() {
  SizeLimits l;
  l.nodes = 2000;
  l.links = 100000;
  l.memory_gb = 1;
  return l;
}

// Which kinds of exception count as a refusal.
template <typename F>
void expect_refusal_at_most(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  }
}

// A scenario document, as `gossipsim validate` reads it (without the data).
inline void scenario_entry(const uint8_t* data, size_t size) {
  expect_refusal_at_most([&] {
    nlohmann::json doc =
        JsonReader::parse_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz/scenario.json", "");
    if (doc.is_object()) {
      const SizeLimits l = harness_limits();
      doc["limits"] = {{"nodes", l.nodes}, {"links", l.links}, {"memory_gb", l.memory_gb}};
    }
    parse_scenario(doc, "fuzz/scenario.json");
  });
}

// A topology file: the first byte picks the format (json, graphml, dot),
// the rest is the file.
inline void topology_entry(const uint8_t* data, size_t size) {
  if (size == 0) return;
  static const char* const kFormats[] = {"json", "graphml", "dot"};
  const std::string format = kFormats[data[0] % 3];
  const std::string path = "/tmp/gossipsim-fuzz-" + std::to_string(::getpid()) + "." + format;
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  expect_refusal_at_most([&] {
    nlohmann::json spec = {{"generator", "file"}, {"path", path}, {"format", format}};
    build_topology(JsonReader(spec, "fuzz/topology-spec.json"), LinkDefaults{}, Streams(1), harness_limits());
  });
  ::unlink(path.c_str());
}

// A `net replay` document.
inline void replay_entry(const uint8_t* data, size_t size) {
  expect_refusal_at_most([&] {
    nlohmann::json doc =
        JsonReader::parse_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz/replay.json", "");
    replay_transfers(read_replay(doc, "fuzz/replay.json", harness_limits()));
  });
}

// A small geo topology (4 nodes in 2 regions, so region selectors and
// region_pair links exist) for the readers of the living WAN.
inline const Topology& wan_topology() {
  static const Topology t = [] {
    nlohmann::json spec = {{"generator", "geo"}, {"nodes", 4}, {"regions_file", "cloud8"}};
    return build_topology(JsonReader(spec, "fuzz/topology.json"), LinkDefaults{}, Streams(1), harness_limits());
  }();
  return t;
}

// Plays accepted profiles on the topology for 20 virtual seconds: a profile
// that the readers let through must neither crash nor make more changes
// than the estimate that /limits/wan_changes is checked against
// (changes_within): the estimate must bound what is played.
inline void play(const std::vector<WanProfile>& profiles) {
  double estimate = 0;
  for (const auto& p : profiles) estimate += changes_within(p, seconds(20));
  if (estimate > 5e6) return;  // the scenario check refuses such a rate over any real run; too slow to play here
  Simulator sim;
  Network net(sim, wan_topology());
  Recorder recorder;
  WanDynamics wan(
      sim, net, recorder, profiles, {}, [](NodeId, double) {}, 1);
  wan.start();
  const uint64_t cap = static_cast<uint64_t>(estimate) + profiles.size() + 1;  // + one at exactly 20 s each
  sim.run(seconds(20), [&] { return sim.executed() <= cap; });
  if (sim.executed() > cap) __builtin_trap();  // more changes than estimated before the run
}

// Extremes that profiles meet at the edges of the clock and of memory.
inline double extreme(uint8_t b) {
  static const double kValues[] = {0,     1e-9, 2e-9,  1e-6, 5e-4,     1e-3,        0.0011,       0.5,
                                   1,     3,    7.5,   100,  86400,    1e6,         1e9,          1e12,
                                   1e300, -1,   -1e-9, NAN,  INFINITY, 0.001 * 1e6, 1000.0 / 1e6, 123.456789};
  return kValues[b % (sizeof kValues / sizeof kValues[0])];
}

// Network and compute profiles. The first byte picks the mode:
//   0: the rest is /network/profiles as JSON;
//   1: the rest is the CSV trace an access capacity profile names;
//   2: the rest picks an extreme profile (kind, period, step, ...).
// Accepted profiles are played.
inline void profile_entry(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t mode = data[0] % 3;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string csv = "/tmp/gossipsim-fuzz-" + std::to_string(::getpid()) + ".csv";
  const Topology& t = wan_topology();
  expect_refusal_at_most([&] {
    PointBudget budget(200'000);
    nlohmann::json list;
    if (mode == 0) {
      list = JsonReader::parse_text(rest, "fuzz/profiles.json", "/network/profiles");
    } else if (mode == 1) {
      std::ofstream(csv, std::ios::binary) << rest;
      list = {{{"access", 0}, {"capacity_mbps", {{"csv", csv}, {"period_s", rest.size() % 2 ? 30.0 : 0.0}}}}};
    } else {
      auto at = [&](size_t i) { return i < rest.size() ? static_cast<uint8_t>(rest[i]) : uint8_t{0}; };
      nlohmann::json profile;
      switch (at(0) % 4) {
        case 0:
          profile["diurnal"] = {{"mean", extreme(at(1))},
                                {"amplitude", extreme(at(2)) / 1e3},
                                {"period_s", extreme(at(3))},
                                {"step_s", extreme(at(4))}};
          break;
        case 1: {
          nlohmann::json pts = nlohmann::json::array();
          double time = 0;
          for (size_t i = 5; i + 1 < rest.size() && i < 64; i += 2)
            pts.push_back({time += extreme(at(i)), extreme(at(i + 1))});
          profile["points"] = pts.empty() ? nlohmann::json::array({{0, 1}}) : pts;
          profile["period_s"] = extreme(at(1));
          break;
        }
        case 2:
          profile["random_walk"] = {{"start", extreme(at(1))},  {"sigma", extreme(at(2)) / 1e3},
                                    {"step_s", extreme(at(3))}, {"min", extreme(at(4))},
                                    {"max", extreme(at(5))},    {"until_s", extreme(at(6))}};
          break;
        default:
          profile["on_off"] = {{"on", extreme(at(1))},
                               {"off", extreme(at(2))},
                               {"up_s", extreme(at(3))},
                               {"down_s", {{"dist", "exponential"}, {"mean", extreme(at(4))}}},
                               {"until_s", extreme(at(5))}};
      }
      list = {{{"access", "n0"}, {"capacity_mbps", profile}},
              {{"region_pair", {"us-east-1", "eu-west-1"}}, {"latency_ms", profile}}};
      // Rounding in JSON text as a user would write it.
      list = nlohmann::json::parse(list.dump());
    }
    auto profiles = parse_profiles(JsonReader(list, "fuzz/scenario.json", "/network/profiles"), t, Streams(1), budget);
    play(profiles);
  });
  if (mode == 1) ::unlink(csv.c_str());
}

// /churn as JSON, against the small topology.
inline void churn_entry(const uint8_t* data, size_t size) {
  expect_refusal_at_most([&] {
    nlohmann::json list =
        JsonReader::parse_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz/churn.json", "/churn");
    parse_churn(JsonReader(list, "fuzz/scenario.json", "/churn"), wan_topology(), Streams(1));
  });
}

// A sweep file, beside a small base scenario (base.json) that it may name:
// read as `gossipsim sweep` reads it (load_sweep), then every axis value
// checked against the base (check_sweep_values) where the axes are short,
// and a few points' overrides.
inline void sweep_entry(const uint8_t* data, size_t size) {
  const std::string dir = "/tmp/gossipsim-fuzz-sweep-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/base.json") << R"({"name": "base", "topology": {"generator": "ring", "nodes": 3},
    "workload": {"dataset": "synthetic", "model": "mlp"}, "methods": ["gossip"], "stop": {"virtual_s": 1}})";
  const std::string file = dir + "/sweep.json";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  expect_refusal_at_most([&] {
    const Sweep s = load_sweep(file);
    size_t values = 0;
    for (const auto& a : s.axes) values += a.values.size();
    if (values <= 64) check_sweep_values(s, {});
    for (size_t p = 0; p < std::min<size_t>(s.size(), 4); ++p) s.overrides(p);
  });
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace gossipsim::fuzz
