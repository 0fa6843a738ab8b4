#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/transport.h"

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

// A pacer that keeps a script instead of a clock: it records every wait,
// and during the wait for a given time it schedules the event it was told
// to (as a transfer that ends while the loop waits would be).
class ScriptedPacer : public Pacer {
 public:
  explicit ScriptedPacer(Simulator& sim) : sim_(sim) {}
  bool wait_until(Time t) override {
    waits.push_back(t.ns() == Time::max().ns() ? -1 : t.ns());
    for (auto it = arrivals.begin(); it != arrivals.end(); ++it)
      if (it->first <= t.ns() || t == Time::max()) {
        const int64_t at = it->first;
        arrivals.erase(it);
        sim_.schedule_at(nanoseconds(at), [this, at] { log.push_back("arrival@" + std::to_string(at)); });
        return true;
      }
    return false;
  }
  bool busy() const override { return !arrivals.empty(); }

  std::vector<std::pair<int64_t, int>> arrivals;  // (time, unused)
  std::vector<int64_t> waits;
  std::vector<std::string> log;

 private:
  Simulator& sim_;
};

// With a pacer, run() waits before each event; what the pacer schedules
// during a wait runs before the event it waited for when it comes first.
TEST(Simulator, APacerIsWaitedForBeforeEveryEventAndItsArrivalsComeInOrder) {
  Simulator sim;
  ScriptedPacer pacer(sim);
  pacer.arrivals = {{30, 0}};
  sim.set_pacer(&pacer);
  for (int64_t t : {10, 50})
    sim.schedule_at(nanoseconds(t), [&, t] { pacer.log.push_back("event@" + std::to_string(t)); });
  sim.run(nanoseconds(100));
  EXPECT_EQ(pacer.log, (std::vector<std::string>{"event@10", "arrival@30", "event@50"}));
  // 10 waited for; 50 waited for, interrupted by the arrival at 30; 30, 50.
  // Then nothing is queued or in flight: no wait for `until`.
  EXPECT_EQ(pacer.waits, (std::vector<int64_t>{10, 50, 30, 50}));
  EXPECT_EQ(sim.now(), nanoseconds(50));  // an empty queue leaves the clock where it was, as without a pacer
}

// With nothing queued but work in flight, run() waits for it rather than
// ending; once the pacer is idle it ends.
TEST(Simulator, AnEmptyQueueWaitsWhileThePacerIsBusy) {
  Simulator sim;
  ScriptedPacer pacer(sim);
  pacer.arrivals = {{70, 0}};
  sim.set_pacer(&pacer);
  sim.run();
  EXPECT_EQ(pacer.log, (std::vector<std::string>{"arrival@70"}));
  EXPECT_EQ(pacer.waits, (std::vector<int64_t>{-1, 70}));
  EXPECT_EQ(sim.now(), nanoseconds(70));
  // Beyond `until`: waited for until it, then the clock stops at until.
  Simulator late;
  ScriptedPacer p2(late);
  late.set_pacer(&p2);
  late.schedule_at(nanoseconds(500), [] {});
  late.run(nanoseconds(200));
  EXPECT_EQ(p2.waits, (std::vector<int64_t>{200}));
  EXPECT_EQ(late.now(), nanoseconds(200));
}

}  // namespace
}  // namespace gossipsim
