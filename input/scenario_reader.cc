#include "input/scenario_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "base/safe_name.h"
#include "input/data_files.h"
#include "input/wan_reader.h"
#include "sim/methods/registry.h"

namespace gossipsim {

namespace {

using Domain = Distribution::Domain;

void one_of(const JsonReader& r, const std::string& key, const std::string& value,
            const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  const std::string expected = fmt::format("one of {}", fmt::join(allowed, ", "));
  if (key.empty()) r.fail(expected);
  r.fail(key, expected);
}

ComputeOptions parse_compute(const JsonReader& r) {
  ComputeOptions c;
  // From 1 us to about 2.8 hours an iteration: never a zero-length one.
  if (auto v = r.child("iteration_ms")) c.iteration_ms = Distribution::parse(*v, Domain::kPositive, {1e-3, 1e7});
  c.jitter = r.number("jitter", 0.0);
  r.require(c.jitter >= 0 && c.jitter <= 0.9, "jitter", "a number in [0, 0.9]");
  r.has("profiles");  // read by parse_scenario once the topology is built
  r.done();
  return c;
}

std::vector<int64_t> int_list(const JsonReader& r, const std::string& key, std::vector<int64_t> fallback) {
  if (!r.has(key)) return fallback;
  JsonReader a = r.at(key);
  std::vector<int64_t> out;
  for (size_t i = 0; i < a.array_size(); ++i) {
    int64_t v = a.element(i).as_integer();
    if (v < 1) a.element(i).fail("an integer >= 1");
    out.push_back(v);
  }
  if (out.empty()) r.fail(key, "a non-empty array of integers");
  return out;
}

// /workload/dataset (a name, or {"tensors": FILE}) and /workload/data_dir.
void parse_dataset(const JsonReader& r, WorkloadSpec& w) {
  if (r.has("dataset") && r.value()["dataset"].is_object()) {
    JsonReader d = r.at("dataset");
    w.dataset = DatasetKind::kTensors;
    w.data_file = named_file(d, "tensors", "a data file of tensors written by torch.save (scripts/export-workload)");
    if (!torch_file_readers().data) d.fail("tensors", "a build with LibTorch (this one cannot read tensor files)");
    try {
      w.data_facts = torch_file_readers().data(w.data_file);
    } catch (const InputError& e) {
      throw d.inside_named_file(e, "tensors", "data file");
    }
    d.done();
  } else {
    w.dataset = r.choice("dataset", dataset_names());
    if (w.dataset == DatasetKind::kTensors) r.fail("dataset", "{\"tensors\": FILE} for a data file of tensors");
  }
  w.data_dir = r.string("data_dir", "");
  if (w.dataset == DatasetKind::kTensors && !w.data_dir.empty())
    r.fail("data_dir", "no data_dir with a data file of tensors");
  if (w.dataset == DatasetKind::kCifar100 && w.data_dir.empty())
    r.fail("data_dir", "the folder holding CIFAR-100's train.bin and test.bin (required for cifar100)");
}

// /workload/synthetic.
SyntheticSpec parse_synthetic(const JsonReader& s) {
  SyntheticSpec syn;
  syn.classes = static_cast<int>(s.integer("classes", 10));
  s.require(syn.classes >= 2, "classes", "an integer >= 2");
  syn.shape = int_list(s, "shape", syn.shape);
  double features = 1;
  for (int64_t d : syn.shape) features *= static_cast<double>(d);
  s.require(syn.shape.size() <= 3 && features <= 1e7, "shape",
            "one to three dimensions of at most 10,000,000 values per sample");
  s.require(syn.classes <= 100000, "classes", "at most 100,000 classes");
  syn.train = s.integer("train", syn.train);
  syn.test = s.integer("test", syn.test);
  s.require(syn.train >= 1 && syn.train <= 100000000, "train", "an integer in [1, 1e8]");
  s.require(syn.test >= 1 && syn.test <= 100000000, "test", "an integer in [1, 1e8]");
  syn.noise = s.number("noise", syn.noise);
  s.require(syn.noise >= 0, "noise", "a number >= 0");
  s.done();
  return syn;
}

// /workload/model (a name, {"name", "hidden", "norm"} or {"torchscript":
// FILE}), checked against the dataset's inputs.
void parse_model(const JsonReader& r, WorkloadSpec& w) {
  if (r.has("model") && r.value()["model"].is_object() && r.value()["model"].contains("torchscript")) {
    JsonReader m = r.at("model");
    w.model.name = "torchscript";
    w.model.torchscript =
        named_file(m, "torchscript", "a TorchScript module saved by torch.jit.save (scripts/export-workload)");
    if (!torch_file_readers().model) m.fail("torchscript", "a build with LibTorch (this one cannot read TorchScript)");
    m.done();  // the module is checked once the batch sizes are known (check_torchscript_model)
  } else if (r.has("model") && r.value()["model"].is_object()) {
    JsonReader m = r.at("model");
    w.model.name = m.string("name");
    w.model.hidden = int_list(m, "hidden", w.model.hidden);
    w.model.norm = m.choice("norm", norm_names());
    one_of(m, "name", w.model.name, model_names());
    m.done();
  } else {
    w.model.name = r.string("model", "cnn");
    one_of(r, "model", w.model.name, model_names());
  }
  if (w.dataset == DatasetKind::kTensors && w.data_facts.integer_inputs && w.model.name != "torchscript")
    r.fail("model",
           "a TorchScript model (/workload/model {\"torchscript\": ...}): the data file's inputs are integers "
           "(token ids), which the built-in models do not take");
}

// /workload/optimizer.
OptimizerSpec parse_optimizer(const JsonReader& o) {
  OptimizerSpec opt;
  opt.lr = o.number("lr", opt.lr);
  o.require(opt.lr > 0, "lr", "a number > 0");
  opt.momentum = o.number("momentum", opt.momentum);
  o.require(opt.momentum >= 0 && opt.momentum < 1, "momentum", "a number in [0, 1)");
  opt.weight_decay = o.number("weight_decay", opt.weight_decay);
  o.require(opt.weight_decay >= 0, "weight_decay", "a number >= 0");
  if (auto s = o.child("schedule")) {
    opt.schedule.kind = s->choice("kind", schedule_names());
    opt.schedule.every_epochs = s->number("every_epochs", opt.schedule.every_epochs);
    s->require(opt.schedule.every_epochs > 0, "every_epochs", "a number > 0");
    opt.schedule.gamma = s->number("gamma", opt.schedule.gamma);
    s->require(opt.schedule.gamma > 0, "gamma", "a number > 0");
    opt.schedule.epochs = s->number("epochs", opt.schedule.epochs);
    s->require(opt.schedule.epochs > 0, "epochs", "a number > 0");
    s->done();
  }
  o.done();
  return opt;
}

// /workload/partition.
PartitionSpec parse_partition(const JsonReader& p) {
  PartitionSpec part;
  part.kind = p.choice("kind", partition_names());
  part.by = p.choice("by", partition_by_names());
  p.require(!p.has("by") || part.kind != PartitionSpec::Kind::kFile, "by",
            "no by with kind file (the split file names each sample's node)");
  // The file is read once the node count is known (parse_scenario).
  if (part.kind == PartitionSpec::Kind::kFile)
    part.path = named_file(p, "path", "a split file, one node id per training sample");
  part.alpha = p.number("alpha", part.alpha);
  p.require(part.alpha > 0, "alpha", "a number > 0");
  part.classes_per_node = static_cast<int>(p.integer("classes_per_node", part.classes_per_node));
  p.require(part.classes_per_node >= 1, "classes_per_node", "an integer >= 1");
  p.done();
  return part;
}

WorkloadSpec parse_workload(const JsonReader& r) {
  WorkloadSpec w;
  parse_dataset(r, w);
  w.coarse_labels = r.boolean("coarse_labels", false);
  w.train_samples = r.integer("train_samples", 0);
  r.require(w.train_samples >= 0, "train_samples", "an integer >= 0");
  if (auto s = r.child("synthetic")) w.synthetic = parse_synthetic(*s);
  parse_model(r, w);
  w.batch = r.integer("batch", 32);
  r.require(w.batch >= 1 && w.batch <= 100000, "batch", "an integer in [1, 100000]");
  if (auto o = r.child("optimizer")) w.optimizer = parse_optimizer(*o);
  if (auto p = r.child("partition")) w.partition = parse_partition(*p);
  w.model_bytes = r.integer("model_bytes", 0);
  r.require(w.model_bytes >= 0 && w.model_bytes <= 100'000'000'000, "model_bytes", "an integer in [0, 1e11] (100 GB)");
  w.device = r.choice("device", device_names());
  w.workers = static_cast<int>(r.integer("workers", 1));
  r.require(w.workers >= 1 && w.workers <= 256, "workers", "an integer in [1, 256]");
  w.fuse = r.boolean("fuse", true);
  r.done();
  return w;
}

MethodOptions parse_method(const JsonReader& r) {
  MethodOptions m;
  const bool bare = r.value().is_string();
  if (!bare) r.expect_object();
  m.name = bare ? r.as_string() : r.string("name");
  m.type = find_method_type(m.name);
  if (!m.type) {
    if (bare) r.fail(JsonReader::one_of(method_names()));
    r.fail("name", JsonReader::one_of(method_names()));
  }
  if (m.type->merge == MethodType::Merge::kFixed) m.merge = m.type->merge_rule;
  if (!bare) {
    m.label = r.string("label", "");
    if (r.has("label")) r.require(is_safe_name(m.label), "label", kSafeNameRule);
    const int64_t steps = r.integer("local_steps", 1);
    r.require(steps >= 1 && steps <= 1000000, "local_steps", "an integer in [1, 1000000]");
    m.local_steps = static_cast<int>(steps);
    if (m.type->merge == MethodType::Merge::kOption) m.merge = r.choice("merge", merge_rule_names());
    if (m.type->send_rule) m.ready = r.choice("ready", ready_names());
    if (m.type->read_options) m.type->read_options(r, m);
    r.done();
  }
  if (m.label.empty()) m.label = m.name;
  return m;
}

StopOptions parse_stop(const JsonReader& r) {
  StopOptions s;
  s.virtual_s = r.number("virtual_s", 0.0);
  s.epochs = r.number("epochs", 0.0);
  s.target_accuracy = r.number("target_accuracy", 0.0);
  s.wall_s = r.number("wall_s", 0.0);
  s.nonfinite_loss = r.boolean("nonfinite_loss", true);
  r.require(s.virtual_s >= 0, "virtual_s", "a number >= 0");
  r.require(s.epochs >= 0, "epochs", "a number >= 0");
  r.require(s.target_accuracy >= 0 && s.target_accuracy <= 1, "target_accuracy", "a number in [0, 1]");
  r.require(s.wall_s >= 0, "wall_s", "a number >= 0");
  r.require(s.virtual_s <= kMaxVirtualSeconds, "virtual_s",
            fmt::format("at most {:g} virtual seconds", kMaxVirtualSeconds));
  r.require(s.epochs <= 1e6, "epochs", "at most 1e6 epochs");
  if (s.virtual_s == 0 && s.epochs == 0) r.fail("a limit: virtual_s or epochs (> 0)");
  r.done();
  return s;
}

EvalOptions parse_eval(const JsonReader& r) {
  EvalOptions e;
  e.every_s = r.number("every_s", e.every_s);
  r.require(e.every_s >= 1e-6 && e.every_s <= kMaxVirtualSeconds, "every_s",
            fmt::format("a number of seconds in [1e-6, {:g}]", kMaxVirtualSeconds));
  if (r.has("test_samples")) {
    e.test_samples = r.integer("test_samples");
    r.require(*e.test_samples >= 0, "test_samples", "an integer >= 0");
  }
  if (r.has("targets")) {
    e.targets = r.numbers("targets");
    for (size_t i = 0; i < e.targets.size(); ++i)
      if (!(e.targets[i] > 0 && e.targets[i] <= 1)) r.at("targets").fail(std::to_string(i), "an accuracy in (0, 1]");
  }
  e.per_node = r.boolean("per_node", true);
  e.target = r.choice("target", target_metric_names());
  if (e.target != TargetMetric::kAverage && !e.per_node)
    r.fail("target", "average when /eval/per_node is false (node_mean and node_min need every node's model evaluated)");
  e.starved_s = r.number("starved_s", 0.0);
  r.require(e.starved_s >= 0 && e.starved_s <= kMaxVirtualSeconds, "starved_s", "a number of seconds in [0, 1e9]");
  r.done();
  return e;
}

// The changes every profile applies over the run, against /limits/wan_changes.
void check_wan_changes(const JsonReader& r, const Scenario& sc) {
  const Time horizon = seconds(estimated_run_s(sc));
  double changes = 0;
  for (const auto* list : {&sc.network.profiles, &sc.compute.profiles})
    for (const WanProfile& p : *list) changes += changes_within(p, horizon);
  if (changes > sc.limits.wan_changes)
    r.fail(sc.compute.profiles.empty() ? "network" : "compute",
           fmt::format("profiles that make at most {:g} changes over the run (/limits/wan_changes); these make about "
                       "{:.3g} over {:.4g} virtual s (each one re-solves the flows it touches: raise the limit if the "
                       "machine has the time)",
                       sc.limits.wan_changes, changes, horizon.seconds()));
}

LimitsOptions parse_limits(const JsonReader& r) {
  LimitsOptions l;
  l.nodes = r.integer("nodes", l.nodes);
  r.require(l.nodes >= 1 && l.nodes <= 100000000, "nodes", "an integer in [1, 1e8]");
  l.links = r.integer("links", l.links);
  r.require(l.links >= 1 && l.links <= 10000000000, "links", "an integer in [1, 1e10]");
  l.memory_gb = r.number("memory_gb", l.memory_gb);
  r.require(l.memory_gb > 0, "memory_gb", "a number > 0");
  l.profile_points = r.integer("profile_points", l.profile_points);
  r.require(l.profile_points >= 1 && l.profile_points <= 1'000'000'000, "profile_points", "an integer in [1, 1e9]");
  l.wan_changes = r.number("wan_changes", l.wan_changes);
  r.require(l.wan_changes >= 1 && l.wan_changes <= 1e12, "wan_changes", "a number in [1, 1e12]");
  r.done();
  return l;
}

}  // namespace

void check_memory(const Scenario& sc, int64_t model_bytes, int64_t data_bytes) {
  const double need = estimate_memory(sc, model_bytes, data_bytes);
  if (need > sc.limits.memory_gb * 1e9)
    throw InputError(sc.file, "/limits/memory_gb",
                     fmt::format("expected a run within {:g} GB: this one needs about {:.3g} GB ({} nodes{}); raise "
                                 "/limits/memory_gb if the machine has it",
                                 sc.limits.memory_gb, need / 1e9, sc.topology.node_count(),
                                 model_bytes > 0 ? fmt::format(", {} bytes per model", model_bytes) : ""));
}

NetworkOptions parse_network(const JsonReader& r, bool allow_profiles) {
  NetworkOptions n;
  if (allow_profiles) {  // read by parse_scenario once the topology is built
    r.has("profiles");
    r.has("cross_traffic");
  }
  if (auto access = r.child("access")) {
    if (auto v = access->child("up_mbps")) n.links.up_mbps = Distribution::parse(*v, Domain::kPositive, kCapacityMbps);
    if (auto v = access->child("down_mbps"))
      n.links.down_mbps = Distribution::parse(*v, Domain::kPositive, kCapacityMbps);
    access->done();
  }
  if (auto links = r.child("links")) {
    if (auto v = links->child("latency_ms"))
      n.links.latency_ms = Distribution::parse(*v, Domain::kNonNegative, kLatencyMs);
    if (auto v = links->child("bandwidth_mbps"))
      n.links.bandwidth_mbps = Distribution::parse(*v, Domain::kPositive, kCapacityMbps);
    links->done();
  }
  const FlowModel::Kind model = r.choice("model", flow_model_names());
  n.model.tcp = model == FlowModel::Kind::kTcp;
  n.model.slow_start = model == FlowModel::Kind::kSlowstart;
  if (auto ss = r.child("slowstart")) {
    r.require(n.model.slow_start, "slowstart", "these options with \"model\": \"slowstart\" only");
    FlowModel& m = n.model;
    m.connections = ss->choice("connections", connections_names());
    m.initial_window_bytes = ss->number("initial_window_bytes", m.initial_window_bytes);
    ss->require(m.initial_window_bytes >= 1 && m.initial_window_bytes <= 1e9, "initial_window_bytes",
                "a number of bytes in [1, 1e9]");
    m.payload_factor = ss->number("payload_factor", m.payload_factor);
    ss->require(m.payload_factor > 0 && m.payload_factor <= 1, "payload_factor", "a number in (0, 1]");
    m.max_window_bytes = ss->number("max_window_bytes", m.max_window_bytes);
    ss->require(m.max_window_bytes >= m.initial_window_bytes && m.max_window_bytes <= 1e12, "max_window_bytes",
                "a number of bytes in [initial_window_bytes, 1e12]");
    m.congestion = ss->choice("congestion", congestion_names());
    m.queue_packets = ss->number("queue_packets", m.queue_packets);
    ss->require(m.queue_packets >= 1 && m.queue_packets <= 1e7 && m.queue_packets == std::floor(m.queue_packets),
                "queue_packets", "a whole number of packets in [1, 1e7]");
    m.packet_bytes = ss->number("packet_bytes", m.packet_bytes);
    ss->require(m.packet_bytes >= 576 && m.packet_bytes <= 65536, "packet_bytes", "a number of bytes in [576, 65536]");
    m.round_sending = ss->choice("round_sending", round_sending_names());
    ss->require(m.round_sending != FlowModel::RoundSending::kPaced || m.congestion == FlowModel::Congestion::kBbr,
                "round_sending", "burst or acked (paced is BBR's pacing: with \"congestion\": \"bbr\" only)");
    ss->done();
  }
  if (auto tcp = r.child("tcp")) {
    r.require(n.model.tcp, "tcp", "these options with \"model\": \"tcp\" only");
    FlowModel& m = n.model;
    m.latency_factor = tcp->number("latency_factor", m.latency_factor);
    tcp->require(m.latency_factor > 0 && m.latency_factor <= 1000, "latency_factor", "a number in (0, 1000]");
    m.bandwidth_factor = tcp->number("bandwidth_factor", m.bandwidth_factor);
    tcp->require(m.bandwidth_factor > 0 && m.bandwidth_factor <= 1, "bandwidth_factor", "a number in (0, 1]");
    m.weight_s_bytes = tcp->number("weight_s_bytes", m.weight_s_bytes);
    tcp->require(m.weight_s_bytes >= 0 && m.weight_s_bytes <= 1e12, "weight_s_bytes", "a number of bytes in [0, 1e12]");
    m.window_bytes = tcp->number("window_bytes", m.window_bytes);
    tcp->require(m.window_bytes >= 1 && m.window_bytes <= 1e12, "window_bytes", "a number of bytes in [1, 1e12]");
    tcp->done();
  }
  if (auto real = r.child("real")) {
    RealRunOptions& o = n.real;
    o.connections = real->choice("connections", connections_names());
    o.congestion = real->string("congestion", o.congestion);
    real->require(!o.congestion.empty() && o.congestion.size() <= 15 &&
                      std::all_of(o.congestion.begin(), o.congestion.end(),
                                  [](unsigned char c) { return std::isalnum(c) || c == '_'; }),
                  "congestion", "\"default\" or a congestion control's name (letters, digits, '_'; at most 15)");
    o.dilation = real->number("dilation", o.dilation);
    real->require(o.dilation >= 1 && o.dilation <= 1000, "dilation", "a time dilation in [1, 1000]");
    o.max_lag_ms = real->number("max_lag_ms", o.max_lag_ms);
    real->require(o.max_lag_ms > 0 && o.max_lag_ms <= 1e4, "max_lag_ms", "a number of virtual ms in (0, 1e4]");
    const int64_t q = real->integer("queue_packets", o.queue_packets);
    real->require(q >= 1 && q <= 1'000'000, "queue_packets", "an integer in [1, 1000000]");
    o.queue_packets = static_cast<int>(q);
    real->done();
  }
  r.done();
  return n;
}

void apply_overrides(nlohmann::json& doc, const std::vector<std::string>& sets, const std::string& file) {
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || s.empty() || s[0] != '/')
      throw InputError(file, s, "expected --set /json/pointer=value");
    std::string path = s.substr(0, eq), text = s.substr(eq + 1);
    if (std::count(path.begin(), path.end(), '/') > JsonReader::kMaxJsonDepth)
      throw InputError(file, path,
                       fmt::format("expected a JSON pointer at most {} levels deep", JsonReader::kMaxJsonDepth));
    nlohmann::json value;
    if (nlohmann::json::accept(text))
      value = JsonReader::parse_text(text, file, path);
    else
      value = text;
    try {
      doc[nlohmann::json::json_pointer(path)] = value;
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file, path, std::string("expected a JSON pointer into the scenario: ") + e.what());
    }
  }
}

