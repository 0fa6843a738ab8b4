#include "sim/cli/commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "analysis/output_dir.h"
#include "analysis/writers.h"
#include "sim/network.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <mutex>
#include <thread>
#ifdef GOSSIPSIM_WITH_TORCH
#include "kernels/torch_learner.h"
#endif

namespace gossipsim {

namespace fs = std::filesystem;

namespace {

class NullFactory : public LearnerFactory {
 public:
  NullFactory(Bytes model, int64_t batch, int64_t train) : model_(model), batch_(batch), train_(train) {}
  std::unique_ptr<Learner> make(int nodes) override {
    return std::make_unique<NullLearner>(nodes, model_, batch_, train_);
  }

 private:
  Bytes model_;
  int64_t batch_, train_;
};

std::unique_ptr<LearnerFactory> make_factory(const Scenario& sc, const std::string& kernels) {
  const WorkloadSpec& w = sc.workload;
  if (kernels == "none") {
    int64_t model = w.model_bytes;
#ifdef GOSSIPSIM_WITH_TORCH
    if (model == 0) model = model_state_bytes(w);
#endif
    if (model == 0) throw InputError(sc.file, "/workload/model_bytes", "a model size in bytes (built without LibTorch)");
    int64_t train = w.dataset == "synthetic" ? w.synthetic.train : w.dataset == "cifar100" ? 50000 : 60000;
    if (w.train_samples > 0) train = std::min(train, w.train_samples);
    return std::make_unique<NullFactory>(bytes(model), w.batch, train);
  }
#ifdef GOSSIPSIM_WITH_TORCH
  return make_torch_factory(w, sc.seed, sc.eval.test_samples);
#else
  throw InputError(sc.file, "", "--kernels none: this build has no LibTorch");
#endif
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nlohmann::json histogram_json(const std::vector<std::vector<int64_t>>& h) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& row : h) j.push_back(row);
  return j;
}

}  // namespace

int run_command(const RunCommand& cmd) {
  Scenario sc = load_scenario(cmd.scenario, cmd.sets);
  if (cmd.workers > 0) sc.workload.workers = cmd.workers;
  std::vector<MethodOptions> methods;
  for (const auto& m : sc.methods)
    if (cmd.methods.empty() || std::find(cmd.methods.begin(), cmd.methods.end(), m.label) != cmd.methods.end())
      methods.push_back(m);
  for (const auto& want : cmd.methods)
    if (std::none_of(sc.methods.begin(), sc.methods.end(), [&](const auto& m) { return m.label == want; }))
      throw InputError(cmd.scenario, "/methods", "a method labelled " + want + " (from --methods)");

  const fs::path out = cmd.out.empty() ? fs::path("results") / sc.name : fs::path(cmd.out);
  OutputDir dir(out);
  auto factory = make_factory(sc, cmd.kernels);
  RunOptions opts;
  opts.trace = cmd.trace;
  opts.progress = !cmd.quiet && ::isatty(2);

  nlohmann::json summary = {{"scenario", sc.name},
                            {"file", cmd.scenario},
                            {"seed", sc.seed},
                            {"topology", sc.topology.description},
                            {"nodes", sc.topology.node_count()},
                            {"kernels", cmd.kernels},
                            {"methods", nlohmann::json::array()}};
  for (const auto& m : methods) {
    auto learner = factory->make(learner_nodes(sc, m));
    if (!summary.contains("label_histogram") && m.name != "single")
      summary["label_histogram"] = histogram_json(learner->label_histogram());
    MethodRun r = run_method(sc, m, *learner, opts);
    write_method_outputs(dir.staging() / m.label, r);
    summary["methods"].push_back(r.summary);
    if (!opts.progress && !cmd.quiet)
      fmt::print(stderr, "{}: {:.1f} virtual s, {:.2f} epochs, accuracy {}, {:.1f} s wall\n", m.label,
                 r.summary["virtual_s"].get<double>(), r.summary["epochs"].get<double>(),
                 r.summary["final_accuracy"].dump(), r.summary["wall_s"].get<double>());
  }
  std::ofstream(dir.file("scenario.json")) << sc.document.dump(2) << "\n";
  std::ofstream(dir.file("summary.json")) << summary.dump(2) << "\n";
  dir.commit();
  fmt::print("{}\n", out.string());
  return 0;
}

