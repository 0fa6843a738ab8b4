#include "analysis/writers.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <fstream>
#include <map>

#include "analysis/csv.h"
#include "analysis/summary.h"
#include "base/files.h"

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

std::string seconds_text(Time t) {
  const int64_t ns = t.ns();
  return fmt::format("{}{}.{:09d}", ns < 0 ? "-" : "", std::llabs(ns) / 1000000000, std::llabs(ns) % 1000000000);
}

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : ""; }

}  // namespace

void write_metrics_csv(const fs::path& file, const MethodRun& run) {
  TextFile out(file);
  out.print(
      "method,time_s,epochs,iterations,accuracy,loss,node_accuracy_mean,node_accuracy_min,node_accuracy_max,"
      "node_loss_mean,node_loss_min,node_loss_max,consensus,bytes_sent,transfers,merges\n");
  for (const auto& r : run.recorder.metrics) {
    const Evaluation& e = r.eval;
    auto node = [&](double v) { return e.per_node ? number(v) : std::string(); };
    out.print("{},{},{:.6f},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", run.method.label, seconds_text(r.time), r.epochs,
              r.iterations, number(e.accuracy), number(e.loss), node(e.node_accuracy_mean), node(e.node_accuracy_min),
              node(e.node_accuracy_max), node(e.node_loss_mean), node(e.node_loss_min), node(e.node_loss_max),
              number(e.consensus), r.bytes_sent, r.transfers, r.merges);
  }
  out.close();
}

void write_transfers_csv(const fs::path& file, const MethodRun& run) {
  TextFile out(file);
  out.print("method,src,dst,bytes,snapshot_s,start_s,finish_s,merge_s,staleness_s,staleness_iterations\n");
  for (const auto& t : run.recorder.transfers) {
    out.print("{},n{},n{},{},{},{},{},{},{},{}\n", run.method.label, t.src, t.dst, t.bytes, seconds_text(t.snapshot),
              seconds_text(t.start), t.finished ? seconds_text(t.finish) : "", t.merged ? seconds_text(t.merge) : "",
              t.merged ? seconds_text(t.merge - t.snapshot) : "",
              t.merged ? std::to_string(t.sender_iterations_at_merge - t.sender_iterations_at_snapshot) : "");
  }
  out.close();
}

void write_nodes_csv(const fs::path& file, const MethodRun& run) {
  TextFile out(file);
  out.print("method,node,compute_s,idle_s,communicating_s,iterations,sent,received,down_s\n");
  const auto& rows = run.recorder.nodes;
  for (size_t n = 0; n < rows.size(); ++n) {
    const auto& r = rows[n];
    out.print("{},n{},{},{},{},{},{},{},{}\n", run.method.label, n, seconds_text(r.compute), seconds_text(r.idle),
              seconds_text(r.communicating), r.iterations, r.sent, r.received, seconds_text(r.down));
  }
  out.close();
}

void write_events_csv(const fs::path& file, const MethodRun& run) {
  TextFile out(file);
  out.print("method,time_s,kind,target,value,detail\n");
  for (const auto& e : run.recorder.network_events)
    out.print("{},{},{},{},{:.9g},{}\n", run.method.label, seconds_text(e.time), e.kind, csv_cell(e.target), e.value,
              csv_cell(e.detail));
  out.close();
}

