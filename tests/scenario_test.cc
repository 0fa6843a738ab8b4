#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <tuple>

#include "base/json_reader.h"
#include "test_util.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = GOSSIPSIM_SOURCE_DIR;

// A small JSON Schema checker for the keywords scenario.schema.json uses:
// type, enum, properties, required, additionalProperties (false), items,
// minItems, oneOf, $ref (#/$defs/...), minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, const, not, minLength, if/then/else. Written here so the
// test does not trust the loader.
class SchemaCheck {
 public:
  explicit SchemaCheck(nlohmann::json schema) : root_(std::move(schema)) {}
  bool valid(const nlohmann::json& v) const { return check(root_, v); }

 private:
  bool check(const nlohmann::json& s, const nlohmann::json& v) const {
    if (s.contains("$ref")) {
      std::string ref = s["$ref"];
      return check(root_["$defs"][ref.substr(ref.rfind('/') + 1)], v);
    }
    if (s.contains("if")) {
      const char* branch = check(s["if"], v) ? "then" : "else";
      if (s.contains(branch) && !check(s[branch], v)) return false;
    }
    if (s.contains("const") && s["const"] != v) return false;
    if (s.contains("not") && check(s["not"], v)) return false;
    if (v.is_string() && s.contains("minLength") && v.get<std::string>().size() < s["minLength"].get<size_t>())
      return false;
    if (s.contains("oneOf")) {
      int matches = 0;
      for (const auto& alt : s["oneOf"]) matches += check(alt, v);
      if (matches != 1) return false;
    }
    if (s.contains("enum")) {
      bool found = false;
      for (const auto& e : s["enum"]) found |= e == v;
      if (!found) return false;
    }
    if (s.contains("type")) {
      std::string t = s["type"];
      bool ok = (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
                (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
                (t == "number" && v.is_number()) || (t == "integer" && v.is_number_integer());
      if (!ok) return false;
    }
    if (v.is_string() && s.contains("pattern") &&
        !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript)))
      return false;
    if (v.is_number()) {
      double x = v.get<double>();
      if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
      if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
      if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
      if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
    }
    if (v.is_object()) {
      for (const auto& key : s.value("required", nlohmann::json::array()))
        if (!v.contains(key.get<std::string>())) return false;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (s.contains("properties") && s["properties"].contains(it.key())) {
          if (!check(s["properties"][it.key()], it.value())) return false;
        } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
          return false;
        }
      }
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
      if (s.contains("items"))
        for (const auto& e : v)
          if (!check(s["items"], e)) return false;
    }
    return true;
  }
  nlohmann::json root_;
};

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "name": "t", "seed": 3,
    "topology": {"generator": "ring", "nodes": 4},
    "network": {"access": {"up_mbps": 10, "down_mbps": {"dist": "uniform", "min": 10, "max": 20}},
                "links": {"latency_ms": 5, "bandwidth_mbps": {"dist": "lognormal", "median": 100, "sigma": 0.5}}},
    "compute": {"iteration_ms": 20, "jitter": 0.1},
    "workload": {"dataset": "synthetic", "model": "mlp", "batch": 8},
    "methods": ["gossip", {"name": "gossip-scheduled", "selection": "weighted", "info": "gossiped"}],
    "stop": {"virtual_s": 2},
    "eval": {"every_s": 1}
  })");
}