int sweep_command(const SweepCommand& cmd) {
  Sweep sweep = load_sweep(cmd.sweep);
  auto [shard, shards] = parse_shard(cmd.shard);
  const fs::path out = cmd.out.empty() ? fs::path("results") / sweep.name : fs::path(cmd.out);
  fs::create_directories(out / "points");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<size_t> todo;
  size_t done = 0;
  for (size_t p : shard_points(sweep.size(), shard, shards)) {
    if (fs::exists(out / "points" / std::to_string(p) / "summary.json")) ++done;
    else todo.push_back(p);
  }
  fmt::print(stderr, "sweep {}: {} points, shard {}/{}: {} done already, {} to run\n", sweep.name, sweep.size(), shard,
             shards, done, todo.size());
  const int jobs = cmd.jobs > 0 ? cmd.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::mutex mutex;
  std::vector<size_t> failed;
  {
    boost::asio::thread_pool pool(jobs);
    for (size_t p : todo)
      boost::asio::post(pool, [&, p] {
        const fs::path dir = out / "points" / std::to_string(p);
        const fs::path log = out / "points" / (std::to_string(p) + ".log");
        std::string command = shell_quote(self) + " run " + shell_quote(sweep.base) + " --quiet --workers 1 --kernels " +
                              shell_quote(cmd.kernels) + " --out " + shell_quote(dir.string());
        for (const auto& o : sweep.overrides(p)) command += " --set " + shell_quote(o);
        command += " > " + shell_quote(log.string()) + " 2>&1";
        int rc = std::system(command.c_str());
        std::lock_guard<std::mutex> lock(mutex);
        if (rc != 0) {
          failed.push_back(p);
          std::ifstream in(log);
          std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          fmt::print(stderr, "point {} failed ({}): {}", p, sweep.values(p).dump(), text.empty() ? "no output\n" : text);
        } else {
          fs::remove(log);
          fmt::print(stderr, "point {} done: {}\n", p, sweep.values(p).dump());
        }
      });
    pool.join();
  }
  write_file_atomically(out / "sweep.csv", gather_sweep_csv(sweep, out.string()));
  std::sort(failed.begin(), failed.end());
  fmt::print("{}\n", (out / "sweep.csv").string());
  if (!failed.empty()) {
    fmt::print(stderr, "{} point(s) failed: {} (their logs are in {}/points/)\n", failed.size(), fmt::join(failed, ", "),
               out.string());
    return 3;
  }
  return 0;
}

int validate_command(const std::string& file, const std::vector<std::string>& sets) {
  Scenario sc = load_scenario(file, sets);
  fmt::print("{}: valid\n  name: {}\n  topology: {} ({} vertices, {} links)\n  workload: {} / {}, batch {}\n  methods:",
             file, sc.name, sc.topology.description, boost::num_vertices(sc.topology.graph),
             boost::num_edges(sc.topology.graph), sc.workload.dataset, sc.workload.model.name, sc.workload.batch);
  for (const auto& m : sc.methods) fmt::print(" {}", m.label);
  fmt::print("\n");
  return 0;
}

