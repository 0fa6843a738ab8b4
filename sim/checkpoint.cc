#include "sim/checkpoint.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/binary_io.h"
#include "base/error.h"
#include "base/files.h"
#include "base/json_reader.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

// Doubles as hexadecimal text: exact, and NaN and infinities survive.
std::string exact(double v) { return fmt::format("{:a}", v); }
double exact(const nlohmann::json& j) {
  if (!j.is_string()) throw InputError("checkpoint state.json", "", "expected a number written as text");
  return std::strtod(j.get<std::string>().c_str(), nullptr);
}

// Every field of an Evaluation. Checkpoints written before the consensus
// split was kept have rows of 10 values; read back, their split is NaN
// (the runner refuses them where the run has regions to split by).
nlohmann::json to_json(const Evaluation& e) {
  return {exact(e.accuracy),
          exact(e.loss),
          e.per_node,
          exact(e.node_accuracy_mean),
          exact(e.node_accuracy_min),
          exact(e.node_accuracy_max),
          exact(e.node_loss_mean),
          exact(e.node_loss_min),
          exact(e.node_loss_max),
          exact(e.consensus),
          exact(e.consensus_within),
          exact(e.consensus_between)};
}

Evaluation evaluation_from(const nlohmann::json& j) {
  if (!j.is_array() || (j.size() != 12 && j.size() != 10) || !j[2].is_boolean())
    throw InputError("checkpoint state.json", "/evaluations", "expected rows of 12 values");
  Evaluation e;
  e.accuracy = exact(j[0]);
  e.loss = exact(j[1]);
  e.per_node = j[2].get<bool>();
  e.node_accuracy_mean = exact(j[3]);
  e.node_accuracy_min = exact(j[4]);
  e.node_accuracy_max = exact(j[5]);
  e.node_loss_mean = exact(j[6]);
  e.node_loss_min = exact(j[7]);
  e.node_loss_max = exact(j[8]);
  e.consensus = exact(j[9]);
  if (j.size() == 12) {
    e.consensus_within = exact(j[10]);
    e.consensus_between = exact(j[11]);
  }
  return e;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string(), "", "expected a checkpoint file (missing)");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

void write_method_checkpoint(const fs::path& dir, const MethodCheckpoint& c) {
  nlohmann::json evaluations = nlohmann::json::array();
  for (const auto& e : c.evaluations) evaluations.push_back(to_json(e));
  nlohmann::json numbers = nlohmann::json::array();
  for (const auto& s : c.snapshots) numbers.push_back(s.first);
  nlohmann::json state = {{"label", c.label},           {"events", c.events},         {"now_ns", c.now.ns()},
                          {"iterations", c.iterations}, {"bytes_sent", c.bytes_sent}, {"transfers", c.transfers},
                          {"merges", c.merges},         {"evaluations", evaluations}, {"snapshots", numbers}};
  BinaryWriter snapshots;
  for (const auto& s : c.snapshots) {
    snapshots.put<uint64_t>(s.first);
    snapshots.put_string(s.second);
  }
  write_file_atomically(dir / "learner.bin", c.learner_state);
  write_file_atomically(dir / "snapshots.bin", snapshots.bytes());
  write_file_atomically(dir / "state.json", state.dump(1) + "\n");
}

MethodCheckpoint read_method_checkpoint(const fs::path& dir) {
  const std::string file = (dir / "state.json").string();
  nlohmann::json state = JsonReader::parse_file(file);
  MethodCheckpoint c;
  c.source = dir.string();
  try {
    c.label = state.at("label").get<std::string>();
    c.events = state.at("events").get<uint64_t>();
    c.now = Time::ns(state.at("now_ns").get<int64_t>());
    c.iterations = state.at("iterations").get<int64_t>();
    c.bytes_sent = state.at("bytes_sent").get<int64_t>();
    c.transfers = state.at("transfers").get<int64_t>();
    c.merges = state.at("merges").get<int64_t>();
    for (const auto& e : state.at("evaluations")) c.evaluations.push_back(evaluation_from(e));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, "", std::string("expected a checkpoint written by gossipsim: ") + e.what());
  }
  c.learner_state = read_all(dir / "learner.bin");
  const std::string bytes = read_all(dir / "snapshots.bin");
  BinaryReader r(bytes, (dir / "snapshots.bin").string());
  while (!r.at_end()) {
    uint64_t number = r.get<uint64_t>();
    c.snapshots.emplace_back(number, r.get_string());
  }
  return c;
}