std::string error_of(const nlohmann::json& j) {
  try {
    test::scenario_from(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Each mutation breaks one thing; the loader names its path.
struct Bad {
  std::string pointer;
  nlohmann::json value;
  std::string expected_in_message;
};

std::vector<Bad> bad_cases() {
  return {
      {"/methods/0", "gossipp", "test.json: /methods/0: expected one of gossip, gossip-overlap"},
      {"/network/links/bandwidth_mbps", -5, "/network/links/bandwidth_mbps: expected a number >= 0.001"},
      {"/network/links/bandwidth_mbps/median", -1, "/network/links/bandwidth_mbps/median: expected a number > 0"},
      {"/network/access/up_mbps", "fast", "/network/access/up_mbps: expected a number or an object"},
      {"/workload/dataset", "imagenet", "/workload/dataset: expected one of fashion-mnist, cifar100, synthetic"},
      {"/workload/batch", 0, "/workload/batch: expected an integer in [1, 100000]"},
      {"/workload/fuse", "yes", "/workload/fuse: expected true or false"},
      {"/workload/fuse", 1, "/workload/fuse: expected true or false"},
      {"/stop/nonfinite_loss", "stop", "/stop/nonfinite_loss: expected true or false"},
      {"/stop/nonfinite_loss", 0, "/stop/nonfinite_loss: expected true or false"},
      {"/workload/dataset", {{"tensors", 3}}, "/workload/dataset/tensors: expected a string"},
      {"/workload/dataset",
       {{"tensors", "d.pt"}, {"x", 1}},
       "/workload/dataset/tensors: expected a data file of tensors"},
      {"/workload/model",
       {{"torchscript", ""}},
       "/workload/model/torchscript: expected the path of a TorchScript module"},
      {"/workload/partition", {{"kind", "file"}}, "/workload/partition/path: expected a value (this key is required)"},
      {"/workload/partition", {{"kind", "iid"}, {"path", "split.txt"}}, "/workload/partition/path: unknown key"},
      {"/workload/partition",
       {{"kind", "shards"}, {"by", "continent"}},
       "/workload/partition/by: expected one of node, region"},
      {"/workload/partition", {{"kind", "iid"}, {"by", 1}}, "/workload/partition/by: expected a string"},
      {"/workload/partition",
       {{"kind", "file"}, {"path", "split.txt"}, {"by", "node"}},
       "/workload/partition/by: expected no by with kind file (the split file names each sample's node)"},
      {"/workload/optimizer", {{"lr", 0.1}, {"momentun", 0.9}}, "/workload/optimizer/momentun: unknown key"},
      {"/compute/jitter", 2, "/compute/jitter: expected a number in [0, 0.9]"},
      {"/stop", nlohmann::json::object(), "/stop: expected a limit"},
      {"/eval/every_s", 0, "/eval/every_s: expected a number of seconds in [1e-6, 1e+09]"},
      {"/topology/nodes", 0, "/topology/nodes: expected an integer in [1, 100000]"},
      {"/colour", "blue", "test.json: /colour: unknown key"},
      {"/methods/1/selection", "fastest", "/methods/1/selection: expected one of min-finish"},
      {"/methods/1/ewma", 0, "/methods/1/ewma: expected a number in (0, 1]"},
      // gossip-scheduled's mix selection and interventions: wrong type, 0,
      // negative, tiny, huge, and an option where it does not belong.
      {"/methods/1",
       {{"name", "gossip-scheduled"}, {"selection", "mix"}, {"slack", -1}},
       "/methods/1/slack: expected a number in [0, 1e6]"},
      {"/methods/1",
       {{"name", "gossip-scheduled"}, {"selection", "mix"}, {"slack", 1e300}},
       "/methods/1/slack: expected a number in [0, 1e6]"},
      {"/methods/1",
       {{"name", "gossip-scheduled"}, {"selection", "mix"}, {"slack", "wide"}},
       "/methods/1/slack: expected a number"},
      {"/methods/1/rotate", -1, "/methods/1/rotate: expected an integer in [0, 1000000]"},
      {"/methods/1/rotate", 1.5, "/methods/1/rotate: expected an integer"},
      {"/methods/1/rotate", 1e-9, "/methods/1/rotate: expected an integer"},
      {"/methods/1/rotate", 1e300, "/methods/1/rotate: expected an integer"},
      {"/methods/1/rotate", true, "/methods/1/rotate: expected an integer"},
      {"/methods/1/cross_region_floor", -0.1, "/methods/1/cross_region_floor: expected a number in [0, 1]"},
      {"/methods/1/cross_region_floor", 1.5, "/methods/1/cross_region_floor: expected a number in [0, 1]"},
      {"/methods/1/cross_region_floor", "half", "/methods/1/cross_region_floor: expected a number"},
      {"/name", "../up", "test.json: /name: expected a name usable as a folder name"},
      {"/name", "a/b", "test.json: /name: expected a name usable as a folder name"},
      {"/name", "..", "test.json: /name: expected a name usable as a folder name"},
      {"/methods/1/label", "x\\y", "/methods/1/label: expected a name usable as a folder name"},
      {"/stop/virtual_s", 1e300, "/stop/virtual_s: expected at most 1e+09 virtual seconds"},
      {"/workload/model_bytes", 1e15, "/workload/model_bytes: expected an integer in [0, 1e11]"},
      {"/limits/nodes", 0, "/limits/nodes: expected an integer in [1, 1e8]"},
      {"/limits/memory_gb", 0, "/limits/memory_gb: expected a number > 0"},
      {"/limits/cores", 2, "/limits/cores: unknown key"},
      {"/methods/1",
       {{"name", "gosgd"}, {"push_probability", 0}},
       "/methods/1/push_probability: expected a probability in (0, 1]"},
      {"/methods/1", {{"name", "osgp"}, {"tau", 0}}, "/methods/1/tau: expected an integer in [1, 1000]"},
      {"/network/model", "packets", "/network/model: expected one of maxmin, tcp"},
      {"/methods/1", {{"name", "osgp"}, {"tau", 1.5}}, "/methods/1/tau"},
      {"/eval/starved_s", -1, "/eval/starved_s: expected a number of seconds in [0, 1e9]"},
      {"/churn",
       {{{"nodes", {1}}, {"events", {{1, "explode"}}}}},
       "/churn/0/events/0/1: expected one of crash, leave, join"},
      {"/churn",
       {{{"fraction", 2}, {"events", {{1, "crash"}}}}},
       "/churn/0/fraction: expected a fraction of the nodes"},
      {"/churn", {{{"all", true}, {"events", {{1, "crash"}}}, {"model", "best"}}}, "/churn/0/model: expected one of"},
      {"/churn",
       {{{"all", true}, {"cycle", {{"up_s", 1}, {"down_s", 1}, {"until_s", 5}, {"down", "nap"}}}}},
       "/churn/0/cycle/down: expected one of crash, leave"},
      {"/compute/profiles",
       {{{"nodes", {0}}, {"factor", {{"points", {{1, 2}}}}}, {"speed", 1}}},
       "/compute/profiles/0/speed: unknown key"},
      {"/network/cross_traffic",
       {{{"from", {{"all", true}}}, {"to", {{"all", true}}}, {"size_mb", -1}, {"interarrival_s", 1}, {"until_s", 5}}},
       "/network/cross_traffic/0/size_mb: expected a number >= 1e-06"},
      {"/network/cross_traffic",
       {{{"from", {{"all", true}}}, {"to", {{"all", true}}}, {"size_mb", 1}, {"interarrival_s", 1}}},
       "/network/cross_traffic/0/until_s: expected a value (this key is required)"},
      // /network/real (run --real): wrong type, 0, negative, tiny, huge, unknown.
      {"/network/real", 1, "/network/real: expected an object"},
      {"/network/real",
       {{"connections", "pooled"}},
       "/network/real/connections: expected one of fresh, persistent, warm"},
      {"/network/real", {{"connections", 1}}, "/network/real/connections: expected a string"},
      {"/network/real",
       {{"congestion", ""}},
       "/network/real/congestion: expected \"default\" or a congestion control's"},
      {"/network/real", {{"congestion", "bbr; rm"}}, "/network/real/congestion: expected \"default\" or a congestion"},
      {"/network/real", {{"congestion", "averyveryverylongname"}}, "/network/real/congestion: expected \"default\""},
      {"/network/real", {{"dilation", 0}}, "/network/real/dilation: expected a time dilation in [1, 1000]"},
      {"/network/real", {{"dilation", 0.5}}, "/network/real/dilation: expected a time dilation in [1, 1000]"},
      {"/network/real", {{"dilation", -2}}, "/network/real/dilation: expected a time dilation in [1, 1000]"},
      {"/network/real", {{"dilation", 1e9}}, "/network/real/dilation: expected a time dilation in [1, 1000]"},
      {"/network/real", {{"dilation", "2"}}, "/network/real/dilation: expected a number"},
      {"/network/real", {{"max_lag_ms", 0}}, "/network/real/max_lag_ms: expected a number of virtual ms in (0, 1e4]"},
      {"/network/real", {{"max_lag_ms", -1}}, "/network/real/max_lag_ms: expected a number of virtual ms in (0, 1e4]"},
      {"/network/real", {{"max_lag_ms", 1e300}}, "/network/real/max_lag_ms: expected a number of virtual ms in"},
      {"/network/real", {{"queue_packets", 0}}, "/network/real/queue_packets: expected an integer in [1, 1000000]"},
      {"/network/real", {{"queue_packets", 2.5}}, "/network/real/queue_packets: expected an integer"},
      {"/network/real", {{"queue_packets", 1e7}}, "/network/real/queue_packets: expected an integer in [1, 1000000]"},
      {"/network/real", {{"lag", 1}}, "/network/real/lag: unknown key"},
  };
}

TEST(Scenario, ReadsEveryOption) {
  Scenario sc = test::scenario_from(base());
  EXPECT_EQ(sc.seed, 3u);
  EXPECT_EQ(sc.topology.node_count(), 4);
  EXPECT_EQ(sc.compute.jitter, 0.1);
  ASSERT_EQ(sc.methods.size(), 2u);
  EXPECT_EQ(sc.methods[1].selection, Selection::kWeighted);
  EXPECT_EQ(sc.methods[1].info, Info::kGossiped);
  EXPECT_EQ(sc.methods[0].label, "gossip");
}

TEST(Scenario, ReadsTheRealRunOptions) {
  nlohmann::json j = base();
  j["network"]["real"] = {
      {"connections", "warm"}, {"congestion", "bbr"}, {"dilation", 2.5}, {"max_lag_ms", 1e-9}, {"queue_packets", 64}};
  const RealRunOptions r = test::scenario_from(j).network.real;
  EXPECT_EQ(r.connections, FlowModel::Connections::kWarm);
  EXPECT_EQ(r.congestion, "bbr");
  EXPECT_EQ(r.dilation, 2.5);
  EXPECT_EQ(r.max_lag_ms, 1e-9);
  EXPECT_EQ(r.queue_packets, 64);
  const RealRunOptions d = test::scenario_from(base()).network.real;  // the defaults
  EXPECT_EQ(d.connections, FlowModel::Connections::kFresh);
  EXPECT_EQ(d.congestion, "default");
  EXPECT_EQ(d.dilation, 1);
  EXPECT_EQ(d.max_lag_ms, 2);
  EXPECT_EQ(d.queue_packets, 1000);
}

TEST(Scenario, APartitionByRegionKnowsEachNodesRegion) {
  // Two regions of cloud8, nodes placed round-robin in the order given:
  // n0 us-east-1, n1 eu-west-1, n2 us-east-1, n3 eu-west-1. Regions are
  // numbered in name order: eu-west-1 0, us-east-1 1.
  nlohmann::json j = base();
  j["topology"] = {
      {"generator", "geo"}, {"nodes", 4}, {"regions_file", "cloud8"}, {"regions", {"us-east-1", "eu-west-1"}}};
  j["workload"]["partition"] = {{"kind", "shards"}, {"by", "region"}};
  const PartitionSpec p = test::scenario_from(j).workload.partition;
  EXPECT_EQ(p.by, PartitionSpec::By::kRegion);
  EXPECT_EQ(p.region_of, (std::vector<int>{1, 0, 1, 0}));
  EXPECT_TRUE(test::scenario_from(base()).workload.partition.region_of.empty());  // by node: not needed
  // A topology of one region (the ring's nodes name none) cannot be split by region.
  j = base();
  j["workload"]["partition"] = {{"kind", "iid"}, {"by", "region"}};
  EXPECT_NE(error_of(j).find("test.json: /workload/partition/by: expected a topology with 2 regions or more for by "
                             "region (a geo topology, or a topology file whose nodes name their region); this one "
                             "has one"),
            std::string::npos)
      << error_of(j);
}

TEST(Scenario, EachKindOfBadScenarioNamesItsPath) {
  for (const auto& b : bad_cases()) {
    nlohmann::json j = base();
    j[nlohmann::json::json_pointer(b.pointer)] = b.value;
    std::string e = error_of(j);
    EXPECT_NE(e.find(b.expected_in_message), std::string::npos) << b.pointer << " gave: " << e;
  }
  nlohmann::json dup = base();
  dup["methods"] = {"gossip", "gossip"};
  EXPECT_NE(error_of(dup).find("/methods/1: expected a unique label"), std::string::npos);
  // /network/tcp without the tcp model (the schema cannot say it).
  nlohmann::json orphan = base();
  orphan["network"]["tcp"] = {{"latency_factor", 2}};
  EXPECT_NE(error_of(orphan).find("test.json: /network/tcp: expected these options with \"model\": \"tcp\" only"),
            std::string::npos)
      << error_of(orphan);
  // Each /network/tcp constant out of range, with the tcp model.
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, double, std::string>>{
           {"latency_factor", 0, "/network/tcp/latency_factor: expected a number in (0, 1000]"},
           {"bandwidth_factor", 1.5, "/network/tcp/bandwidth_factor: expected a number in (0, 1]"},
           {"weight_s_bytes", -1, "/network/tcp/weight_s_bytes: expected a number of bytes in [0, 1e12]"},
           {"window_bytes", 0, "/network/tcp/window_bytes: expected a number of bytes in [1, 1e12]"}}) {
    nlohmann::json j = base();
    j["network"]["model"] = "tcp";
    j["network"]["tcp"] = {{key, value}};
    EXPECT_NE(error_of(j).find(message), std::string::npos) << key << " gave: " << error_of(j);
  }
  // /network/slowstart: without its model, and each constant wrong in type,
  // zero, negative, tiny or huge.
  nlohmann::json ss_orphan = base();
  ss_orphan["network"]["slowstart"] = {{"connections", "warm"}};
  EXPECT_NE(error_of(ss_orphan).find("test.json: /network/slowstart: expected these options with \"model\": "
                                     "\"slowstart\" only"),
            std::string::npos)
      << error_of(ss_orphan);
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"connections", "pooled", "/network/slowstart/connections: expected one of fresh, persistent, warm"},
           {"connections", 1, "/network/slowstart/connections: expected a string"},
           {"initial_window_bytes", 0,
            "/network/slowstart/initial_window_bytes: expected a number of bytes in [1, 1e9]"},
           {"initial_window_bytes", 1e-9, "/network/slowstart/initial_window_bytes: expected a number of bytes in"},
           {"initial_window_bytes", "10", "/network/slowstart/initial_window_bytes: expected a number"},
           {"payload_factor", 0, "/network/slowstart/payload_factor: expected a number in (0, 1]"},
           {"payload_factor", -0.5, "/network/slowstart/payload_factor: expected a number in (0, 1]"},
           {"payload_factor", 1.01, "/network/slowstart/payload_factor: expected a number in (0, 1]"},
           {"max_window_bytes", 1e13,
            "/network/slowstart/max_window_bytes: expected a number of bytes in "
            "[initial_window_bytes, 1e12]"},
           {"max_window_bytes", 1000,
            "/network/slowstart/max_window_bytes: expected a number of bytes in "
            "[initial_window_bytes, 1e12]"},
           {"congestion", "vegas", "/network/slowstart/congestion: expected one of none, bbr, cubic, reno"},
           {"congestion", 0, "/network/slowstart/congestion: expected a string"},
           {"queue_packets", 0, "/network/slowstart/queue_packets: expected a whole number of packets in [1, 1e7]"},
           {"queue_packets", -5, "/network/slowstart/queue_packets: expected a whole number of packets in [1, 1e7]"},
           {"queue_packets", 1e-9, "/network/slowstart/queue_packets: expected a whole number of packets in"},
           {"queue_packets", 10.5, "/network/slowstart/queue_packets: expected a whole number of packets in"},
           {"queue_packets", 1e300, "/network/slowstart/queue_packets: expected a whole number of packets in"},
           {"queue_packets", "1000", "/network/slowstart/queue_packets: expected a number"},
           {"packet_bytes", 575, "/network/slowstart/packet_bytes: expected a number of bytes in [576, 65536]"},
           {"packet_bytes", 1e9, "/network/slowstart/packet_bytes: expected a number of bytes in [576, 65536]"},
           {"packet_bytes", true, "/network/slowstart/packet_bytes: expected a number"},
           {"round_sending", "paces", "/network/slowstart/round_sending: expected one of burst, acked, paced"},
           {"round_sending", "", "/network/slowstart/round_sending: expected one of burst, acked, paced"},
           {"round_sending", "paced",
            "/network/slowstart/round_sending: expected burst or acked (paced is BBR's pacing: with \"congestion\": "
            "\"bbr\" only)"},
           {"round_sending", 0, "/network/slowstart/round_sending: expected a string"},
           {"round_sending", -1, "/network/slowstart/round_sending: expected a string"},
           {"round_sending", 1e-9, "/network/slowstart/round_sending: expected a string"},
           {"round_sending", nlohmann::json::array({"burst"}),
            "/network/slowstart/round_sending: expected a string"}}) {
    nlohmann::json j = base();
    j["network"]["model"] = "slowstart";
    j["network"]["slowstart"] = {{key, value}};
    EXPECT_NE(error_of(j).find(message), std::string::npos) << key << " gave: " << error_of(j);
  }
  // paced is BBR's alone, for the loader and the schema.
  SchemaCheck schema(JsonReader::parse_file((kSource / "scenarios/scenario.schema.json").string()));
  for (const char* cc : {"cubic", "reno", "none", "bbr"}) {
    nlohmann::json j = base();
    j["network"]["model"] = "slowstart";
    j["network"]["slowstart"] = {{"congestion", cc}, {"round_sending", "paced"}};
    const bool bbr = std::string(cc) == "bbr";
    EXPECT_EQ(error_of(j).find("/network/slowstart/round_sending: expected burst or acked (paced is BBR's") !=
                  std::string::npos,
              !bbr)
        << cc << " gave: " << error_of(j);
    EXPECT_EQ(schema.valid(j), bbr) << cc;
  }
  // Options of another method: the loader's alone (the schema lists every
  // method's options in one object).
  for (const auto& [method, message] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"name", "sgp"}, {"tau", 2}}, "/methods/1/tau: unknown key"},
           {{{"name", "sgp"}, {"merge", "average"}}, "/methods/1/merge: unknown key"},
           {{{"name", "adpsgd"}, {"merge", "gosgd"}}, "/methods/1/merge: unknown key"},
           // Methods that weigh their merges themselves (or make none) used
           // to accept a merge rule and ignore it.
           {{{"name", "dpsgd"}, {"merge", "gosgd"}}, "/methods/1/merge: unknown key"},
           {{{"name", "allreduce"}, {"merge", "gosgd"}}, "/methods/1/merge: unknown key"},
           {{{"name", "single"}, {"merge", "average"}}, "/methods/1/merge: unknown key"},
           {{{"name", "gossip"}, {"tau", 2}}, "/methods/1/tau: unknown key"},
           {{{"name", "gossip-overlap"}, {"rotate", 2}}, "/methods/1/rotate: unknown key"},
           {{{"name", "gossip-overlap"}, {"cross_region_floor", 0.5}}, "/methods/1/cross_region_floor: unknown key"},
           // slack belongs to one selection of gossip-scheduled.
           {{{"name", "gossip-scheduled"}, {"slack", 0.5}},
            "/methods/1/slack: expected no slack unless selection is mix"},
           {{{"name", "gossip-scheduled"}, {"selection", "weighted"}, {"slack", 0}},
            "/methods/1/slack: expected no slack unless selection is mix"}}) {
    nlohmann::json j = base();
    j["methods"][1] = method;
    EXPECT_NE(error_of(j).find(message), std::string::npos) << method.dump() << " gave: " << error_of(j);
  }
}

