// gossipsim plot, checked as a reader would check its figures: from
// figures.json (what each figure shows, written by the plotter) and the
// results' own CSVs, read here independently of the plotter. No pixels.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace fs = std::filesystem;

namespace gossipsim {
namespace {

const std::string kBin = GOSSIPSIM_BINARY;
const std::string kTeaching = std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json";

bool have_matplotlib() { return test::run_shell("/usr/bin/python3 -c 'import matplotlib, numpy'") == 0; }

#define SKIP_WITHOUT_MATPLOTLIB() \
  if (!have_matplotlib()) GTEST_SKIP() << "Debian's python3-matplotlib is not installed (scripts/setup installs it)"

struct Folder {
  fs::path path;
  explicit Folder(const std::string& name)
      : path(fs::temp_directory_path() / ("gossipsim-plot-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~Folder() { fs::remove_all(path); }
};

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// Rows of a CSV as maps from column to text.
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::stringstream ss(l);
    std::string cell;
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    if (!l.empty() && l.back() == ',') out.emplace_back();
    return out;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

std::string run(const std::string& args, int expected_code = 0) {
  std::string out;
  EXPECT_EQ(test::run_shell(kBin + " " + args, &out), expected_code) << args << "\n" << out;
  return out;
}

// A timeline-only run (#22, 8): no accuracy, loss or consensus figure and no
// table that says "not reached" for what was never evaluated; one colour
// scale from 0 across the heat maps' panels (6), at the largest count of
// any method's comm_matrix.csv; staleness drawn for every method whose
// transfers carry a staleness (7); timelines drawn for a default window of
// 10 s of the 20 s run (1).
TEST(Plot, ATimelineOnlyRunGetsHonestFiguresAndNoEvaluationTables) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder f("none");
  run("run " + kTeaching + " --kernels none --trace --quiet --out " + f.path.string());
  const std::string said = run("plot " + f.path.string());
  EXPECT_NE(said.find("not evaluated (timeline only, --kernels none)"), std::string::npos) << said;
  for (const char* absent : {"accuracy.png", "loss.png", "consensus.png", "time_to_accuracy.md"})
    EXPECT_FALSE(fs::exists(f.path / absent)) << absent;
  const nlohmann::json facts = read_json(f.path / "figures.json");
  EXPECT_EQ(facts["skipped"]["accuracy"], "not evaluated: timeline only");

  double most = 0;
  std::set<std::string> with_staleness, with_matrix;
  const nlohmann::json summary = read_json(f.path / "summary.json");
  for (const auto& m : summary["methods"]) {
    const std::string label = m["label"];
    const fs::path dir = f.path / label;
    std::map<std::pair<std::string, std::string>, double> counts;
    for (const auto& r : read_csv(dir / "comm_matrix.csv"))
      counts[{r.at("src"), r.at("dst")}] += std::stod(r.at("transfers"));
    for (const auto& [pair, n] : counts) most = std::max(most, n);
    if (!counts.empty()) with_matrix.insert(label);
    for (const auto& r : read_csv(dir / "transfers.csv"))
      if (!r.at("staleness_s").empty()) with_staleness.insert(label);
  }
  EXPECT_EQ(facts["comm_matrix.png"]["colour_min"], 0.0);
  EXPECT_EQ(facts["comm_matrix.png"]["colour_max"], most);
  EXPECT_EQ(facts["comm_matrix.png"]["methods"].get<std::set<std::string>>(), with_matrix);
  std::set<std::string> drawn;
  for (const auto& l : facts["staleness.png"]["labels"])
    drawn.insert(l.get<std::string>().substr(0, l.get<std::string>().find(" (")));
  EXPECT_EQ(drawn, with_staleness);
  EXPECT_GE(with_staleness.size(), 3u);
  EXPECT_EQ(facts["timeline-gossip.png"]["window"], nlohmann::json::array({0.0, 10.0}));
  // allreduce's ring chunks are transfers on its timeline too (#22, 10): as
  // many as its transfers.csv has rows finished within the window.
  int chunks = 0;
  for (const auto& r : read_csv(f.path / "allreduce" / "transfers.csv"))
    if (!r.at("finish_s").empty() && std::stod(r.at("finish_s")) >= 0 && std::stod(r.at("start_s")) <= 10) ++chunks;
  EXPECT_GT(chunks, 0);
  EXPECT_EQ(facts["timeline-allreduce.png"]["transfers"], chunks);
  EXPECT_GT(facts["timeline-gossip.png"]["run_end_s"].get<double>(), 19);

  // --window on the command (2), and a bad one in one line.
  run("plot " + f.path.string() + " --window 12,14.5");
  EXPECT_EQ(read_json(f.path / "figures.json")["timeline-gossip.png"]["window"], nlohmann::json::array({12.0, 14.5}));
  const std::string bad = run("plot " + f.path.string() + " --window 5,1", 2);
  EXPECT_NE(bad.find("--window: expected 0 <= START < END, got '5,1'"), std::string::npos) << bad;
  const std::string negative = run("plot " + f.path.string() + " --window -1,2", 2);
  EXPECT_NE(negative.find("--window: expected 0 <= START < END, got '-1,2'"), std::string::npos) << negative;
  EXPECT_EQ(std::count(negative.begin(), negative.end(), '\n'), 1) << negative;

  // A geo run, timeline only: its regions' communication is drawn, their
  // consensus (never evaluated) is not drawn as empty axes.
  Folder geo("geo");
  run("run " + std::string(GOSSIPSIM_SOURCE_DIR) +
      "/scenarios/quickstart.json --kernels none --quiet --methods gossip "
      "--set /stop/virtual_s=5 --out " +
      geo.path.string());
  run("plot " + geo.path.string());
  EXPECT_TRUE(fs::exists(geo.path / "comm_regions.png"));
  EXPECT_FALSE(fs::exists(geo.path / "consensus_regions.png"));
  const nlohmann::json geo_facts = read_json(geo.path / "figures.json");
  EXPECT_FALSE(geo_facts.contains("consensus_regions.png"));
  // The regions' heat map starts its scale at 0 (6), at the busiest pair.
  double busiest = 0;
  std::map<std::pair<std::string, std::string>, double> pairs;
  for (const auto& r : read_csv(geo.path / "gossip" / "comm_regions.csv"))
    busiest = std::max(busiest, pairs[{r.at("src_region"), r.at("dst_region")}] += std::stod(r.at("transfers")));
  EXPECT_EQ(geo_facts["comm_regions.png"]["colour_min"], 0.0);
  EXPECT_EQ(geo_facts["comm_regions.png"]["colour_max"], busiest);
}

// --help is complete and consistent (10): plot has --window and --methods,
// topology --set, sweep --set, --trace and --workers; plot --methods draws
// only those labels and names the labels it has for one it lacks.
TEST(Plot, HelpIsCompleteAndMethodsChoosesWhatIsDrawn) {
  SKIP_WITHOUT_MATPLOTLIB();
  for (const auto& [command, options] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"plot", {"--window", "--methods", "--side-by-side", "--out"}},
           {"topology", {"--set", "--dot"}},
           {"sweep", {"--set", "--trace", "--workers", "--kernels", "--jobs", "--shard"}},
           {"run", {"--set", "--trace", "--workers", "--kernels", "--methods"}}}) {
    const std::string help = run(command + " --help");
    for (const auto& o : options) EXPECT_NE(help.find(o), std::string::npos) << command << " lacks " << o;
  }
  Folder f("methods");
  run("run " + kTeaching + " --kernels none --quiet --set /stop/virtual_s=3 --out " + f.path.string());
  run("plot " + f.path.string() + " --methods gossip,allreduce");
  EXPECT_EQ(read_json(f.path / "figures.json")["activity.png"]["methods"],
            nlohmann::json::array({"allreduce", "gossip"}));
  const std::string bad = run("plot " + f.path.string() + " --methods gosip", 2);
  EXPECT_NE(bad.find("--methods: no method labelled gosip in these results; their labels are gossip, gossip-overlap, "
                     "gossip-scheduled, allreduce, single"),
            std::string::npos)
      << bad;
  EXPECT_EQ(std::count(bad.begin(), bad.end(), '\n'), 1) << bad;
}

// One node naming in every output (10): node 1 is n1 in transfers.csv,
// nodes.csv, comm_matrix.csv, events.csv (its crash), trace.json and the DOT.
TEST(Plot, EveryOutputNamesANodeTheSameWay) {
  Folder f("names");
  fs::create_directories(f.path);
  std::ifstream in(kTeaching);
  nlohmann::json sc = nlohmann::json::parse(in);
  sc["churn"] = {{{"nodes", {1}}, {"events", {{2, "crash"}, {3, "join"}}}}};
  sc["methods"] = {"gossip"};
  sc["stop"]["virtual_s"] = 4;
  std::ofstream(f.path / "s.json") << sc.dump();
  run("run " + (f.path / "s.json").string() + " --kernels none --trace --quiet --out " + (f.path / "r").string());
  const fs::path dir = f.path / "r" / "gossip";
  const std::set<std::string> all = {"n0", "n1", "n2", "n3"};
  std::set<std::string> in_transfers, in_nodes, in_matrix, in_events, in_trace;
  for (const auto& r : read_csv(dir / "transfers.csv")) in_transfers.insert({r.at("src"), r.at("dst")});
  for (const auto& r : read_csv(dir / "nodes.csv")) in_nodes.insert(r.at("node"));
  for (const auto& r : read_csv(dir / "comm_matrix.csv")) in_matrix.insert({r.at("src"), r.at("dst")});
  for (const auto& r : read_csv(dir / "events.csv"))
    if (r.at("kind") == "crash" || r.at("kind") == "join") in_events.insert(r.at("target"));
  const nlohmann::json trace = read_json(dir / "trace.json");
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") in_trace.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(in_transfers, all);
  EXPECT_EQ(in_nodes, all);
  EXPECT_EQ(in_matrix, all);
  EXPECT_EQ(in_events, std::set<std::string>{"n1"});
  EXPECT_EQ(in_trace, all);
  const std::string dot = run("topology " + kTeaching + " --dot");
  for (const auto& n : all) EXPECT_NE(dot.find("\"" + n + "\" [label=\"" + n + "\""), std::string::npos) << dot;
}

// Runs are pooled as seeds only when their scenarios differ in /seed alone
// (3): two teaching runs of 4 and 3 nodes are refused in one line naming the
// difference, drawn apart with --side-by-side; two seeds of one scenario are
// pooled, and their bands stay within the metrics' ranges (4).
TEST(Plot, OnlyRunsThatDifferInTheSeedArePooledAndBandsStayInRange) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder a("seed1"), b("seed2"), c("three");
  const std::string quick = " --quiet --methods gossip,gossip-overlap --set /stop/virtual_s=8";
  run("run " + kTeaching + quick + " --out " + a.path.string());
  run("run " + kTeaching + quick + " --set /seed=2 --out " + b.path.string());
  run("run " + kTeaching + quick + " --set /topology/nodes=3 --out " + c.path.string());

