// NodeChains without any model: plain operations that record what ran when.
#include "kernels/node_chains.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace gossipsim {
namespace {

// Each node's operations run in the order posted, whatever the workers do,
// and far more of them than the poster may queue ahead.
TEST(NodeChains, EachNodeRunsItsOperationsInOrder) {
  for (int workers : {1, 2, 4}) {
    std::vector<std::vector<int>> seen(3);
    {
      NodeChains chains(3, workers);
      for (int k = 0; k < 300; ++k) {
        int node = k % 3;
        chains.post(node, [&seen, node, k] {
          if (k % 7 == 0) std::this_thread::yield();
          seen[node].push_back(k);
        });
      }
      chains.drain();
    }
    for (int node = 0; node < 3; ++node) {
      ASSERT_EQ(seen[node].size(), 100u) << workers;
      for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[node][i], 3 * i + node) << workers;
    }
  }
}

// An operation behind a gate runs after the gate opens, even when its chain
// reaches it first; the operations before it on its chain are not held up.
TEST(NodeChains, AGatedOperationWaitsForItsGate) {
  struct Value : NodeChains::Gate {
    int value = 0;
  };
  NodeChains chains(2, 2);
  auto gate = std::make_shared<Value>();
  std::atomic<bool> release{false};
  std::atomic<int> before{0};
  int read = -1;
  chains.post(0, [&] {
    while (!release) std::this_thread::yield();  // holds node 0 until node 1 ran ahead
    gate->value = 42;
    chains.open(*gate);
  });
  chains.post(1, [&] { before = 1; });
  chains.post(
      1, [&] { read = gate->value; }, gate);
  while (before == 0) std::this_thread::yield();
  release = true;
  chains.drain();
  EXPECT_EQ(read, 42);
}

TEST(NodeChains, AnErrorSurfacesAtDrainAndTheOthersStillRun) {
  NodeChains chains(2, 2);
  std::atomic<int> ran{0};
  chains.post(0, [] { throw std::runtime_error("kernel failed"); });
  chains.post(0, [&] { ++ran; });
  chains.post(1, [&] { ++ran; });
  EXPECT_THROW(chains.drain(), std::runtime_error);
  EXPECT_EQ(ran, 2);
  EXPECT_NO_THROW(chains.drain());  // reported once
}

}  // namespace
}  // namespace gossipsim