int replay_command(const std::string& file, const std::string& out) {
  nlohmann::json doc = JsonReader::parse_file(file);
  JsonReader r(doc, file);
  r.expect_object();
  uint64_t seed = static_cast<uint64_t>(r.integer("seed", 1));
  LinkDefaults defaults;
  if (auto n = r.child("network")) defaults = parse_network(*n).links;
  Topology topo = build_topology(r.at("topology"), defaults, Streams(seed));
  Simulator sim;
  Network net(sim, topo);
  struct Row {
    FlowRecord rec;
    bool control = false;
  };
  JsonReader list = r.at("transfers");
  std::vector<Row> rows(list.array_size());
  for (size_t i = 0; i < rows.size(); ++i) {
    JsonReader t = list.element(i);
    NodeId src = static_cast<NodeId>(t.integer("src")), dst = static_cast<NodeId>(t.integer("dst"));
    t.require(src >= 0 && src < topo.node_count(), "src", fmt::format("a node id in [0, {})", topo.node_count()));
    t.require(dst >= 0 && dst < topo.node_count() && dst != src, "dst", "a node id other than src");
    int64_t size = t.integer("bytes", 0);
    t.require(size >= 0, "bytes", "an integer >= 0");
    double start = t.number("start_s", 0.0);
    t.require(start >= 0, "start_s", "a number >= 0");
    bool control = t.boolean("control", false);
    t.done();
    rows[i].control = control;
    rows[i].rec.src = src;
    rows[i].rec.dst = dst;
    rows[i].rec.size = bytes(size);
    rows[i].rec.start = seconds(start);
    sim.schedule_at(seconds(start), [&, i, src, dst, size, control] {
      if (control) {
        net.send_control(src, dst, [&, i] { rows[i].rec.finish = sim.now(); });
      } else {
        net.start_flow(src, dst, bytes(size), [&, i](const FlowRecord& f) { rows[i].rec = f; });
      }
    });
  }
  r.string("description", "");
  r.done();
  sim.run();
  std::string csv = "id,src,dst,bytes,kind,start_s,finish_s,duration_s\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const FlowRecord& f = rows[i].rec;
    csv += fmt::format("{},{},{},{},{},{:.9f},{:.9f},{:.9f}\n", i, f.src, f.dst, f.size.count,
                       rows[i].control ? "control" : "flow", f.start.seconds(), f.finish.seconds(),
                       (f.finish - f.start).seconds());
  }
  if (out.empty()) std::cout << csv;
  else write_file_atomically(out, csv);
  return 0;
}

int topology_command(const std::string& spec, bool dot) {
  nlohmann::json doc = JsonReader::parse_file(spec);
  Topology t;
  if (doc.is_object() && doc.contains("topology")) {
    t = load_scenario(spec).topology;
  } else {
    t = build_topology(JsonReader(doc, spec), LinkDefaults{}, Streams(1));
  }
  if (dot) {
    std::cout << to_dot(t);
  } else {
    fmt::print("{}\n  vertices {}, links {}, compute nodes {}\n", t.description, boost::num_vertices(t.graph),
               boost::num_edges(t.graph), t.node_count());
    for (NodeId n = 0; n < t.node_count(); ++n)
      fmt::print("  node {} peers: {}\n", n, fmt::join(t.peers[n], " "));
  }
  return 0;
}

int plot_command(const std::string& results, const std::string& out) {
  std::string script = std::getenv("GOSSIPSIM_PLOT_SCRIPT") ? std::getenv("GOSSIPSIM_PLOT_SCRIPT") : "";
  if (script.empty()) {
    for (fs::path p : {fs::path("analysis/plot.py"), fs::path(GOSSIPSIM_SOURCE_DIR) / "analysis/plot.py"})
      if (fs::exists(p)) {
        script = p.string();
        break;
      }
  }
  if (script.empty()) throw std::runtime_error("analysis/plot.py not found (set GOSSIPSIM_PLOT_SCRIPT)");
  std::string command = "/usr/bin/python3 " + shell_quote(script) + " " + shell_quote(results);
  if (!out.empty()) command += " --out " + shell_quote(out);
  int rc = std::system(command.c_str());
  return rc == 0 ? 0 : 1;
}

}  // namespace gossipsim
