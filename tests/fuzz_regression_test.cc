// Every input kept in tests/fuzz/regressions/<target>/ (inputs that once
// crashed, hung or tripped a sanitizer in a fuzz target, and the seeds worth
// keeping) goes through the same entry point as the fuzzer: it must be
// refused with an InputError or accepted, never anything else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/fuzz/fuzz_entries.h"

namespace gossipsim {
namespace {

namespace fs = std::filesystem;

template <typename Entry>
int replay_folder(const std::string& target, Entry entry) {
  const fs::path dir = fs::path(GOSSIPSIM_SOURCE_DIR) / "tests/fuzz/regressions" / target;
  int inputs = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ++inputs;
  }
  return inputs;
}

TEST(FuzzRegressions, ScenarioInputsAreRefusedOrAccepted) {
  EXPECT_GT(replay_folder("scenario", fuzz::scenario_entry), 0);
}
TEST(FuzzRegressions, TopologyInputsAreRefusedOrAccepted) {
  EXPECT_GT(replay_folder("topology", fuzz::topology_entry), 0);
}
TEST(FuzzRegressions, ReplayInputsAreRefusedOrAccepted) { EXPECT_GT(replay_folder("replay", fuzz::replay_entry), 0); }
TEST(FuzzRegressions, ProfileInputsAreRefusedOrAcceptedAndPlayed) {
  EXPECT_GT(replay_folder("profile", fuzz::profile_entry), 0);
}
TEST(FuzzRegressions, ChurnInputsAreRefusedOrAccepted) { EXPECT_GT(replay_folder("churn", fuzz::churn_entry), 0); }
TEST(FuzzRegressions, SweepInputsAreRefusedOrAccepted) { EXPECT_GT(replay_folder("sweep", fuzz::sweep_entry), 0); }

}  // namespace
}  // namespace gossipsim