TEST(Scenario, OverridesApplyBeforeReading) {
  nlohmann::json j = base();
  apply_overrides(j, {"/topology/nodes=6", "/workload/dataset=synthetic", "/stop/virtual_s=9.5"}, "x");
  Scenario sc = test::scenario_from(j);
  EXPECT_EQ(sc.topology.node_count(), 6);
  EXPECT_EQ(sc.stop.virtual_s, 9.5);
  EXPECT_THROW(apply_overrides(j, {"nodes=3"}, "x"), InputError);
}

TEST(Schema, AgreesWithTheLoader) {
  SchemaCheck schema(JsonReader::parse_file((kSource / "scenarios/scenario.schema.json").string()));
  EXPECT_TRUE(schema.valid(base()));
  for (const auto& b : bad_cases()) {
    if (b.pointer == "/stop") continue;  // "one of two limits" is the loader's alone
    nlohmann::json j = base();
    j[nlohmann::json::json_pointer(b.pointer)] = b.value;
    EXPECT_FALSE(schema.valid(j)) << "the schema accepts what the loader refuses: " << b.pointer;
  }
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "scenario.schema.json") continue;
    if (entry.path().parent_path().filename() == "sweeps") continue;
    nlohmann::json doc = JsonReader::parse_file(entry.path().string());
    EXPECT_TRUE(schema.valid(doc)) << entry.path();
    // scenarios/custom names files that scripts/export-workload writes and
    // only LibTorch reads: tests/kernels/workloads_test.cc loads them.
    if (entry.path().parent_path().filename() == "custom") continue;
    EXPECT_NO_THROW(parse_scenario(doc, entry.path().string())) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

}  // namespace
}  // namespace gossipsim
