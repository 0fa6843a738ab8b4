#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <vector>

namespace gossipsim {
namespace {

TEST(Simulator, RunsEventsInTimeOrder) {
  Simulator sim;
  std::vector<int64_t> seen;
  for (int64_t t : {30, 10, 20}) sim.schedule(nanoseconds(t), [&, t] { seen.push_back(sim.now().ns()); });
  sim.run();
  EXPECT_EQ(seen, (std::vector<int64_t>{10, 20, 30}));
}

TEST(Simulator, TiesRunInSchedulingOrder) {
  Simulator sim;
  std::vector<int> order;
  for (int k = 0; k < 100; ++k) sim.schedule(nanoseconds(5), [&, k] { order.push_back(k); });
  sim.run();
  for (int k = 0; k < 100; ++k) EXPECT_EQ(order[k], k);
}

TEST(Simulator, EventsScheduledDuringATieRunAfterIt) {
  Simulator sim;
  std::vector<std::string> order;
  sim.schedule(nanoseconds(1), [&] {
    order.push_back("a");
    sim.schedule(Time::zero(), [&] { order.push_back("c"); });
  });
  sim.schedule(nanoseconds(1), [&] { order.push_back("b"); });
  sim.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Simulator, CancelledEventNeverRuns) {
  Simulator sim;
  bool ran = false;
  EventHandle h = sim.schedule(nanoseconds(10), [&] { ran = true; });
  EXPECT_TRUE(sim.cancel(h));
  EXPECT_FALSE(sim.cancel(h));
  sim.run();
  EXPECT_FALSE(ran);
  EXPECT_EQ(sim.cancelled(), 1u);
  EXPECT_EQ(sim.executed(), 0u);
}

TEST(Simulator, CancellingARunEventIsIgnoredEvenAfterSlotReuse) {
  Simulator sim;
  int ran = 0;
  EventHandle first = sim.schedule(nanoseconds(1), [&] { ++ran; });
  sim.run();
  sim.schedule(nanoseconds(1), [&] { ++ran; });  // may reuse the slot
  EXPECT_FALSE(sim.cancel(first));
  sim.run();
  EXPECT_EQ(ran, 2);
}

TEST(Simulator, RefusesNegativeDelayAndThePast) {
  Simulator sim;
  EXPECT_THROW(sim.schedule(nanoseconds(-1), [] {}), std::invalid_argument);
  sim.schedule(nanoseconds(100), [] {});
  sim.run();
  EXPECT_THROW(sim.schedule_at(nanoseconds(99), [] {}), std::invalid_argument);
}

TEST(Simulator, AccountsForEveryEvent) {
  Simulator sim;
  std::vector<EventHandle> h;
  for (int k = 0; k < 50; ++k) h.push_back(sim.schedule(nanoseconds(k), [] {}));
  for (int k = 0; k < 50; k += 3) sim.cancel(h[k]);
  sim.run(nanoseconds(30));
  EXPECT_EQ(sim.scheduled(), sim.executed() + sim.cancelled() + sim.pending());
  EXPECT_EQ(sim.now(), nanoseconds(30));
  sim.run();
  EXPECT_EQ(sim.pending(), 0u);
  EXPECT_EQ(sim.executed() + sim.cancelled(), 50u);
}

TEST(Simulator, StopsOnPredicateAndOnStop) {
  Simulator sim;
  int count = 0;
  std::function<void()> tick = [&] {
    ++count;
    sim.schedule(nanoseconds(1), tick);
  };
  sim.schedule(Time::zero(), tick);
  sim.run(Time::max(), [&] { return count < 10; });
  EXPECT_EQ(count, 10);
  sim.schedule(Time::zero(), [&] { sim.stop(); });
  sim.run();
  EXPECT_LE(count, 12);
}

TEST(Simulator, TwoSimulatorsAreIndependent) {
  Simulator a, b;
  a.schedule(nanoseconds(5), [] {});
  b.schedule(nanoseconds(7), [] {});
  a.run();
  EXPECT_EQ(a.now(), nanoseconds(5));
  EXPECT_EQ(b.now(), Time::zero());
  b.run();
  EXPECT_EQ(b.now(), nanoseconds(7));
}

}  // namespace
}  // namespace gossipsim
