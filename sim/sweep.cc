#include "sim/sweep.h"

#include "sim/base/safe_name.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "sim/base/json_reader.h"

namespace gossipsim {

namespace fs = std::filesystem;

size_t Sweep::size() const {
  size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

nlohmann::json Sweep::values(size_t index) const {
  nlohmann::json v = nlohmann::json::object();
  for (size_t k = axes.size(); k-- > 0;) {
    const auto& a = axes[k];
    v[a.path] = a.values[index % a.values.size()];
    index /= a.values.size();
  }
  return v;
}

std::vector<std::string> Sweep::overrides(size_t index) const {
  std::vector<std::string> out;
  for (auto it = fixed.begin(); it != fixed.end(); ++it) out.push_back(it.key() + "=" + it.value().dump());
  nlohmann::json v = values(index);
  for (const auto& a : axes) out.push_back(a.path + "=" + v[a.path].dump());
  return out;
}

Sweep load_sweep(const std::string& file) {
  nlohmann::json doc = JsonReader::parse_file(file);
  JsonReader r(doc, file);
  r.expect_object();
  Sweep s;
  s.file = file;
  s.name = r.string("name");
  r.require(is_safe_name(s.name), "name", kSafeNameRule);
  fs::path base = r.string("base");
  if (base.is_relative()) base = fs::path(file).parent_path() / base;
  if (!fs::exists(base)) r.fail("base", "the path of a scenario file (" + base.string() + " not found)");
  s.base = base.string();
  s.fixed = nlohmann::json::object();
  if (auto set = r.child("set")) {
    set->expect_object();
    for (auto it = set->value().begin(); it != set->value().end(); ++it) {
      if (it.key().empty() || it.key()[0] != '/') set->fail(it.key(), "a JSON pointer such as /stop/virtual_s");
      s.fixed[it.key()] = it.value();
      set->has(it.key());
    }
    set->done();
  }
  JsonReader axes = r.at("axes");
  for (size_t i = 0; i < axes.array_size(); ++i) {
    JsonReader a = axes.element(i);
    SweepAxis axis;
    axis.path = a.string("path");
    if (axis.path.empty() || axis.path[0] != '/') a.fail("path", "a JSON pointer such as /seed");
    JsonReader values = a.at("values");
    for (size_t k = 0; k < values.array_size(); ++k) axis.values.push_back(values.element(k).value());
    if (axis.values.empty()) a.fail("values", "a non-empty array");
    a.done();
    s.axes.push_back(std::move(axis));
  }
  if (s.axes.empty()) r.fail("axes", "at least one axis");
  double points = 1;
  for (const auto& a : s.axes) points *= static_cast<double>(a.values.size());
  if (points > kMaxSweepPoints)
    r.fail("axes", fmt::format("a grid of at most {} points (these axes make {:.0f})", kMaxSweepPoints, points));
  r.string("description", "");
  r.done();
  return s;
}

std::vector<size_t> shard_points(size_t total, size_t shard, size_t shards) {
  std::vector<size_t> out;
  for (size_t i = shard; i < total; i += shards) out.push_back(i);
  return out;
}

std::pair<size_t, size_t> parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      size_t i = std::stoul(text.substr(0, slash)), n = std::stoul(text.substr(slash + 1));
      if (n >= 1 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw InputError("", "--shard", "i/n with 0 <= i < n, e.g. 0/4");
}

double effective_partners(const std::string& comm_matrix_csv) {
  // Per receiving node, the share of its finished transfers from each
  // sender; its effective number of partners is exp of that distribution's
  // entropy (k equal senders: k; one sender: 1). The mean over the nodes
  // that received anything; NaN where none did or the file is missing.
  std::ifstream in(comm_matrix_csv);
  if (!in) return std::nan("");
  std::map<std::string, std::vector<double>> received;  // dst -> transfers from each src
  std::string line;
  std::getline(in, line);  // method,src,dst,transfers,bytes,lost
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    size_t from = 0;
    for (size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
    if (cells.size() < 4) continue;
    const double transfers = std::strtod(cells[3].c_str(), nullptr);
    if (transfers > 0) received[cells[2]].push_back(transfers);
  }
  if (received.empty()) return std::nan("");
  double sum = 0;
  for (const auto& [dst, counts] : received) {
    double total = 0, entropy = 0;
    for (double c : counts) total += c;
    for (double c : counts) entropy -= c / total * std::log(c / total);
    sum += std::exp(entropy);
  }
  return sum / static_cast<double>(received.size());
}

std::string gather_sweep_csv(const Sweep& sweep, const std::string& out) {
  std::string csv = "point";
  for (const auto& a : sweep.axes) csv += "," + a.path;
  csv += ",method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,bytes_sent,transfers,target,"
         "time_to_target_s,time_to_target_node_mean_s,time_to_target_node_min_s,merges,staleness_mean_s,"
         "partners\n";
  for (size_t p = 0; p < sweep.size(); ++p) {
    fs::path summary = fs::path(out) / "points" / std::to_string(p) / "summary.json";
    if (!fs::exists(summary)) continue;
    nlohmann::json s = JsonReader::parse_file(summary.string());
    try {
    nlohmann::json v = sweep.values(p);
    std::string prefix = std::to_string(p);
    for (const auto& a : sweep.axes) {
      std::string cell = v[a.path].dump();
      if (cell.find(',') != std::string::npos || cell.find('"') != std::string::npos) {
        std::string quoted = "\"";
        for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        cell = quoted + "\"";
      }
      prefix += "," + cell;
    }
    for (const auto& m : s["methods"]) {
      auto num = [](const nlohmann::json& x) { return x.is_number() ? fmt::format("{:.6g}", x.get<double>()) : std::string(); };
      // Wall time is left out: resumed and straight-through sweeps gather alike.
      // reference: the method under study (its row's trait), 1 or 0.
      const bool reference = m.contains("traits") && m["traits"].value("reference", false);
      std::string common = fmt::format("{},{},{},{},{},{},{},{},{},{}", prefix, m["method"].get<std::string>(),
                                       m["label"].get<std::string>(), reference ? 1 : 0, num(m["final_accuracy"]),
                                       num(m["best_accuracy"]),
                                       num(m["virtual_s"]), num(m["epochs"]), m["bytes_sent"].get<int64_t>(),
                                       m["transfers"].get<int64_t>());
      // What the method did, beside how fast it learned: the merges and
      // their mean staleness in seconds (the mechanism a map's cell is read
      // by; empty for a method that merges nothing, or a summary without them).
      const std::string merges = m.contains("merges") && m["merges"].is_number() ? num(m["merges"]) : "";
      const std::string staleness =
          m.contains("staleness") && m["staleness"].is_object() && m["staleness"].contains("seconds")
              ? num(m["staleness"]["seconds"].value("mean", nlohmann::json()))
              : "";
      // Who talks to whom: each node's effective number of senders.
      const double partners = effective_partners(
          (fs::path(out) / "points" / std::to_string(p) / m["label"].get<std::string>() / "comm_matrix.csv").string());
      const std::string mechanism =
          "," + merges + "," + staleness + "," + (std::isfinite(partners) ? fmt::format("{:.4g}", partners) : "");
      const auto& targets = m["time_to_accuracy"];
      // The nodes' own models too (summary's time_to_accuracy_by; empty
      // where the run did not evaluate them, or predates it).
      auto by = [&](const char* metric, const std::string& target) -> std::string {
        if (!m.contains("time_to_accuracy_by") || !m["time_to_accuracy_by"].contains(metric)) return "";
        const auto& t = m["time_to_accuracy_by"][metric];
        return t.contains(target) && !t[target].is_null() ? num(t[target]["virtual_s"]) : "";
      };
      if (targets.empty()) csv += common + ",,,," + mechanism + "\n";
      for (auto it = targets.begin(); it != targets.end(); ++it)
        csv += common + "," + it.key() + "," + (it.value().is_null() ? "" : num(it.value()["virtual_s"])) + "," +
               by("node_mean", it.key()) + "," + by("node_min", it.key()) + mechanism + "\n";
    }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(summary.string(), "", std::string("expected a summary written by gossipsim run: ") + e.what());
    }
  }
  return csv;
}

}  // namespace gossipsim
