#include "analysis/sweep_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "analysis/csv.h"
#include "analysis/provenance.h"
#include "analysis/run_summary.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

// The cells of every line after the header of a CSV without quoted cells
// (the comm matrices); none where the file is missing.
std::vector<std::vector<std::string>> data_rows(const std::string& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    auto& cells = rows.emplace_back();
    size_t from = 0;
    for (size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
  }
  return rows;
}

}  // namespace

double effective_partners(const std::string& comm_matrix_csv) {
  // Per receiving node, the share of its finished transfers from each
  // sender; its effective number of partners is exp of that distribution's
  // entropy (k equal senders: k; one sender: 1). The mean over the nodes
  // that received anything; NaN where none did or the file is missing.
  std::map<std::string, std::vector<double>> received;    // dst -> transfers from each src
  for (const auto& cells : data_rows(comm_matrix_csv)) {  // method,src,dst,transfers,bytes,lost
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

double cross_region_share(const std::string& comm_regions_csv) {
  // method,src_region,dst_region,transfers,bytes: the finished transfers
  // between two different regions over all finished transfers.
  double across = 0, total = 0;
  for (const auto& cells : data_rows(comm_regions_csv)) {
    if (cells.size() < 5) continue;
    const double transfers = std::strtod(cells[3].c_str(), nullptr);
    total += transfers;
    if (cells[1] != cells[2]) across += transfers;
  }
  return total > 0 ? across / total : std::nan("");
}

namespace {

std::string number(double x) { return fmt::format("{:.6g}", x); }
template <class T>
std::string number(const std::optional<T>& x) {
  return x ? number(static_cast<double>(*x)) : std::string();
}

}  // namespace

std::string gather_sweep_csv(const Sweep& sweep, const std::string& out) {
  std::string csv = "point";
  for (const auto& a : sweep.axes) csv += "," + csv_cell(a.path);
  csv +=
      ",method,label,reference,final_accuracy,best_accuracy,virtual_s,epochs,bytes_sent,transfers,target,"
      "time_to_target_s,time_to_target_node_mean_s,time_to_target_node_min_s,merges,staleness_mean_s,"
      "partners,starved_cuts,time_to_target_interp_s,time_to_target_node_mean_interp_s,"
      "time_to_target_node_min_interp_s,final_accuracy_node_mean,final_accuracy_node_min,cross_region\n";
  for (size_t p = 0; p < sweep.size(); ++p) {
    const fs::path point = fs::path(out) / "points" / std::to_string(p);
    if (!fs::exists(point / "summary.json")) continue;
    const RunSummary s = read_run_summary((point / "summary.json").string());
    const nlohmann::json v = sweep.values(p);
    std::string prefix = std::to_string(p);
    for (const auto& a : sweep.axes) prefix += "," + csv_cell(v[a.path].dump());
    for (const MethodResult& m : s.methods) {
      const std::string common =
          fmt::format("{},{},{},{},{},{},{},{},{},{}", prefix, csv_cell(m.method), csv_cell(m.label),
                      m.reference ? 1 : 0, number(m.final_accuracy), number(m.best_accuracy), number(m.virtual_s),
                      number(m.epochs), m.bytes_sent, m.transfers);
      // Who talks to whom: each node's effective number of senders.
      const double partners = effective_partners((point / m.label / "comm_matrix.csv").string());
      const std::string mechanism =
          fmt::format(",{},{},{},{}", m.merges ? std::to_string(*m.merges) : "", number(m.staleness_mean_s),
                      std::isfinite(partners) ? fmt::format("{:.4g}", partners) : "", m.starved_cuts);
      // How much of it crossed between regions (empty without regions).
      const double across = cross_region_share((point / m.label / "comm_regions.csv").string());
      const std::string finals = fmt::format(",{},{},{}", number(m.final_node_mean), number(m.final_node_min),
                                             std::isfinite(across) ? fmt::format("{:.4g}", across) : "");
      if (m.targets.empty()) csv += common + ",,,," + mechanism + ",,," + finals + "\n";
      for (const TargetTimes& t : m.targets)
        csv += fmt::format("{},{},{},{},{}{},{},{},{}{}\n", common, csv_cell(t.target), number(t.chosen_s),
                           number(t.node_mean_s), number(t.node_min_s), mechanism, number(t.chosen_interp_s),
                           number(t.node_mean_interp_s), number(t.node_min_interp_s), finals);
    }
  }
  return csv;
}

std::string gather_sweep_provenance(const Sweep& sweep, const std::string& out) {
  nlohmann::json entries = nlohmann::json::array();
  for (size_t p = 0; p < sweep.size(); ++p) {
    const fs::path summary = fs::path(out) / "points" / std::to_string(p) / "summary.json";
    if (!fs::exists(summary)) continue;
    const nlohmann::json provenance = read_run_summary(summary.string()).provenance;
    const nlohmann::json made = comparable_provenance(provenance);
    auto same = std::find_if(entries.begin(), entries.end(),
                             [&](const nlohmann::json& e) { return comparable_provenance(e["provenance"]) == made; });
    if (same == entries.end()) {
      entries.push_back({{"provenance", provenance}, {"points", {p}}});
    } else {
      (*same)["points"].push_back(p);
    }
  }
  return nlohmann::json{{"provenances", entries}}.dump(1) + "\n";
}

std::string sweep_analysis_json(const Sweep& sweep) {
  nlohmann::json a = {{"primary", sweep.analysis.primary}};
  if (!sweep.analysis.reference.empty()) a["reference"] = sweep.analysis.reference;
  if (!sweep.analysis.family.empty()) a["family"] = sweep.analysis.family;
  if (sweep.analysis.target) a["target"] = *sweep.analysis.target;
  return a.dump(1) + "\n";
}

}  // namespace gossipsim
