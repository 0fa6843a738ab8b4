// Ranks 1..K-1 of a run over MPI ranks (ranks/mpi_run.h): they hold nodes
// and run what rank 0 asks of them.
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include "base/binary_io.h"
#include "base/error.h"
#include "kernels/torch_learner.h"
#include "ranks/mpi_run.h"
#include "ranks/wire.h"

namespace gossipsim {

using namespace wire;

namespace {

// A rank that holds nodes: its main thread runs rank 0's batches; one thread
// receives snapshots from other ranks, one sends what must wait for the
// kernels (snapshots shipped, shares of evaluations) in the order asked.
class Worker {
 public:
  explicit Worker(LearnerFactory& local) : local_(local) {}

  void run() {
    receiver_ = std::thread([this] { receive_snapshots(); });
    sender_ = std::thread([this] { send_loop(); });
    bool quit = false;
    while (!quit) {
      const auto start = std::chrono::steady_clock::now();
      const Message m = receive(0, kOps);
      counters_.idle_s += seconds_since(start);
      if (failed_) continue;  // rank 0 ends the run; until then, batches are read and dropped
      try {
        quit = run_batch(m.bytes);
      } catch (const std::exception& e) {
        report(e.what());
      }
    }
    stop();
  }

 private:
  struct Ship {
    int64_t id;
    int to;
    SnapshotPtr snapshot;
  };
  struct Share {
    int64_t job;
    std::shared_future<std::string> bytes;
  };
  struct Incoming {
    SnapshotPtr snapshot;
    bool filled = false, released = false;
  };

  bool run_batch(const std::string& bytes) {
    BinaryReader r(bytes, "a batch from rank 0");
    while (!r.at_end()) {
      const auto op = static_cast<Op>(r.get<uint8_t>());
      switch (op) {
        case kMake: {
          const int64_t nodes = r.get<int64_t>();
          const auto held = r.get_vector<NodeId>();
          destroy();
          std::lock_guard<std::mutex> lock(incoming_mutex_);
          part_ = make_part_learner(local_, static_cast<int>(nodes), held);
          break;
        }
        case kDestroy:
          destroy();
          break;
        case kStep: {
          const auto n = static_cast<NodeId>(r.get<int64_t>());
          const Time at = Time::ns(r.get<int64_t>());
          part_->step_numbered(n, at, r.get<uint64_t>());
          break;
        }
        case kSnap: {
          const auto n = static_cast<NodeId>(r.get<int64_t>());
          local_snapshots_[r.get<int64_t>()] = part_->snapshot(n);
          break;
        }
        case kShip: {
          const int64_t id = r.get<int64_t>();
          const int to = r.get<int32_t>();
          const SnapshotPtr s = local_snapshots_.at(id);
          part_->post_snapshot(s);
          queue(Ship{id, to, s});
          break;
        }
        case kMerge: {
          const auto receiver = static_cast<NodeId>(r.get<int64_t>());
          const int64_t id = r.get<int64_t>();
          const double w_self = r.get<double>(), w_other = r.get<double>();
          auto local = local_snapshots_.find(id);
          part_->merge(receiver, local != local_snapshots_.end() ? local->second : incoming(id), w_self, w_other);
          break;
        }
        case kRelease: {
          const int64_t id = r.get<int64_t>();
          local_snapshots_.erase(id);
          std::lock_guard<std::mutex> lock(incoming_mutex_);
          auto it = incoming_.find(id);
          if (it == incoming_.end()) break;
          if (it->second.filled)
            incoming_.erase(it);
          else
            it->second.released = true;  // the receiving thread lets go of it once filled
          break;
        }
        case kEvaluate: {
          const int64_t job = r.get<int64_t>();
          const bool per_node = r.get<uint8_t>() != 0;
          const uint64_t steps_before = r.get<uint64_t>();
          const auto nodes = r.get_vector<NodeId>();
          queue(Share{job, part_->evaluate_part(nodes, per_node, steps_before)});
          break;
        }
        case kGetRows: {
          const int64_t request = r.get<int64_t>();
          const auto nodes = r.get_vector<NodeId>();
          BinaryWriter w;
          w.put<int64_t>(request);
          const std::vector<std::string> rows = part_ ? part_->rows(nodes) : std::vector<std::string>();
          const auto [train, eval] = part_ ? part_->kernel_split() : std::pair<double, double>{0, 0};
          w.put<double>(train);
          w.put<double>(eval);
          {
            std::lock_guard<std::mutex> lock(send_mutex_);
            counters_.put(w);
          }
          put_strings(w, rows);
          send(w.bytes(), 0, kRows);
          break;
        }
        case kSetRows: {
          const auto nodes = r.get_vector<NodeId>();
          part_->set_rows(nodes, get_strings(r));
          break;
        }
        case kSetSame: {
          const auto nodes = r.get_vector<NodeId>();
          part_->set_rows(nodes, std::vector<std::string>(nodes.size(), r.get_string()));
          break;
        }
        case kQuit:
          destroy();
          return true;
        default:
          r.fail();
      }
    }
    return false;
  }

