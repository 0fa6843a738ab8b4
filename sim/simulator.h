// The discrete-event engine.
//
// Events are ordered by (time, sequence number): the sequence number grows
// with every schedule, so events at the same time run in the order they were
// scheduled, whatever the heap does. Cancellation is lazy: a cancelled event
// stays in the heap and is skipped when it reaches the top.
//
// Invariants, checked: time never goes backwards; a negative delay or a time
// in the past is refused (std::invalid_argument); at every point
// scheduled() == executed() + cancelled() + pending().
//
// Complexity: schedule and each step O(log pending). Not thread safe: one
// Simulator belongs to one thread, and several can run side by side.
//
// Real time (`run --real`): with a Pacer (sim/transport.h), run() waits
// before each event until the pacer says the wall clock has reached its
// time; events the pacer schedules meanwhile are looked at first. With
// nothing left in the queue, run() goes on waiting while the pacer is busy
// (transfers in flight). Without a pacer, nothing waits.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/units.h"

namespace gossipsim {

class Simulator;
class Pacer;

// Refers to one scheduled event; default-constructed handles refer to none.
class EventHandle {
 public:
  EventHandle() = default;
  bool valid() const { return seq_ != 0; }

 private:
  friend class Simulator;
  EventHandle(uint32_t slot, uint64_t seq) : slot_(slot), seq_(seq) {}
  uint32_t slot_ = 0;
  uint64_t seq_ = 0;
};

class Simulator {
 public:
  using Action = std::function<void()>;

  Time now() const { return now_; }

  EventHandle schedule(Time delay, Action action);    // delay >= 0
  EventHandle schedule_at(Time when, Action action);  // when >= now()
  // Cancels a pending event; a handle that already ran or was cancelled is ignored.
  // Returns whether an event was cancelled.
  bool cancel(EventHandle h);
  bool is_pending(EventHandle h) const;

  // Runs the next live event; false when none is left.
  bool step();
  // Runs until no event is left, the next event lies beyond `until` (the clock
  // then stops at `until`), stop() is called, or `keep_going` returns false
  // (checked after every event).
  void run(Time until = Time::max(), const std::function<bool()>& keep_going = {});
  void stop() { stopped_ = true; }
  void set_pacer(Pacer* pacer) { pacer_ = pacer; }

  uint64_t scheduled() const { return scheduled_; }
  uint64_t executed() const { return executed_; }
  uint64_t cancelled() const { return cancelled_; }
  uint64_t pending() const { return scheduled_ - executed_ - cancelled_; }

 private:
  struct Entry {
    int64_t time;
    uint64_t seq;
    uint32_t slot;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  struct Slot {
    Action action;
    uint64_t seq = 0;  // 0: free or cancelled
  };

  void pop_dead();

  Time now_;
  bool stopped_ = false;
  Pacer* pacer_ = nullptr;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 1;
  uint64_t scheduled_ = 0, executed_ = 0, cancelled_ = 0;
};

}  // namespace gossipsim
