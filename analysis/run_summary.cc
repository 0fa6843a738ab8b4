#include "analysis/run_summary.h"

#include "base/json_reader.h"

namespace gossipsim {

namespace {

// A number, or null (and absent) for "none".
std::optional<double> number_or_none(const JsonReader& r, const std::string& key) {
  if (!r.has(key) || r.value()[key].is_null()) return std::nullopt;
  return r.number(key);
}

// {"0.7": {"virtual_s": ..., "epochs": ..., "interpolated_s": ...} or null, ...}
std::optional<double> time_to(const JsonReader& times, const std::string& target, const char* key = "virtual_s") {
  if (!times.has(target) || times.value()[target].is_null()) return std::nullopt;
  const JsonReader hit = times.at(target);
  if (!hit.has(key)) return std::nullopt;
  return hit.number(key);
}

MethodResult read_method(const JsonReader& m) {
  m.expect_object();
  MethodResult r;
  r.method = m.string("method");
  r.label = m.string("label");
  if (auto traits = m.child("traits")) {
    traits->expect_object();
    r.reference = traits->boolean("reference", false);
  }
  r.final_accuracy = number_or_none(m, "final_accuracy");
  r.best_accuracy = number_or_none(m, "best_accuracy");
  if (auto by = m.child("final_accuracy_by")) {
    by->expect_object();
    r.final_node_mean = number_or_none(*by, "node_mean");
    r.final_node_min = number_or_none(*by, "node_min");
  }
  r.virtual_s = m.number("virtual_s");
  r.epochs = m.number("epochs");
  r.bytes_sent = m.integer("bytes_sent");
  r.transfers = m.integer("transfers");
  if (m.has("merges")) r.merges = m.integer("merges");
  if (auto staleness = m.child("staleness")) {
    staleness->expect_object();
    if (auto seconds = staleness->child("seconds"); seconds && !seconds->value().is_null())
      r.staleness_mean_s = seconds->number("mean");
  }
  const JsonReader chosen = m.at("time_to_accuracy");
  chosen.expect_object();
  std::optional<JsonReader> node_mean, node_min;
  if (auto by = m.child("time_to_accuracy_by")) {
    by->expect_object();
    node_mean = by->child("node_mean");
    node_min = by->child("node_min");
    for (auto* t : {&node_mean, &node_min})
      if (*t) (*t)->expect_object();
  }
  for (auto it = chosen.value().begin(); it != chosen.value().end(); ++it) {
    TargetTimes t;
    t.target = it.key();
    t.chosen_s = time_to(chosen, it.key());
    t.chosen_interp_s = time_to(chosen, it.key(), "interpolated_s");
    if (node_mean) {
      t.node_mean_s = time_to(*node_mean, it.key());
      t.node_mean_interp_s = time_to(*node_mean, it.key(), "interpolated_s");
    }
    if (node_min) {
      t.node_min_s = time_to(*node_min, it.key());
      t.node_min_interp_s = time_to(*node_min, it.key(), "interpolated_s");
    }
    r.targets.push_back(std::move(t));
  }
  if (m.has("starved_cuts")) r.starved_cuts = static_cast<int64_t>(m.at("starved_cuts").array_size());
  return r;
}

}  // namespace

RunSummary read_run_summary(const std::string& file) {
  const nlohmann::json doc = JsonReader::parse_file(file);
  const JsonReader r(doc, file);
  r.expect_object();
  RunSummary s;
  s.file = file;
  s.complete = r.boolean("complete", true);
  if (r.has("provenance")) {
    r.at("provenance").expect_object();
    s.provenance = doc["provenance"];
  }
  const JsonReader methods = r.at("methods");
  for (size_t i = 0; i < methods.array_size(); ++i) s.methods.push_back(read_method(methods.element(i)));
  return s;
}

}  // namespace gossipsim
