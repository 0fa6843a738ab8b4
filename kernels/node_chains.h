// Per-node chains of operations on a worker pool: how the kernels of many
// virtual nodes run side by side while the event loop runs ahead.
//
// Operations posted for one node run in the order they were posted, one at a
// time; different nodes' run concurrently on `workers` threads (boost::asio
// thread_pool). A node's results therefore do not depend on the worker count.
// An operation may need a Gate (a snapshot another chain is taking): its chain
// parks, holding no worker, until the gate opens. A parked operation always
// waits for one posted earlier, so chains never wait on each other in a cycle.
//
// The poster runs ahead by at most kAheadPerNode queued operations a node;
// past that post() waits until half of them are done, so queued work stays
// small. With one worker there is no pool: post() runs the operation at once.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace gossipsim {

class NodeChains {
 public:
  static constexpr int64_t kAheadPerNode = 16;

  // Something operations can wait for; open() it once, from any thread.
  struct Gate {
    virtual ~Gate() = default;

   private:
    friend class NodeChains;
    bool open_ = false;        // guarded by the chains' mutex
    std::vector<int> parked_;  // nodes whose chains wait for it
  };

  // `on_worker` runs once on each worker thread, before its first operation.
  NodeChains(int nodes, int workers, std::function<void()> on_worker = {});
  ~NodeChains() { join(); }
  // Waits for every chain to finish what it was given and stops the workers;
  // nothing may be posted after. Call it while what the operations use is
  // still alive (an operation may still be calling open()).
  void join();

  bool concurrent() const { return pool_ != nullptr; }
  void post(int node, std::function<void()> op, std::shared_ptr<Gate> after = nullptr);
  void open(Gate& gate);
  // Waits until every chain is idle; rethrows the first error an operation raised.
  void drain();

 private:
  struct Op {
    std::function<void()> fn;
    std::shared_ptr<Gate> after;
  };
  struct Chain {
    std::deque<Op> ops;
    bool scheduled = false;  // a worker runs it, or it is parked on a gate
  };
  void run(int node);
  int64_t limit() const { return kAheadPerNode * static_cast<int64_t>(chains_.size()); }

  std::vector<Chain> chains_;
  std::mutex mutex_;
  std::condition_variable idle_, room_;
  int64_t in_flight_ = 0;  // operations queued or running
  std::exception_ptr error_;
  std::function<void()> on_worker_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
  bool joined_ = false;
};

}  // namespace gossipsim