  // The snapshot `id` that another rank sends here, made on first mention
  // (by the merge that needs it, or by its bytes, whichever comes first).
  SnapshotPtr incoming(int64_t id) {
    std::lock_guard<std::mutex> lock(incoming_mutex_);
    Incoming& in = incoming_[id];
    if (!in.snapshot) in.snapshot = part_->incoming_snapshot();
    return in.snapshot;
  }

  void receive_snapshots() {
    for (;;) {
      const Message m = receive(MPI_ANY_SOURCE, kSnapshot);
      BinaryReader r(m.bytes, "a snapshot from rank " + std::to_string(m.source));
      const int64_t id = r.get<int64_t>();
      if (id < 0) return;
      const std::string bytes = r.get_string();
      std::lock_guard<std::mutex> lock(incoming_mutex_);
      GOSSIPSIM_CHECK(part_ != nullptr, "a snapshot arrives while its learner is alive");
      Incoming& in = incoming_[id];
      if (!in.snapshot) in.snapshot = part_->incoming_snapshot();
      part_->fill_snapshot(in.snapshot, bytes);
      in.filled = true;
      if (in.released) incoming_.erase(id);
      filled_.notify_all();
    }
  }

  template <class Item>
  void queue(Item item) {
    std::lock_guard<std::mutex> lock(send_mutex_);
    to_send_.push_back(std::move(item));
    send_cv_.notify_all();
  }

  // Snapshots and shares, each once the kernels made it, in the order asked.
  void send_loop() {
    for (;;) {
      std::variant<Ship, Share, std::monostate> item;
      {
        std::unique_lock<std::mutex> lock(send_mutex_);
        send_cv_.wait(lock, [&] { return !to_send_.empty() || stopping_; });
        if (to_send_.empty()) return;
        item = std::move(to_send_.front());
      }
      try {
        if (auto* s = std::get_if<Ship>(&item)) {
          const std::string bytes = one_string(s->id, part_->save_snapshot(*s->snapshot));
          const auto start = std::chrono::steady_clock::now();
          send(bytes, s->to, kSnapshot);
          std::lock_guard<std::mutex> lock(send_mutex_);
          counters_.send_s += seconds_since(start);
          ++counters_.snapshots_sent;
          counters_.snapshot_bytes += static_cast<int64_t>(bytes.size());
        } else if (auto* p = std::get_if<Share>(&item)) {
          const std::string bytes = one_string(p->job, p->bytes.get());
          const auto start = std::chrono::steady_clock::now();
          send(bytes, 0, kShare);
          std::lock_guard<std::mutex> lock(send_mutex_);
          counters_.send_s += seconds_since(start);
        }
      } catch (const std::exception& e) {
        report(e.what());
      }
      std::lock_guard<std::mutex> lock(send_mutex_);
      to_send_.pop_front();
      send_cv_.notify_all();
    }
  }

  // Waits until everything queued is sent; then the learner may go.
  void drain_sends() {
    std::unique_lock<std::mutex> lock(send_mutex_);
    send_cv_.wait(lock, [&] { return to_send_.empty(); });
  }

  // The learner goes once what it sends is sent and every snapshot its
  // merges wait for has come.
  void destroy() {
    drain_sends();
    local_snapshots_.clear();
    std::unique_ptr<PartLearner> old;
    {
      std::unique_lock<std::mutex> lock(incoming_mutex_);
      filled_.wait(lock, [&] {
        for (const auto& [id, in] : incoming_)
          if (!in.filled) return false;
        return true;
      });
      incoming_.clear();
      old = std::move(part_);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(send_mutex_);
      stopping_ = true;
      send_cv_.notify_all();
    }
    sender_.join();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    send(one_string(-1, std::string()), rank, kSnapshot);
    receiver_.join();
  }

  // The first failure of this rank, once, to rank 0 (which ends the run).
  void report(const std::string& what) {
    if (failed_.exchange(true)) return;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    BinaryWriter w;
    w.put_string(fmt::format("rank {}: {}", rank, what));
    send(w.bytes(), 0, kError);
  }

  LearnerFactory& local_;
  std::unique_ptr<PartLearner> part_;
  std::map<int64_t, SnapshotPtr> local_snapshots_;  // taken here (the main thread's)
  std::mutex incoming_mutex_;                       // incoming_, and part_ while it changes
  std::map<int64_t, Incoming> incoming_;
  std::condition_variable filled_;
  std::mutex send_mutex_;
  std::condition_variable send_cv_;
  std::deque<std::variant<Ship, Share, std::monostate>> to_send_;
  bool stopping_ = false;
  std::atomic<bool> failed_{false};
  RankCounters counters_;  // idle_s the main thread's; the rest under send_mutex_
  std::thread receiver_, sender_;
};

}  // namespace

void serve_rank(LearnerFactory& local, MpiSession&) { Worker(local).run(); }

}  // namespace gossipsim
