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

#include <cstdint>
#include <fstream>
#include <string>

#include "sim/base/error.h"
#include "sim/base/json_reader.h"
#include "sim/replay.h"
#include "sim/scenario.h"
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
    nlohmann::json doc = JsonReader::parse_text(std::string(reinterpret_cast<const char*>(data), size),
                                                "fuzz/scenario.json", "");
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
    replay_transfers(doc, "fuzz/replay.json", harness_limits());
  });
}

}  // namespace gossipsim::fuzz