// A TorchScript model, on the batches it will see: one training batch of
// /workload/batch samples and the evaluation's chunks of the test samples.
// Logits of another width than the classes are blamed on the model, unless
// the classes came from the data file's largest label and the model gives
// fewer: then that label is the likelier mistake, and the error names it.
void check_torchscript_model(const JsonReader& workload, Scenario& sc) {
  WorkloadSpec& w = sc.workload;
  const JsonReader m = workload.at("model");
  const DatasetInfo data = published_dataset(w);
  const int64_t tests = sc.eval.used_test_samples(data.test);
  std::vector<int64_t> batches = {w.batch, std::min(tests, kEvaluationChunk)};
  if (tests > kEvaluationChunk && tests % kEvaluationChunk) batches.push_back(tests % kEvaluationChunk);
  TorchScriptFacts facts;
  try {
    facts = torch_file_readers().model(w.model.torchscript, data, batches);
  } catch (const InputError& e) {
    throw m.inside_named_file(e, "torchscript", "TorchScript module");
  }
  w.model.state_bytes = facts.state_bytes;
  if (facts.outputs == data.classes) return;
  if (data.classes_from_labels && facts.outputs >= 2 && facts.outputs < data.classes)
    throw workload.at("dataset").inside_named_file(
        InputError(w.data_file, data.largest_label_at,
                   fmt::format("expected labels in [0, {}), the {} logits of {}; found {} (the file does not say its "
                               "classes, so they were taken as its largest label + 1: fix that label, or save "
                               "\"classes\" with the data)",
                               facts.outputs, facts.outputs, w.model.torchscript, data.classes - 1)),
        "tensors", "data file");
  throw m.inside_named_file(
      InputError(w.model.torchscript, "forward",
                 fmt::format("expected forward to return logits [n, {}], one per class of the data; it returns [n, {}]",
                             data.classes, facts.outputs)),
      "torchscript", "TorchScript module");
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file) {
  Scenario sc;
  sc.file = file;
  sc.document = doc;
  JsonReader r(sc.document, file);
  r.expect_object();
  sc.name = r.string("name");
  r.require(is_safe_name(sc.name), "name", kSafeNameRule);
  sc.description = r.string("description", "");
  int64_t seed = r.integer("seed", 1);
  r.require(seed >= 0, "seed", "an integer >= 0");
  sc.seed = static_cast<uint64_t>(seed);
  if (auto n = r.child("network")) sc.network = parse_network(*n, /*allow_profiles=*/true);
  if (auto c = r.child("compute")) sc.compute = parse_compute(*c);
  sc.workload = parse_workload(r.at("workload"));
  JsonReader methods = r.at("methods");
  std::set<std::string> labels;
  for (size_t i = 0; i < methods.array_size(); ++i) {
    sc.methods.push_back(parse_method(methods.element(i)));
    if (!labels.insert(sc.methods.back().label).second)
      methods.element(i).fail("a unique label (add \"label\" to tell two entries of one method apart)");
  }
  if (sc.methods.empty()) r.fail("methods", "at least one method");
  sc.stop = parse_stop(r.at("stop"));
  if (auto e = r.child("eval")) sc.eval = parse_eval(*e);
  if (auto l = r.child("limits")) sc.limits = parse_limits(*l);
  if (sc.workload.model.name == "torchscript") check_torchscript_model(r.at("workload"), sc);
  if (sc.stop.virtual_s > 0 && sc.stop.virtual_s / sc.eval.every_s > kMaxEvaluations)
    r.fail("eval", fmt::format("at most {:g} evaluations: /stop/virtual_s / /eval/every_s = {:.4g}", kMaxEvaluations,
                               sc.stop.virtual_s / sc.eval.every_s));
  sc.topology = build_topology(r.at("topology"), sc.network.links, Streams(sc.seed), sc.limits);
  if (sc.workload.partition.kind == PartitionSpec::Kind::kFile)
    sc.workload.partition.nodes =
        read_split_file(r.at("workload").at("partition"), sc.workload.partition.path, sc.topology.node_count());
  if (sc.workload.partition.by == PartitionSpec::By::kRegion) {
    std::vector<std::string> regions;
    sc.workload.partition.region_of = region_ids(sc.topology, &regions);
    r.at("workload")
        .at("partition")
        .require(regions.size() >= 2, "by",
                 "a topology with 2 regions or more for by region (a geo topology, or "
                 "a topology file whose nodes name their region); this one has one");
  }
  if (auto o = r.child("overrides")) apply_topology_overrides(*o, sc.topology, Streams(sc.seed), sc.compute.overrides);
  const Streams streams(sc.seed);
  PointBudget budget(sc.limits.profile_points);
  if (auto n = r.child("network")) {
    if (auto p = n->child("profiles")) sc.network.profiles = parse_profiles(*p, sc.topology, streams, budget);
    if (auto p = n->child("cross_traffic")) sc.network.cross_traffic = parse_cross_traffic(*p, sc.topology, streams);
  }
  if (auto c = r.child("compute"))
    if (auto p = c->child("profiles")) sc.compute.profiles = parse_compute_profiles(*p, sc.topology, streams, budget);
  check_wan_changes(r, sc);
  if (auto c = r.child("churn")) sc.churn = parse_churn(*c, sc.topology, streams);
  r.done();
  sc.inputs = r.inputs();
  if (sc.topology.node_count() < 2)
    for (size_t i = 0; i < sc.methods.size(); ++i)
      if (!sc.methods[i].type->trains_alone)
        r.fail("topology", fmt::format("at least 2 compute nodes for method {} (only a method that trains alone "
                                       "runs on one)",
                                       sc.methods[i].label));
  check_memory(sc);
  return sc;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& sets) {
  nlohmann::json doc = JsonReader::parse_file(file);
  apply_overrides(doc, sets, file);
  return parse_scenario(doc, file);
}

}  // namespace gossipsim
