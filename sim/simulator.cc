#include "sim/simulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "sim/transport.h"

namespace gossipsim {

EventHandle Simulator::schedule(Time delay, Action action) {
  if (delay < Time::zero()) throw std::invalid_argument("negative delay: " + std::to_string(delay.ns()) + " ns");
  return schedule_at(now_ + delay, std::move(action));
}

EventHandle Simulator::schedule_at(Time when, Action action) {
  if (when < now_)
    throw std::invalid_argument("event in the past: " + std::to_string(when.ns()) + " ns < now " +
                                std::to_string(now_.ns()) + " ns");
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const uint64_t seq = next_seq_++;
  slots_[slot].action = std::move(action);
  slots_[slot].seq = seq;
  heap_.push_back(Entry{when.ns(), seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  ++scheduled_;
  return EventHandle(slot, seq);
}

bool Simulator::is_pending(EventHandle h) const {
  return h.valid() && h.slot_ < slots_.size() && slots_[h.slot_].seq == h.seq_;
}

bool Simulator::cancel(EventHandle h) {
  if (!is_pending(h)) return false;
  Slot& s = slots_[h.slot_];
  s.seq = 0;
  s.action = nullptr;
  ++cancelled_;
  return true;
}

// Drops cancelled entries from the top; their slots are freed only here, so a
// slot is never reused while a heap entry still points to it.
void Simulator::pop_dead() {
  while (!heap_.empty() && slots_[heap_.front().slot].seq != heap_.front().seq) {
    uint32_t slot = heap_.front().slot;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    free_slots_.push_back(slot);
  }
}

bool Simulator::step() {
  pop_dead();
  if (heap_.empty()) return false;
  Entry top = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
  GOSSIPSIM_CHECK(top.time >= now_.ns(), "an event was scheduled before the clock");
  now_ = Time::ns(top.time);
  Action action = std::move(slots_[top.slot].action);
  slots_[top.slot].seq = 0;
  free_slots_.push_back(top.slot);
  ++executed_;
  action();
  return true;
}

void Simulator::run(Time until, const std::function<bool()>& keep_going) {
  stopped_ = false;
  while (!stopped_) {
    pop_dead();
    if (heap_.empty() || heap_.front().time > until.ns()) {
      // In real time, what is in flight may still end before `until`.
      if (pacer_ && (!heap_.empty() || pacer_->busy()) && pacer_->wait_until(until)) continue;
      if (!heap_.empty()) now_ = until;
      break;
    }
    if (pacer_ && pacer_->wait_until(Time::ns(heap_.front().time))) continue;
    step();
    if (keep_going && !keep_going()) break;
  }
}

}  // namespace gossipsim
