#include "sim/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

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

std::string choice(const JsonReader& r, const std::string& key, const std::vector<std::string>& allowed) {
  std::string v = r.string(key, allowed.front());
  one_of(r, key, v, allowed);
  return v;
}

ComputeOptions parse_compute(const JsonReader& r) {
  ComputeOptions c;
  if (auto v = r.child("iteration_ms")) c.iteration_ms = Distribution::parse(*v, Domain::kPositive);
  c.jitter = r.number("jitter", 0.0);
  r.require(c.jitter >= 0 && c.jitter <= 0.9, "jitter", "a number in [0, 0.9]");
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

WorkloadSpec parse_workload(const JsonReader& r) {
  WorkloadSpec w;
  w.dataset = choice(r, "dataset", {"fashion-mnist", "cifar100", "synthetic"});
  w.data_dir = r.string("data_dir", "");
  if (w.dataset == "cifar100" && w.data_dir.empty())
    r.fail("data_dir", "the folder holding CIFAR-100's train.bin and test.bin (required for cifar100)");
  w.coarse_labels = r.boolean("coarse_labels", false);
  w.train_samples = r.integer("train_samples", 0);
  r.require(w.train_samples >= 0, "train_samples", "an integer >= 0");
  if (auto s = r.child("synthetic")) {
    w.synthetic.classes = static_cast<int>(s->integer("classes", 10));
    s->require(w.synthetic.classes >= 2, "classes", "an integer >= 2");
    w.synthetic.shape = int_list(*s, "shape", w.synthetic.shape);
    w.synthetic.train = s->integer("train", w.synthetic.train);
    w.synthetic.test = s->integer("test", w.synthetic.test);
    s->require(w.synthetic.train >= 1, "train", "an integer >= 1");
    s->require(w.synthetic.test >= 1, "test", "an integer >= 1");
    w.synthetic.noise = s->number("noise", w.synthetic.noise);
    s->require(w.synthetic.noise >= 0, "noise", "a number >= 0");
    s->done();
  }
  if (r.has("model") && r.value()["model"].is_object()) {
    JsonReader m = r.at("model");
    w.model.name = m.string("name");
    w.model.hidden = int_list(m, "hidden", w.model.hidden);
    w.model.norm = choice(m, "norm", {"batch", "group"});
    one_of(m, "name", w.model.name, model_names());
    m.done();
  } else {
    w.model.name = r.string("model", "cnn");
    one_of(r, "model", w.model.name, model_names());
  }
  w.batch = r.integer("batch", 32);
  r.require(w.batch >= 1, "batch", "an integer >= 1");
  if (auto o = r.child("optimizer")) {
    auto& opt = w.optimizer;
    opt.lr = o->number("lr", opt.lr);
    o->require(opt.lr > 0, "lr", "a number > 0");
    opt.momentum = o->number("momentum", opt.momentum);
    o->require(opt.momentum >= 0 && opt.momentum < 1, "momentum", "a number in [0, 1)");
    opt.weight_decay = o->number("weight_decay", opt.weight_decay);
    o->require(opt.weight_decay >= 0, "weight_decay", "a number >= 0");
    if (auto s = o->child("schedule")) {
      std::string kind = choice(*s, "kind", {"constant", "step", "cosine"});
      opt.schedule.kind = kind == "step" ? LrSchedule::Kind::kStep
                          : kind == "cosine" ? LrSchedule::Kind::kCosine : LrSchedule::Kind::kConstant;
      opt.schedule.every_epochs = s->number("every_epochs", opt.schedule.every_epochs);
      s->require(opt.schedule.every_epochs > 0, "every_epochs", "a number > 0");
      opt.schedule.gamma = s->number("gamma", opt.schedule.gamma);
      s->require(opt.schedule.gamma > 0, "gamma", "a number > 0");
      opt.schedule.epochs = s->number("epochs", opt.schedule.epochs);
      s->require(opt.schedule.epochs > 0, "epochs", "a number > 0");
      s->done();
    }
    o->done();
  }
  if (auto p = r.child("partition")) {
    std::string kind = choice(*p, "kind", {"iid", "dirichlet", "shards"});
    w.partition.kind = kind == "dirichlet" ? PartitionSpec::Kind::kDirichlet
                       : kind == "shards" ? PartitionSpec::Kind::kShards : PartitionSpec::Kind::kIid;
    w.partition.alpha = p->number("alpha", w.partition.alpha);
    p->require(w.partition.alpha > 0, "alpha", "a number > 0");
    w.partition.classes_per_node = static_cast<int>(p->integer("classes_per_node", w.partition.classes_per_node));
    p->require(w.partition.classes_per_node >= 1, "classes_per_node", "an integer >= 1");
    p->done();
  }
  w.model_bytes = r.integer("model_bytes", 0);
  r.require(w.model_bytes >= 0, "model_bytes", "an integer >= 0");
  w.device = choice(r, "device", {"cpu", "cuda"});
  w.workers = static_cast<int>(r.integer("workers", 1));
  r.require(w.workers >= 1 && w.workers <= 256, "workers", "an integer in [1, 256]");
  r.done();
  return w;
}

MethodOptions parse_method(const JsonReader& r) {
  MethodOptions m;
  if (r.value().is_string()) {
    m.name = r.as_string();
    one_of(r, "", m.name, method_names());
  } else {
    r.expect_object();
    m.name = r.string("name");
    one_of(r, "name", m.name, method_names());
    m.label = r.string("label", "");
    m.local_steps = static_cast<int>(r.integer("local_steps", 1));
    r.require(m.local_steps >= 1, "local_steps", "an integer >= 1");
    m.merge = choice(r, "merge", {"average", "gosgd"});
    if (m.name == "gossip-scheduled") {
      m.selection = choice(r, "selection", {"min-finish", "random-enabled", "weighted"});
      m.info = choice(r, "info", {"oracle", "gossiped"});
      m.reservation = choice(r, "reservation", {"direction", "node"});
      m.exchange = choice(r, "exchange", {"push", "push-pull"});
      m.ewma = r.number("ewma", m.ewma);
      r.require(m.ewma > 0 && m.ewma <= 1, "ewma", "a number in (0, 1]");
    }
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
  r.require(s.virtual_s >= 0, "virtual_s", "a number >= 0");
  r.require(s.epochs >= 0, "epochs", "a number >= 0");
  r.require(s.target_accuracy >= 0 && s.target_accuracy <= 1, "target_accuracy", "a number in [0, 1]");
  r.require(s.wall_s >= 0, "wall_s", "a number >= 0");
  if (s.virtual_s == 0 && s.epochs == 0) r.fail("a limit: virtual_s or epochs (> 0)");
  r.done();
  return s;
}

EvalOptions parse_eval(const JsonReader& r) {
  EvalOptions e;
  e.every_s = r.number("every_s", e.every_s);
  r.require(e.every_s > 0, "every_s", "a number > 0");
  e.test_samples = r.integer("test_samples", e.test_samples);
  r.require(e.test_samples >= 0, "test_samples", "an integer >= 0");
  if (r.has("targets")) {
    e.targets = r.numbers("targets");
    for (size_t i = 0; i < e.targets.size(); ++i)
      if (!(e.targets[i] > 0 && e.targets[i] <= 1)) r.at("targets").fail(std::to_string(i), "an accuracy in (0, 1]");
  }
  e.per_node = r.boolean("per_node", true);
  r.done();
  return e;
}

}  // namespace

NetworkOptions parse_network(const JsonReader& r) {
  NetworkOptions n;
  if (auto access = r.child("access")) {
    if (auto v = access->child("up_mbps")) n.links.up_mbps = Distribution::parse(*v, Domain::kPositive);
    if (auto v = access->child("down_mbps")) n.links.down_mbps = Distribution::parse(*v, Domain::kPositive);
    access->done();
  }
  if (auto links = r.child("links")) {
    if (auto v = links->child("latency_ms")) n.links.latency_ms = Distribution::parse(*v, Domain::kNonNegative);
    if (auto v = links->child("bandwidth_mbps")) n.links.bandwidth_mbps = Distribution::parse(*v, Domain::kPositive);
    links->done();
  }
  r.done();
  return n;
}

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names = {"gossip", "gossip-overlap", "gossip-scheduled", "allreduce",
                                                 "single"};
  return names;
}

void apply_overrides(nlohmann::json& doc, const std::vector<std::string>& sets, const std::string& file) {
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || s.empty() || s[0] != '/')
      throw InputError(file, s, "--set /json/pointer=value");
    std::string path = s.substr(0, eq), text = s.substr(eq + 1);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      value = text;
    }
    try {
      doc[nlohmann::json::json_pointer(path)] = value;
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file, path, std::string("a JSON pointer into the scenario: ") + e.what());
    }
  }
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file) {
  Scenario sc;
  sc.file = file;
  sc.document = doc;
  JsonReader r(sc.document, file);
  r.expect_object();
  sc.name = r.string("name");
  sc.description = r.string("description", "");
  int64_t seed = r.integer("seed", 1);
  r.require(seed >= 0, "seed", "an integer >= 0");
  sc.seed = static_cast<uint64_t>(seed);
  if (auto n = r.child("network")) sc.network = parse_network(*n);
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
  sc.topology = build_topology(r.at("topology"), sc.network.links, Streams(sc.seed));
  r.done();
  return sc;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& sets) {
  nlohmann::json doc = JsonReader::parse_file(file);
  apply_overrides(doc, sets, file);
  return parse_scenario(doc, file);
}

}  // namespace gossipsim
