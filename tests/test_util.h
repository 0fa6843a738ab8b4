// Helpers shared by the tests: building topologies and scenarios from JSON
// text written in the test itself.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "input/scenario_reader.h"
#include "topologies/builder.h"

namespace gossipsim::test {

inline Topology topology_from(const std::string& json, const LinkDefaults& d = {}, uint64_t seed = 1) {
  nlohmann::json j = nlohmann::json::parse(json);
  return build_topology(JsonReader(j, "test"), d, Streams(seed));
}

// What a command exited with and printed (stderr too).
struct Result {
  int code;
  std::string out;
};

// Runs a shell command; returns its exit code and what it printed (stderr too).
// Polls `done` every 50 ms for up to `seconds`; whether it became true.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    ::usleep(50000);
  }
  return done();
}

inline int run_shell(const std::string& command, std::string* output = nullptr) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (output) *output = out;
  return WEXITSTATUS(pclose(p));
}

inline Scenario scenario_from(const nlohmann::json& j) { return parse_scenario(j, "test.json"); }

// This test process's own folder under the system's temporary one,
// /tmp/gossipsim-<kind>-<pid>, made on first use and removed with all it
// holds when the process exits, so that a run of the suite leaves nothing
// behind (ctest runs each test in a process of its own).
inline std::filesystem::path process_temp_dir(const std::string& kind) {
  struct RemovedAtExit {
    std::filesystem::path dir;
    ~RemovedAtExit() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const RemovedAtExit d{std::filesystem::temp_directory_path() /
                               ("gossipsim-" + kind + "-" + std::to_string(::getpid()))};
  std::filesystem::create_directories(d.dir);
  return d.dir;
}

// A dumbbell for the tests to write: a, c behind router r1; b, d behind r2; r1-r2 at
// 8 Mbit/s (1 MB/s), access at 800 Mbit/s, 10 ms on the middle link only.
inline const char* kDumbbell = R"({"nodes":[
  {"name":"a","up_mbps":800,"down_mbps":800},{"name":"b","up_mbps":800,"down_mbps":800},
  {"name":"c","up_mbps":800,"down_mbps":800},{"name":"d","up_mbps":800,"down_mbps":4},
  {"name":"r1","router":true},{"name":"r2","router":true}],
 "links":[{"a":"a","b":"r1","bandwidth_mbps":8000,"latency_ms":0},{"a":"c","b":"r1","bandwidth_mbps":8000,"latency_ms":0},
  {"a":"b","b":"r2","bandwidth_mbps":8000,"latency_ms":0},{"a":"d","b":"r2","bandwidth_mbps":8000,"latency_ms":0},
  {"a":"r1","b":"r2","bandwidth_mbps":8,"latency_ms":10}]})";

// A topology file written by the test: two nodes joined by one link.
inline std::string two_nodes(double up_mbps, double down_mbps, double link_mbps, double latency_ms) {
  return nlohmann::json{
      {"nodes",
       {{{"name", "a"}, {"up_mbps", up_mbps}, {"down_mbps", down_mbps}},
        {{"name", "b"}, {"up_mbps", up_mbps}, {"down_mbps", down_mbps}}}},
      {"links", {{{"a", "a"}, {"b", "b"}, {"bandwidth_mbps", link_mbps}, {"latency_ms", latency_ms}}}}}
      .dump();
}

// A scenario simple enough to follow by hand: n nodes of the generator, 100
// ms iterations, links of 8 Mbit/s (1 MB/s) and 10 ms, access links of 800
// Mbit/s (a 1 MB model takes 1.01 s over one link), no jitter, one method.
inline nlohmann::json hand_scenario(const std::string& generator, int nodes, const nlohmann::json& method,
                                    double stop_s) {
  return {
      {"name", "hand"},
      {"topology", {{"generator", generator}, {"nodes", nodes}}},
      {"network",
       {{"access", {{"up_mbps", 800}, {"down_mbps", 800}}}, {"links", {{"bandwidth_mbps", 8}, {"latency_ms", 10}}}}},
      {"compute", {{"iteration_ms", 100}}},
      {"workload", {{"dataset", "synthetic"}, {"model", "mlp"}}},
      {"methods", {method}},
      {"stop", {{"virtual_s", stop_s}}},
      {"eval", {{"every_s", 1}}}};
}

// The one line a scenario is refused with (InputError), or "accepted".
inline std::string refusal(const nlohmann::json& scenario) {
  try {
    scenario_from(scenario);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace gossipsim::test
