// Evaluation priced before it is paid (sim/evaluation_cost.h), against
// shares computed by hand.
#include "sim/evaluation_cost.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gossipsim {
namespace {

// The teaching scenario: 4 nodes, 20 or 40 ms an iteration (mean 30 ms), 20
// virtual s, batch 32, evaluations every 1 s of every node's model and the
// average on 1,000 test samples, five methods of which single trains alone.
// By hand: steps 4 x 20/0.03 x 4 methods + 20/0.03 = 11,333.3, training
// 3 x 32 x 11,333.3 = 1,088,000 forward passes; evaluations 21 x (4 x 5 +
// 1) x 1,000 = 441,000; share 441,000 / 1,529,000 = 0.28843.
TEST(EvaluationCost, IsCountedInForwardPassesAsByHand) {
  const Scenario sc = load_scenario(std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json");
  const EvaluationCost c = estimate_evaluation_cost(sc, 1000);
  EXPECT_NEAR(c.node_steps, 4 * (4 * 20 / 0.03) + 20 / 0.03, 1e-6);
  EXPECT_EQ(c.evaluations, 21);
  EXPECT_EQ(c.models, 4 * 5 + 1);
  EXPECT_NEAR(c.share, 441000.0 / (441000.0 + 1088000.0), 1e-9);
  EXPECT_EQ(evaluation_cost_warning(sc, 1000), "");  // under half: nothing said
  // Every 0.1 s on 10,000 samples: 201 x 21 x 10,000 = 42,210,000 against
  // 1,088,000: 97.5%, said with the options that lower it.
  const Scenario dense =
      load_scenario(std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json", {"/eval/every_s=0.1"});
  EXPECT_NEAR(estimate_evaluation_cost(dense, 10000).share, 42210000.0 / (42210000.0 + 1088000.0), 1e-9);
  EXPECT_EQ(evaluation_cost_warning(dense, 10000),
            "evaluations will take about 97% of this run's kernel work (21 models of 5 methods evaluated on 10000 "
            "test samples every 0.1 virtual s, against 11333 training steps of batch 32); /eval/every_s, "
            "/eval/per_node false or /eval/test_samples lowers it");
  // The average model alone: (1 x 5) x 21 x 1,000 = 105,000.
  const Scenario average = load_scenario(std::string(GOSSIPSIM_SOURCE_DIR) + "/scenarios/teaching/synthetic-4.json",
                                         {"/eval/per_node=false"});
  EXPECT_NEAR(estimate_evaluation_cost(average, 1000).share, 105000.0 / (105000.0 + 1088000.0), 1e-9);
}

}  // namespace
}  // namespace gossipsim