void TrackingLearner::step(NodeId n, Time at) {
  if (!replaying_) inner_.step(n, at);
}

void TrackingLearner::step_all(const std::vector<NodeId>& nodes, Time at) {
  if (!replaying_) inner_.step_all(nodes, at);
}

SnapshotPtr TrackingLearner::snapshot(NodeId n) {
  auto s = std::make_shared<Tracked>();
  s->number = next_number_++;
  if (!replaying_) s->real = inner_.snapshot(n);
  live_.push_back(s);
  if (live_.size() >= prune_at_) prune();
  return s;
}

void TrackingLearner::merge(NodeId receiver, const SnapshotPtr& s, double w_self, double w_other) {
  if (replaying_) return;
  const auto& t = static_cast<const Tracked&>(*s);
  GOSSIPSIM_CHECK(t.real, "a model in flight at the checkpoint was not restored");
  inner_.merge(receiver, t.real, w_self, w_other);
}

void TrackingLearner::average(const std::vector<NodeId>& nodes) {
  if (!replaying_) inner_.average(nodes);
}

void TrackingLearner::reset_node(NodeId n, const std::vector<NodeId>& from) {
  if (!replaying_) inner_.reset_node(n, from);
}

PendingEvaluation TrackingLearner::evaluate_async(bool per_node) {
  if (!replaying_) return inner_.evaluate_async(per_node);
  Evaluation e;
  e.accuracy = e.loss = e.consensus = NAN;
  std::promise<Evaluation> ready;
  ready.set_value(e);
  return ready.get_future().share();
}

std::string TrackingLearner::save_snapshot(const ModelSnapshot& s) {
  return inner_.save_snapshot(*static_cast<const Tracked&>(s).real);
}

SnapshotPtr TrackingLearner::load_snapshot(const std::string& bytes) {
  auto s = std::make_shared<Tracked>();
  s->number = next_number_++;
  s->real = inner_.load_snapshot(bytes);
  live_.push_back(s);
  return s;
}

void TrackingLearner::prune() {
  std::vector<std::weak_ptr<Tracked>> kept;
  for (auto& w : live_)
    if (!w.expired()) kept.push_back(std::move(w));
  live_ = std::move(kept);
  prune_at_ = std::max<size_t>(1024, 2 * live_.size());
}

std::vector<std::pair<uint64_t, std::string>> TrackingLearner::save_live_snapshots() {
  prune();
  std::vector<std::pair<uint64_t, std::string>> out;
  for (auto& w : live_)
    if (auto s = w.lock()) {
      GOSSIPSIM_CHECK(s->real, "a model in flight was not restored before a checkpoint");
      out.emplace_back(s->number, inner_.save_snapshot(*s->real));
    }
  return out;
}

void TrackingLearner::restore_live_snapshots(const std::vector<std::pair<uint64_t, std::string>>& saved) {
  prune();
  size_t i = 0;
  for (auto& w : live_) {
    auto s = w.lock();
    if (!s) continue;
    while (i < saved.size() && saved[i].first < s->number) ++i;
    if (i == saved.size() || saved[i].first != s->number)
      throw InputError("checkpoint", "",
                       fmt::format("expected the model in flight numbered {} in the checkpoint "
                                   "(it was written by another build or scenario)",
                                   s->number));
    s->real = inner_.load_snapshot(saved[i].second);
  }
}

}  // namespace gossipsim
