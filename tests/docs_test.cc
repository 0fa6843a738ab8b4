// The documents' tables are what their committed data give: each is written
// by a script from CSVs committed beside it, and re-deriving it here must
// give the committed text.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace gossipsim {
namespace {

TEST(Docs, ResultsTablesAreWhatTheirCommittedDataGive) {
  std::string said;
  EXPECT_EQ(test::run_shell(std::string(GOSSIPSIM_SOURCE_DIR) + "/scripts/results check", &said), 0) << said;
}

// docs/reproduction.md's verdict table and the sweeps' tables and map in
// docs/figures/, recomputed from the committed sweep CSVs.
TEST(Docs, ReproductionTablesAreWhatTheCommittedSweepCsvsGive) {
  std::string said;
  EXPECT_EQ(test::run_shell(std::string(GOSSIPSIM_SOURCE_DIR) + "/scripts/reproduction-tables check", &said), 0)
      << said;
}

}  // namespace
}  // namespace gossipsim
