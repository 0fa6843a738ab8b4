// What made a result: every summary.json records the build, the host, and
// with real kernels LibTorch, the BLAS and the threads; the same scenario
// gives the same events under any BLAS and the same curves under the same
// one (a short quickstart's digest kept per BLAS, tests/golden/kernel-digests.json).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "../test_util.h"
#include "base/files.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

const std::string kReferenceBlas = "/usr/lib/x86_64-linux-gnu/blas";  // Debian's libblas3, netlib's

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("gossipsim-provenance-" + std::to_string(::getpid())) / name;
}

// Runs `args` (from the source tree) into `out` with the environment `env`.
void run(const std::string& env, const std::string& args, const fs::path& out) {
  std::string said;
  ASSERT_EQ(test::run_shell("cd " + std::string(GOSSIPSIM_SOURCE_DIR) + " && " + env + " " + GOSSIPSIM_BINARY +
                                " run " + args + " --quiet --force --out " + out.string(),
                            &said),
            0)
      << said;
}

TEST(Provenance, EverySummarySaysWhatMadeIt) {
  const fs::path out = temp("teaching");
  run("", "scenarios/teaching/synthetic-4.json --set /stop/virtual_s=1 --workers 2", out);
  const auto p = nlohmann::json::parse(read(out / "summary.json"))["provenance"];
  EXPECT_EQ(p["gossipsim"]["version"], "0.2.0");
  EXPECT_EQ(p["gossipsim"]["commit"].get<std::string>().size(), 12u) << p.dump();  // this test runs in a checkout
  EXPECT_EQ(p["host"]["cores"].get<long>(), ::sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_FALSE(p["host"]["cpu"].get<std::string>().empty());
  EXPECT_EQ(p["kernels"], "torch");
  EXPECT_EQ(p["libtorch"]["version"], "1.13.0");
  EXPECT_EQ(p["workers"], 2);
  EXPECT_EQ(p["blas"]["threads"], 1);  // set by gossipsim, whatever the library's default
  EXPECT_TRUE(fs::exists(p["blas"]["library"].get<std::string>())) << p.dump();
  // The netlib reference, forced: named by its file, whatever the system's default.
  if (fs::exists(kReferenceBlas + "/libblas.so.3")) {
    run("LD_LIBRARY_PATH=" + kReferenceBlas, "scenarios/teaching/synthetic-4.json --set /stop/virtual_s=1",
        temp("reference"));
    const auto r = nlohmann::json::parse(read(temp("reference") / "summary.json"))["provenance"]["blas"];
    EXPECT_EQ(r["name"], "reference");
    EXPECT_EQ(r["library"], fs::canonical(kReferenceBlas + "/libblas.so.3").string());
    const std::string file = fs::canonical(kReferenceBlas + "/libblas.so.3").filename().string();  // libblas.so.3.11.0
    EXPECT_EQ(r["version"], file.substr(std::string("libblas.so.").size()));
  }
  // Timeline only: no kernels, so no LibTorch or BLAS in what made it.
  run("", "scenarios/teaching/synthetic-4.json --set /stop/virtual_s=1 --kernels none", temp("none"));
  const auto n = nlohmann::json::parse(read(temp("none") / "summary.json"))["provenance"];
  EXPECT_EQ(n["kernels"], "none");
  EXPECT_FALSE(n.contains("blas"));
  fs::remove_all(temp("").parent_path());
}

// The README's "same scenario and seed, same results": the events and
// transfers are the same under any BLAS; the curves are the same under the
// same BLAS (library, version, kernel set, threads) and kind of CPU, and are
// kept here per BLAS as digests of a short quickstart with real kernels, with
// those of a kind of CPU whose curves differ under the same BLAS under
// "by_cpu". LibTorch's own kernels outside BLAS choose their code by the
// CPU's instruction sets, so the kind is named by what they chose, as
// provenance.libtorch records it: ATen's cpu_capability and oneDNN's isa
// (e.g. "AVX2 avx2"; not the CPU's name: two "AMD EPYC" machines, one with
// AVX-512 and one without, gave different curves under the reference BLAS).
// A BLAS with no digest kept is said and skipped; GOSSIPSIM_UPDATE_GOLDEN=1
// records it (under "by_cpu" where the generic digest is another kind's).
TEST(Provenance, CurvesAreTheSameUnderTheSameBlasAndEventsUnderAny) {
  const fs::path file = fs::path(GOSSIPSIM_SOURCE_DIR) / "tests/golden/kernel-digests.json";
  nlohmann::json golden = nlohmann::json::parse(read(file));
  const bool update = std::getenv("GOSSIPSIM_UPDATE_GOLDEN") != nullptr;
  std::vector<std::string> envs = {""};
  if (fs::exists(kReferenceBlas + "/libblas.so.3")) envs.push_back("LD_LIBRARY_PATH=" + kReferenceBlas);
  std::map<std::string, std::string> transfers;  // per BLAS, the transfers of every method
  std::vector<std::string> missing;
  for (const std::string& env : envs) {
    const fs::path out = temp("quickstart");
    run(env, golden["args"].get<std::string>(), out);
    const auto summary = nlohmann::json::parse(read(out / "summary.json"));
    const auto& b = summary["provenance"]["blas"];
    const std::string key = b["name"].get<std::string>() + " " + b["version"].get<std::string>() +
                            (b.contains("core") ? " " + b["core"].get<std::string>() : "") +
                            " threads=" + std::to_string(b["threads"].get<int>());
    nlohmann::json produced;
    std::string all_transfers;
    for (const auto& m : summary["methods"]) {
      const std::string label = m["label"];
      for (const char* csv : {"metrics.csv", "transfers.csv"}) produced[label][csv] = file_digest(out / label / csv);
      all_transfers += read(out / label / "transfers.csv");
    }
    transfers[key] = all_transfers;
    const auto& torch = summary["provenance"]["libtorch"];
    const std::string cpu = torch.value("cpu_capability", "unknown") + " " +
                            (torch["onednn"].is_object() ? torch["onednn"].value("isa", "none") : "none");
    if (update) {
      if (!golden["digests"].contains(key) || golden["digests"][key] == produced)
        golden["digests"][key] = produced;
      else
        golden["by_cpu"][cpu][key] = produced;
    }
    const bool own = golden.contains("by_cpu") && golden["by_cpu"].contains(cpu) && golden["by_cpu"][cpu].contains(key);
    const nlohmann::json* expected = own                               ? &golden["by_cpu"][cpu][key]
                                     : golden["digests"].contains(key) ? &golden["digests"][key]
                                                                       : nullptr;
    if (!expected) {
      missing.push_back(key);
      continue;
    }
    EXPECT_EQ(produced, *expected) << key << " on " << cpu;
  }
  fs::remove_all(temp("").parent_path());
  // The timeline does not depend on what the kernels compute.
  for (const auto& [key, text] : transfers) EXPECT_EQ(text, transfers.begin()->second) << key;
  if (update) std::ofstream(file) << golden.dump(1) << "\n";
  if (!missing.empty())
    GTEST_SKIP() << "no digest kept for the BLAS " << missing.front()
                 << " (GOSSIPSIM_UPDATE_GOLDEN=1 records it once its curves are checked)";
}

}  // namespace
}  // namespace gossipsim
