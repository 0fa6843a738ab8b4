#include "kernels/node_chains.h"

#include <boost/asio/post.hpp>

namespace gossipsim {

NodeChains::NodeChains(int nodes, int workers, std::function<void()> on_worker)
    : chains_(nodes), on_worker_(std::move(on_worker)) {
  if (workers > 1) pool_ = std::make_unique<boost::asio::thread_pool>(workers);
}

void NodeChains::join() {
  if (!pool_ || joined_) return;
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return in_flight_ == 0; });
  lock.unlock();
  pool_->join();  // also the wake-ups open() posted
  joined_ = true;
}

void NodeChains::post(int node, std::function<void()> op, std::shared_ptr<Gate> after) {
  if (!pool_) return op();
  std::unique_lock<std::mutex> lock(mutex_);
  if (in_flight_ >= limit()) room_.wait(lock, [&] { return in_flight_ <= limit() / 2; });
  ++in_flight_;
  Chain& c = chains_[node];
  c.ops.push_back(Op{std::move(op), std::move(after)});
  if (!c.scheduled) {
    c.scheduled = true;
    boost::asio::post(*pool_, [this, node] { run(node); });
  }
}

void NodeChains::run(int node) {
  thread_local const NodeChains* prepared = nullptr;  // the chains this thread was prepared for
  if (prepared != this) {
    if (on_worker_) on_worker_();
    prepared = this;
  }
  Chain& c = chains_[node];
  for (;;) {
    Op op;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (c.ops.empty()) {
        c.scheduled = false;
        return;
      }
      if (c.ops.front().after && !c.ops.front().after->open_) {
        c.ops.front().after->parked_.push_back(node);  // stays scheduled: parked
        return;
      }
      op = std::move(c.ops.front());
      c.ops.pop_front();
    }
    std::exception_ptr error;
    try {
      op.fn();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) error_ = error;
    --in_flight_;
    if (in_flight_ == limit() / 2) room_.notify_all();
    if (in_flight_ == 0) idle_.notify_all();
  }
}

void NodeChains::open(Gate& gate) {
  if (!pool_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  gate.open_ = true;
  for (int n : gate.parked_) boost::asio::post(*pool_, [this, n] { run(n); });
  gate.parked_.clear();
}

void NodeChains::drain() {
  if (!pool_) return;
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return in_flight_ == 0; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace gossipsim