  const std::string refused =
      run("plot " + a.path.string() + " " + c.path.string() + " --out " + c.path.string() + "-p", 2);
  EXPECT_NE(refused.find("scenario.json /topology/nodes is 3 where " + a.path.string() + " has 4"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("--side-by-side"), std::string::npos) << refused;
  EXPECT_EQ(std::count(refused.begin(), refused.end(), '\n'), 1) << refused;

  run("plot " + a.path.string() + " " + c.path.string() + " --side-by-side --out " + c.path.string() + "-p");
  const nlohmann::json apart = read_json(c.path.string() + "-p/figures.json");
  const auto labels = apart["accuracy.png"]["labels"];
  EXPECT_EQ(labels.size(), 4u) << labels;
  fs::remove_all(c.path.string() + "-p");

  run("plot " + a.path.string() + " " + b.path.string());
  const nlohmann::json pooled = read_json(a.path / "figures.json");
  ASSERT_TRUE(pooled["accuracy.png"].contains("band_min")) << pooled.dump();
  EXPECT_NE(pooled["accuracy.png"]["labels"][0].get<std::string>().find("mean of 2"), std::string::npos);
  EXPECT_GE(pooled["accuracy.png"]["band_min"].get<double>(), 0.0);
  EXPECT_LE(pooled["accuracy.png"]["band_max"].get<double>(), 1.0);
  EXPECT_GE(pooled["loss.png"]["band_min"].get<double>(), 0.0);
  EXPECT_GE(pooled["consensus.png"]["band_min"].get<double>(), 0.0);
  // Target lines carry their value (10); the staleness legend is beside the
  // axes, never over the bars (10).
  EXPECT_EQ(pooled["accuracy.png"]["target_labels"], nlohmann::json::array({"target 0.6", "target 0.7", "target 0.8"}));
  EXPECT_EQ(pooled["staleness.png"]["legend_beside_axes"], true);

  // The tables give the average model and the nodes' own (mean over nodes)
  // side by side (#23): the node_mean rows' time is the restricted mean over
  // the seeds of summary.json's time_to_accuracy_by/node_mean, interpolated
  // between evaluations, a seed that did not reach it counting its end.
  double sum = 0;
  int reached = 0;
  for (const fs::path& dir : {a.path, b.path}) {
    const nlohmann::json summary = read_json(dir / "summary.json");
    for (const auto& m : summary["methods"])
      if (m["label"] == "gossip") {
        const auto& hit = m["time_to_accuracy_by"]["node_mean"]["0.6"];
        sum += hit.is_null() ? m["virtual_s"].get<double>() : hit["interpolated_s"].get<double>();
        reached += hit.is_null() ? 0 : 1;
      }
  }
  ASSERT_GT(reached, 0);
  bool found = false;
  for (const auto& r : read_csv(a.path / "time_to_accuracy.csv"))
    if (r.at("metric") == "node_mean" && r.at("method") == "gossip" && std::stod(r.at("target")) == 0.6) {
      EXPECT_NEAR(std::stod(r.at("rmst_s")), sum / 2, 1e-3 * sum);
      EXPECT_EQ(std::stoi(r.at("reached")), reached);
      found = true;
    }
  EXPECT_TRUE(found);
  std::ifstream md(a.path / "time_to_accuracy.md");
  const std::string tables((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(tables.find("## Time to target on the average model (average)"), std::string::npos);
  EXPECT_NE(tables.find("## Time to target on the nodes' own models, mean over nodes (node_mean)"), std::string::npos);
}

// Simulation against real runs (#25): real results are made here from a
// simulation's (summary.json marked real, as `run --real` marks it), so
// that plot's comparison is checked on every machine, root or not. The
// table's numbers are computed here from the runs' own files: the mean of
// the two "real" runs' merges, each simulation's difference from it in %,
// the median transfer of the simulation's transfers.csv.
TEST(Plot, SimulationAgainstRealRunsIsOneFigureAndATableOfDifferences) {
  SKIP_WITHOUT_MATPLOTLIB();
  auto cell = [](const std::map<std::string, std::string>& r, const std::string& key) {
    auto it = r.find(key);
    if (it == r.end()) ADD_FAILURE() << "no column " << key;
    return it == r.end() ? std::string() : it->second;
  };
  Folder sim("vs-sim"), ra("vs-real-a"), rb("vs-real-b"), out("vs-out");
  const std::string quick = " --kernels none --quiet --methods gossip,gossip-overlap --set /stop/virtual_s=8";
  run("run " + kTeaching + quick + " --out " + sim.path.string());
  run("run " + kTeaching + quick + " --set '/network/model=\"slowstart\"' --out " + ra.path.string());
  fs::copy(ra.path, rb.path, fs::copy_options::recursive);
  // The two "real" runs: gossip's merges 100 and 300 (mean 200).
  for (const auto& [folder, merges] : std::vector<std::pair<fs::path, int>>{{ra.path, 100}, {rb.path, 300}}) {
    nlohmann::json s = read_json(folder / "summary.json");
    s["real"] = true;
    s["deterministic"] = false;
    for (auto& m : s["methods"]) {
      m["real"] = {{"valid", true}, {"invalid_because", ""}};
      if (m["label"] == "gossip") m["merges"] = merges;
    }
    std::ofstream(folder / "summary.json") << s.dump(2);
  }
  run("plot " + sim.path.string() + " " + ra.path.string() + " " + rb.path.string() + " --out " + out.path.string());
  const nlohmann::json facts = read_json(out.path / "figures.json");
  std::set<std::string> labels;
  for (const auto& l : facts["staleness.png"]["labels"])
    labels.insert(l.get<std::string>().substr(0, l.get<std::string>().find(" (")));
  EXPECT_EQ(labels, (std::set<std::string>{"gossip [sim maxmin]", "gossip [real]", "gossip-overlap [sim maxmin]",
                                           "gossip-overlap [real]"}));
  const int sim_merges = read_json(sim.path / "summary.json")["methods"][0]["merges"];
  std::vector<double> d;
  for (const auto& r : read_csv(sim.path / "gossip" / "transfers.csv"))
    if (!cell(r, "finish_s").empty()) d.push_back(std::stod(cell(r, "finish_s")) - std::stod(cell(r, "start_s")));
  std::sort(d.begin(), d.end());
  const double median = d.size() % 2 ? d[d.size() / 2] : (d[d.size() / 2 - 1] + d[d.size() / 2]) / 2;
  bool merges_row = false, median_row = false;
  for (const auto& r : read_csv(out.path / "sim_vs_real.csv")) {
    if (cell(r, "method") != "gossip") continue;
    if (cell(r, "run") == "real" && cell(r, "measure") == "merges") {
      EXPECT_EQ(cell(r, "mean"), "200.0000");
      EXPECT_EQ(cell(r, "min"), "100.0000");
      EXPECT_EQ(cell(r, "max"), "300.0000");
    }
    if (cell(r, "run") == "sim maxmin" && cell(r, "measure") == "merges") {
      merges_row = true;
      EXPECT_NEAR(std::stod(cell(r, "difference_pct")), 100.0 * (sim_merges - 200) / 200, 1e-4);
      EXPECT_EQ(cell(r, "outside_real_range"), sim_merges < 100 || sim_merges > 300 ? "True" : "False");
    }
    if (cell(r, "run") == "sim maxmin" && cell(r, "measure") == "transfer_median_s") {
      median_row = true;
      EXPECT_NEAR(std::stod(cell(r, "mean")), median, 1e-4);
    }
  }
  EXPECT_TRUE(merges_row && median_row);
  std::ifstream md(out.path / "sim_vs_real.md");
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| real | 2 |"), std::string::npos) << text;
  EXPECT_NE(text.find(" 200 [100, 300] |"), std::string::npos) << text;

  // Real runs under other settings are not pooled; an invalid one is refused.
  nlohmann::json sc = read_json(rb.path / "scenario.json");
  sc["network"]["real"] = {{"dilation", 2}};
  std::ofstream(rb.path / "scenario.json") << sc.dump(2);
  const std::string apart = run(
      "plot " + sim.path.string() + " " + ra.path.string() + " " + rb.path.string() + " --out " + out.path.string(), 2);
  EXPECT_NE(apart.find("real runs are pooled as repetitions only under the same /network/real and flow model"),
            std::string::npos)
      << apart;
  EXPECT_EQ(std::count(apart.begin(), apart.end(), '\n'), 1) << apart;
  nlohmann::json s = read_json(ra.path / "summary.json");
  s["methods"][1]["real"] = {{"valid", false}, {"invalid_because", "events fired 9 virtual ms late"}};
  std::ofstream(ra.path / "summary.json") << s.dump(2);
  const std::string invalid =
      run("plot " + sim.path.string() + " " + ra.path.string() + " --out " + out.path.string(), 2);
  EXPECT_NE(invalid.find(ra.path.string() + ": gossip-overlap is marked invalid (events fired 9 virtual ms late)"),
            std::string::npos)
      << invalid;
  EXPECT_EQ(std::count(invalid.begin(), invalid.end(), '\n'), 1) << invalid;
}

// The whole run at a glance (#22, 1: aggregated views), from transfers.csv
// alone: a hand-written one, whose transfers of n0 overlap (0-1 s and
// 0.5-2 s: 2 s of sending, not 2.5) and whose last is unfinished (it sends
// until the run's end).
TEST(Plot, ActivityCountsTransfersAndEachNodesSendingTimeOverTheWholeRun) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder f("activity");
  run("run " + kTeaching + " --kernels none --quiet --methods gossip,allreduce --out " + f.path.string());
  const double end = read_json(f.path / "summary.json")["methods"][0]["virtual_s"];
  // allreduce as written by the run: every finished row counted.
  int finished = 0;
  for (const auto& r : read_csv(f.path / "allreduce" / "transfers.csv")) finished += r.at("finish_s").empty() ? 0 : 1;
  std::ofstream(f.path / "gossip" / "transfers.csv")
      << "method,src,dst,bytes,snapshot_s,start_s,finish_s,merge_s,staleness_s,staleness_iterations\n"
         "gossip,n0,n1,10,0,0,1,1,1,0\n"
         "gossip,n0,n2,10,0.5,0.5,2,2,1.5,0\n"
         "gossip,n1,n0,10,3,3,4,4,1,0\n"
         "gossip,n2,n0,10,5,5,,,,\n";
  run("plot " + f.path.string());
  const nlohmann::json facts = read_json(f.path / "figures.json")["activity.png"];
  EXPECT_EQ(facts["methods"], nlohmann::json::array({"allreduce", "gossip"}));
  const nlohmann::json g = facts["per_method"]["gossip"];
  EXPECT_EQ(g["transfers_finished"], 3);
  EXPECT_EQ(g["nodes"], 4);  // n3 never sent: a node at 0 in the band
  EXPECT_NEAR(g["sending_s"]["n0"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(g["sending_s"]["n1"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(g["sending_s"]["n2"].get<double>(), end - 5, 1e-9);
  EXPECT_EQ(facts["per_method"]["allreduce"]["transfers_finished"], finished);
  EXPECT_GE(facts["per_method"]["allreduce"]["sending_share_min"].get<double>(), 0.0);
  EXPECT_LE(facts["per_method"]["allreduce"]["sending_share_max"].get<double>(), 1.0);
  EXPECT_EQ(facts["xlim"], nlohmann::json::array({0.0, end}));
}

// The profile panel of a timeline starts at the value a link held before
// its first change (#22, 5): the teaching scenario's links are 1000 Mbit/s,
// a profile drops n0-n1 to 10 at 5 s; the panel starts at 1000, not 10.
TEST(Plot, AProfilePanelShowsTheValueBeforeTheFirstChange) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder f("profile");
  fs::create_directories(f.path);
  std::ifstream in(kTeaching);
  nlohmann::json sc = nlohmann::json::parse(in);
  sc["network"]["profiles"] = {{{"link", {"n0", "n1"}}, {"capacity_mbps", {{"points", {{5, 10}}}}}}};
  sc["methods"] = {"gossip"};
  sc["stop"]["virtual_s"] = 8;
  std::ofstream(f.path / "s.json") << sc.dump();
  run("run " + (f.path / "s.json").string() + " --kernels none --trace --quiet --out " + (f.path / "r").string());
  run("plot " + (f.path / "r").string());
  const nlohmann::json steps = read_json(f.path / "r" / "figures.json")["timeline-gossip.png"]["steps"];
  ASSERT_EQ(steps["capacity"].size(), 1u) << steps.dump();
  EXPECT_EQ(steps["capacity"].begin().value(), 1000.0) << steps.dump();
}

// Progress off a terminal (#22, 9): a log gets whole lines, a start line per
// method, a line at every 10% of its virtual time (20 s run, evaluations
// every 1 s: at 2, 4, ... 20 s) with its ETA and the whole run's, and its
// end line.
TEST(Run, ProgressInALogComesAsWholeLinesWithTheOverallEta) {
  Folder f("progress");
  const std::string log =
      run("run " + kTeaching + " --kernels none --methods gossip,allreduce --out " + f.path.string());
  EXPECT_EQ(log.find('\r'), std::string::npos) << log;
  EXPECT_NE(log.find("[1/2] gossip: started\n"), std::string::npos) << log;
  EXPECT_NE(log.find("[2/2] allreduce: started\n"), std::string::npos) << log;
  int lines = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("[1/2] gossip ", 0) == 0) {
      ++lines;
      EXPECT_NE(line.find(", all methods "), std::string::npos) << line;
    }
  EXPECT_EQ(lines, 10) << log;
  EXPECT_NE(log.find("gossip: 20.0 virtual s"), std::string::npos) << log;
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// A damaged result was drawn with exit 0 (a metrics.csv cut short gave a
// curve that stops early; only a header, no curve), or ended in a bare
// JSONDecodeError naming no file; a real run marked invalid was drawn when
// given alone; of two sweeps the second was ignored. Each is refused in one
// line that names the file (and its line and column where it has them).
TEST(Plot, DamagedResultsAreRefusedInOneLineNamingTheFile) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder dir("damaged");
  const fs::path run = dir.path / "r";
  std::string text;
  ASSERT_EQ(test::run_shell(kBin + " run " + kTeaching + " --kernels none --quiet --set /stop/virtual_s=3 " +
                                "--set '/methods=[\"gossip\"]' --out " + run.string(),
                            &text),
            0)
      << text;
  const fs::path metrics = run / "gossip/metrics.csv", summary = run / "summary.json";
  std::ifstream m(metrics);
  const std::string whole((std::istreambuf_iterator<char>(m)), std::istreambuf_iterator<char>());
  std::ifstream sm(summary);
  const std::string summary_text((std::istreambuf_iterator<char>(sm)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  std::istringstream in(whole);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5u);  // header, evaluations at 0, 1, 2 and 3 s
  auto refused = [&](const std::string& file, const std::string& content, const std::string& expected,
                     const std::string& what = "") {
    SCOPED_TRACE(what.empty() ? expected : what);
    std::ofstream(file, std::ios::binary) << content;
    std::string out;
    EXPECT_EQ(test::run_shell(kBin + " plot " + run.string(), &out), 2) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    std::ofstream(metrics) << whole;
    std::ofstream(summary) << summary_text;
  };
  refused(metrics.string(), lines[0] + "\n",
          metrics.string() + ": expected the metrics a run wrote with at least one row; it has only its header");
  refused(metrics.string(), lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n",
          metrics.string() +
              ": expected evaluations up to the end of the run, 3 virtual s (summary.json); the last "
              "is at 1 s (a file cut short)");
  refused(metrics.string(), lines[0] + "\n" + lines[1] + "\n" + lines[2].substr(0, 12) + "\n",
          metrics.string() + " line 3: expected 16 cells, as its header has; found 2");
  std::string garbage = whole;
  garbage.replace(garbage.find("\ngossip,0.000000000,") + 20, 1, "x");
  refused(metrics.string(), garbage,
          metrics.string() + " line 2: epochs: expected a number or nothing, got 'x.000000'");
  refused(summary.string(), summary_text.substr(0, summary_text.size() / 2), summary.string() + ": line ",
          "summary.json cut in half");
  refused(summary.string(), summary_text.substr(0, summary_text.size() / 2),
          "expected the summary a run wrote: ", "summary.json cut in half, what");
  refused(summary.string(), std::string("\xff\xfe\x00garbage", 10),
          summary.string() +
              ": expected the summary a run "
              "wrote, JSON text; byte 0 is not UTF-8");
  // A real run marked invalid, alone.
  nlohmann::json invalid = nlohmann::json::parse(summary_text);
  invalid["real"] = true;
  invalid["methods"][0]["real"] = {{"valid", false}, {"invalid_because", "lag p99 9 ms over 2 ms"}};
  refused(summary.string(), invalid.dump(),
          run.string() + ": gossip is marked invalid (lag p99 9 ms over 2 ms): a comparison with it would mislead");
  // Two sweeps without evaluation: nothing to set side by side.
  const fs::path sweep_file = dir.path / "s.json";
  std::ofstream(sweep_file) << nlohmann::json{{"name", "s"},
                                              {"base", kTeaching},
                                              {"set", {{"/stop/virtual_s", 1}, {"/methods", {"gossip"}}}},
                                              {"axes", {{{"path", "/seed"}, {"values", {1}}}}}}
                                   .dump();
  for (const char* name : {"a", "b"})
    ASSERT_EQ(
        test::run_shell(kBin + " sweep " + sweep_file.string() + " --kernels none --out " + (dir.path / name).string()),
        0);
  std::string out;
  EXPECT_EQ(test::run_shell(kBin + " plot " + (dir.path / "a").string() + " " + (dir.path / "b").string(), &out), 2);
  EXPECT_NE(out.find((dir.path / "b").string() + ": these sweeps share no cell with a speed-up to compare"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace gossipsim

namespace gossipsim {
namespace {

// Runs pooled as seeds say what made them above their tables; where they
// differ in anything that changes numbers (here a BLAS version written into
// one summary), the table says so and in what.
TEST(Plot, TablesSayWhatMadeTheRunsAndWhenPooledRunsDiffer) {
  SKIP_WITHOUT_MATPLOTLIB();
  Folder dir("provenance");
  for (const char* seed : {"1", "2"})
    ASSERT_EQ(test::run_shell(kBin + " run " + kTeaching + " --quiet --set /stop/virtual_s=2 --set /seed=" + seed +
                              " --set '/methods=[\"gossip\",\"single\"]' --out " + (dir.path / seed).string()),
              0);
  std::string out;
  ASSERT_EQ(test::run_shell(kBin + " plot " + (dir.path / "1").string() + " " + (dir.path / "2").string(), &out), 0)
      << out;
  const nlohmann::json p = read_json(dir.path / "1/summary.json")["provenance"];
  std::ifstream md(dir.path / "1/time_to_accuracy.md");
  std::string first;
  std::getline(md, first);
  EXPECT_EQ(first.rfind("Made by gossipsim 0.2.0 (" + p["gossipsim"]["commit"].get<std::string>(), 0), 0u) << first;
  EXPECT_NE(first.find(p["blas"]["name"].get<std::string>() + " BLAS " + p["blas"]["version"].get<std::string>()),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("(all 2 results)"), std::string::npos) << first;
  nlohmann::json other = read_json(dir.path / "2/summary.json");
  other["provenance"]["blas"]["version"] = "9.9.9";
  std::ofstream(dir.path / "2/summary.json") << other.dump();
  ASSERT_EQ(test::run_shell(kBin + " plot " + (dir.path / "1").string() + " " + (dir.path / "2").string(), &out), 0)
      << out;
  std::ifstream md2(dir.path / "1/time_to_accuracy.md");
  std::getline(md2, first);
  EXPECT_NE(first.find("**The 2 results pooled here were made differently**"), std::string::npos) << first;
  EXPECT_NE(first.find("blas/version: \"" + p["blas"]["version"].get<std::string>() + "\" in 1, \"9.9.9\" in 1"),
            std::string::npos)
      << first;
}

}  // namespace
}  // namespace gossipsim
