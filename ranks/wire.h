// What the ranks of a run over MPI (ranks/mpi_run.h) say to each other:
// the tags of their messages, the operations in rank 0's batches, and
// sends and receives that wait without taking a core.
#pragma once

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/binary_io.h"

namespace gossipsim::wire {

// Message tags. Rank 0 sends kOps to each other rank; ranks send snapshots
// to each other (kSnapshot) and shares, rows and errors to rank 0.
enum Tag : int { kOps = 1, kSnapshot = 2, kShare = 3, kRows = 4, kError = 5, kStop = 6 };
// Operations in a kOps batch.
enum Op : uint8_t {
  kMake = 1,  // nodes, held: a learner for this many nodes, keeping the held ones' rows (replacing the last)
  kDestroy,   // the learner is done
  kStep,      // node, at (ns), asked
  kSnap,      // node, id
  kShip,      // id, rank: send snapshot id to that rank
  kMerge,     // receiver, id, w_self, w_other
  kRelease,   // id
  kEvaluate,  // job, per_node, steps_before, nodes
  kGetRows,   // request, nodes: send their rows to rank 0
  kSetRows,   // nodes, rows
  kSetSame,   // nodes, row: every one of them takes it
  kQuit,      // the run is over
};

inline void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI failed in {} (code {})", what, code));
}

// Waiting on MPI: Open MPI's blocking calls poll at full speed, and on a
// machine whose cores all run kernels that polling takes their time (the
// quickstart over 2 ranks: rank 0 alone used 23 s of CPU in a 26 s run, and
// the kernels took 36 s instead of 25; with this, 1.1 s and 25 s). Here a
// wait polls, then sleeps a little longer each time, up to a millisecond.
class Backoff {
 public:
  void wait() {
    if (++polls_ <= 64) return;
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    sleep_us_ = std::min(sleep_us_ * 2, 1000);
  }

 private:
  int polls_ = 0, sleep_us_ = 20;
};

// Sends `bytes`; synchronous: returns once `to` has begun to receive them.
void send(const std::string& bytes, int to, int tag, bool synchronous = false);

// The next message from `from` (MPI_ANY_SOURCE) with `tag` (MPI_ANY_TAG).
struct Message {
  int source = 0, tag = 0;
  std::string bytes;
};
// A matched probe: another thread of this rank cannot take the message
// between the probe and the receive.
Message receive(int from, int tag);

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What a rank other than 0 did besides its kernels, since it started.
struct RankCounters {
  double idle_s = 0;           // its main thread waiting for rank 0's next batch
  int64_t snapshots_sent = 0;  // to other ranks, for merges that cross them
  int64_t snapshot_bytes = 0;
  double send_s = 0;  // in MPI sends of snapshots and shares
  void put(BinaryWriter& w) const {
    w.put<double>(idle_s);
    w.put<int64_t>(snapshots_sent);
    w.put<int64_t>(snapshot_bytes);
    w.put<double>(send_s);
  }
  static RankCounters get(BinaryReader& r) {
    RankCounters c;
    c.idle_s = r.get<double>();
    c.snapshots_sent = r.get<int64_t>();
    c.snapshot_bytes = r.get<int64_t>();
    c.send_s = r.get<double>();
    return c;
  }
};

inline std::string one_string(int64_t head, const std::string& s) {
  BinaryWriter w;
  w.put<int64_t>(head);
  w.put_string(s);
  return w.bytes();
}

inline void put_strings(BinaryWriter& w, const std::vector<std::string>& v) {
  w.put<uint64_t>(v.size());
  for (const auto& s : v) w.put_string(s);
}
inline std::vector<std::string> get_strings(BinaryReader& r) {
  const uint64_t n = r.get<uint64_t>();
  std::vector<std::string> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(r.get_string());
  return v;
}

}  // namespace gossipsim::wire