void write_trace_json(const fs::path& file, const MethodRun& run) {
  TextFile out(file);
  static const char* tracks[] = {"compute", "send", "receive"};
  out.print("{{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  bool first = true;
  auto sep = [&] {
    if (!first) out.print(",\n");
    first = false;
  };
  for (size_t n = 0; n < run.recorder.nodes.size(); ++n) {
    sep();
    // The node's region beside its name where it has one (a geo topology), so
    // that a timeline (Perfetto, plot's) shows who sits where.
    const auto& r = run.recorder;
    const std::string region = n < r.node_group.size() ? " " + r.group_names[r.node_group[n]] : "";
    out.print(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"n{}{}"}}}})", n, n, region);
    for (int t = 0; t < 3; ++t) {
      sep();
      out.print(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", n, t, tracks[t]);
    }
  }
  for (const auto& e : run.recorder.trace) {
    sep();
    // Trace timestamps are microseconds.
    std::string ts = fmt::format("{:.3f}", e.ts.ns() / 1000.0);
    switch (e.ph) {
      case 'X':
        out.print(R"({{"ph":"X","name":"{}","pid":{},"tid":{},"ts":{},"dur":{:.3f}}})", e.name, e.node, int(e.track),
                  ts, e.dur.ns() / 1000.0);
        break;
      case 's':
      case 'f':
        out.print(R"({{"ph":"{}","name":"{}","cat":"transfer","id":{},"pid":{},"tid":{},"ts":{}{}}})", e.ph, e.name,
                  e.id, e.node, int(e.track), ts, e.ph == 'f' ? R"(,"bp":"e")" : "");
        break;
      default:
        out.print(R"({{"ph":"i","s":"t","name":"{}","pid":{},"tid":{},"ts":{}}})", e.name, e.node, int(e.track), ts);
    }
  }
  out.print("\n]}}\n");
  out.close();
}

void write_comm_matrix_csv(const fs::path& file, const MethodRun& run) {
  // Pairs in order of their first transfer would depend on timing; sorted by ids.
  std::map<std::pair<int64_t, int64_t>, std::array<int64_t, 3>> pairs;  // transfers, bytes, lost
  for (const auto& t : run.recorder.transfers) {
    auto& p = pairs[{t.src, t.dst}];
    if (t.lost)
      ++p[2];
    else if (t.finished)
      ++p[0], p[1] += t.bytes;
  }
  TextFile out(file);
  out.print("method,src,dst,transfers,bytes,lost\n");
  for (const auto& [k, v] : pairs)
    out.print("{},n{},n{},{},{},{}\n", run.method.label, k.first, k.second, v[0], v[1], v[2]);
  out.close();
}

void write_region_outputs(const fs::path& dir, const MethodRun& run) {
  const auto& rec = run.recorder;
  if (rec.node_group.empty()) return;
  std::map<std::pair<int, int>, std::array<int64_t, 2>> pairs;
  for (const auto& t : rec.transfers)
    if (t.finished && !t.lost) {
      auto& p = pairs[{rec.node_group[t.src], rec.node_group[t.dst]}];
      ++p[0];
      p[1] += t.bytes;
    }
  TextFile matrix(dir / "comm_regions.csv");
  matrix.print("method,src_region,dst_region,transfers,bytes\n");
  for (size_t a = 0; a < rec.group_names.size(); ++a)
    for (size_t b = 0; b < rec.group_names.size(); ++b) {
      auto it = pairs.find({static_cast<int>(a), static_cast<int>(b)});
      const std::array<int64_t, 2> v = it == pairs.end() ? std::array<int64_t, 2>{0, 0} : it->second;
      matrix.print("{},{},{},{},{}\n", run.method.label, rec.group_names[a], rec.group_names[b], v[0], v[1]);
    }
  matrix.close();
  TextFile consensus(dir / "consensus_regions.csv");
  consensus.print("method,time_s,consensus,within,between\n");
  for (const auto& r : rec.metrics)
    consensus.print("{},{},{},{},{}\n", run.method.label, seconds_text(r.time), number(r.eval.consensus),
                    number(r.eval.consensus_within), number(r.eval.consensus_between));
  consensus.close();
}

void write_method_outputs(const fs::path& dir, const MethodRun& run) {
  make_folders(dir);
  write_metrics_csv(dir / "metrics.csv", run);
  write_transfers_csv(dir / "transfers.csv", run);
  write_nodes_csv(dir / "nodes.csv", run);
  write_events_csv(dir / "events.csv", run);
  write_comm_matrix_csv(dir / "comm_matrix.csv", run);
  write_region_outputs(dir, run);
  if (run.recorder.trace_enabled) write_trace_json(dir / "trace.json", run);
  TextFile summary(dir / "summary.json");
  summary.write(method_summary(run).dump(2) + "\n");
  summary.close();
}

}  // namespace gossipsim
