// The layers of docs/design.md, held: every #include "..." of gossipsim's
// own sources names a layer its file may include, so an include that runs
// back up (sim/ including kernels/ or a reader of input/, anything
// including cli/) fails here, naming the file and the line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

// The layer of a path relative to the source root: its top folder.
std::string layer_of(const std::string& path) { return path.substr(0, path.find('/')); }

struct Scan {
  int files = 0, includes = 0;
  std::vector<std::string> violations;  // "file:line: ..."
};

// Every include of gossipsim's layers under `root` against the rule.
Scan scan(const fs::path& root) {
  // What each layer may include besides itself (docs/design.md, "The layers").
  const std::map<std::string, std::vector<std::string>> may = {
      {"base", {}},
      {"topologies", {"base"}},
      {"sim", {"base", "topologies"}},
      {"input", {"base", "topologies", "sim"}},
      {"kernels", {"base", "topologies", "sim", "input"}},
      {"ranks", {"base", "topologies", "sim", "input", "kernels"}},
      {"emulate", {"base", "topologies", "sim"}},
      {"analysis", {"base", "topologies", "sim", "input"}},
      {"cli", {"base", "topologies", "sim", "input", "kernels", "ranks", "emulate", "analysis"}},
  };
  const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  Scan result;
  for (const auto& [layer, allowed] : may) {
    const fs::path dir = root / layer;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      const std::string rel = fs::relative(e.path(), root).string();
      ++result.files;
      std::ifstream in(e.path());
      int line_no = 0;
      for (std::string line; std::getline(in, line);) {
        ++line_no;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const std::string target = m[1];
        if (target.find('/') == std::string::npos) continue;  // generated (build_info.h) or local
        const std::string to = layer_of(target);
        if (!may.count(to)) continue;  // not one of ours
        ++result.includes;
        if (to != layer && std::find(allowed.begin(), allowed.end(), to) == allowed.end())
          result.violations.push_back(rel + ":" + std::to_string(line_no) + ": layer " + layer + " includes " + target +
                                      " (layer " + to + ")");
      }
    }
  }
  return result;
}

TEST(Layers, NoIncludeRunsBackUp) {
  const Scan s = scan(GOSSIPSIM_SOURCE_DIR);
  for (const auto& v : s.violations) ADD_FAILURE() << v;
  EXPECT_GT(s.files, 100);
  EXPECT_GT(s.includes, 200);
}

// The check catches what it should: a tree written by the test, with one
// include that runs back up (sim/ including kernels/), a runtime that
// reads (sim/ including input/), and fine ones.
TEST(Layers, TheCheckFindsAnIncludeThatRunsBackUp) {
  const fs::path root = fs::temp_directory_path() / ("gossipsim-layers-" + std::to_string(::getpid()));
  for (const char* layer : {"base", "sim", "input", "kernels"}) fs::create_directories(root / layer);
  std::ofstream(root / "base/a.h") << "#include <vector>\n";
  std::ofstream(root / "sim/b.cc")
      << "#include \"base/a.h\"\n// x\n  #include \"kernels/c.h\"\n#include \"input/d.h\"\n";
  std::ofstream(root / "input/d.h") << "#include \"sim/b.h\"\n";
  std::ofstream(root / "kernels/c.h") << "#include \"sim/b.h\"\n#include \"input/d.h\"\n#include \"torch/torch.h\"\n";
  const Scan s = scan(root);
  EXPECT_EQ(s.files, 4);
  EXPECT_EQ(s.includes, 6);
  ASSERT_EQ(s.violations.size(), 2u);
  EXPECT_EQ(s.violations[0], "sim/b.cc:3: layer sim includes kernels/c.h (layer kernels)");
  EXPECT_EQ(s.violations[1], "sim/b.cc:4: layer sim includes input/d.h (layer input)");
  fs::remove_all(root);
}

}  // namespace
}  // namespace gossipsim
