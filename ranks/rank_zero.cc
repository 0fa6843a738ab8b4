// Rank 0 of a run over MPI ranks (ranks/mpi_run.h): the learner that posts
// each node's operations to the rank holding it, and gathers what it needs.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/binary_io.h"
#include "base/error.h"
#include "kernels/torch_learner.h"
#include "ranks/mpi_run.h"
#include "ranks/wire.h"

namespace gossipsim {

using namespace wire;

namespace {

// Rank 0's side of the messages: a batch of operations per rank, sent
// together (synchronously: rank 0 runs ahead of a rank by at most one batch
// and what that rank's chains hold), and a thread that receives what the
// ranks send back.
class Link : public std::enable_shared_from_this<Link> {
 public:
  explicit Link(int size) : size_(size), batches_(size), counts_(size, 0) {
    receiver_ = std::thread([this] { receive_loop(); });
  }
  ~Link() {
    send(std::string(), 0, kStop);
    receiver_.join();
  }
  int workers() const { return size_ - 1; }

  // Appends an operation to `rank`'s batch; `fill` writes its fields.
  template <class Fill>
  void post(int rank, Op op, Fill&& fill) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;  // a snapshot let go of after the run
    BinaryWriter& w = batches_[rank];
    w.put<uint8_t>(op);
    fill(w);
    ++counts_[rank];
    if (++queued_ >= kBatchOps || w.bytes().size() >= kBatchBytes) flush_locked();
  }
  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_locked();
  }
  void post_all(Op op) {
    for (int r = 1; r < size_; ++r) post(r, op, [](BinaryWriter&) {});
  }
  // The last batches: kQuit to every rank.
  void close() {
    post_all(kQuit);
    std::lock_guard<std::mutex> lock(mutex_);
    flush_locked();
    closed_ = true;
  }

  int64_t next_id() { return next_id_++; }

  // Where a run's time went between the ranks (summary.json's "mpi").
  nlohmann::json stats() {
    std::lock_guard<std::mutex> a(mutex_), b(replies_mutex_);
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& [rank, c] : counters_)
      ranks.push_back({{"rank", rank},
                       {"idle_s", c.idle_s},
                       {"snapshots_sent", c.snapshots_sent},
                       {"snapshot_bytes", c.snapshot_bytes},
                       {"send_s", c.send_s}});
    return {{"ranks", size_},
            {"batches", batches_sent_},
            {"operation_bytes", op_bytes_},
            {"share_bytes", share_bytes_},
            {"engine_send_wait_s", send_wait_s_},
            {"engine_gather_wait_s", gather_wait_s_},
            {"holders", ranks}};
  }

  // An evaluation whose shares are on their way.
  struct Pending {
    std::vector<NodeId> nodes;
    bool per_node = false;
    int expected = 0;
    std::vector<std::string> shares;
    std::promise<Evaluation> promise;
    std::function<Evaluation(const std::vector<std::string>&)> finish;
  };
  void expect(int64_t job, std::shared_ptr<Pending> p) {
    std::lock_guard<std::mutex> lock(replies_mutex_);
    if (!error_.empty()) p->promise.set_exception(std::make_exception_ptr(std::runtime_error(error_)));
    pending_[job] = std::move(p);
  }

  // Each rank's reply to a kGetRows request: its rows, and its kernel
  // seconds (training, evaluating) so far.
  struct Rows {
    std::vector<std::string> rows;
    double train_s = 0, eval_s = 0;
    RankCounters counters;
  };
  std::map<int, Rows> wait_rows(int64_t request, const std::set<int>& from) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(replies_mutex_);
    replied_.wait(lock, [&] {
      if (!error_.empty()) return true;
      for (int r : from)
        if (!rows_.count({request, r})) return false;
      return true;
    });
    if (!error_.empty()) throw std::runtime_error(error_);
    gather_wait_s_ += seconds_since(start);
    std::map<int, Rows> out;
    for (int r : from) {
      out[r] = std::move(rows_[{request, r}]);
      rows_.erase({request, r});
    }
    return out;
  }

  void check_error() {
    std::lock_guard<std::mutex> lock(replies_mutex_);
    if (!error_.empty()) throw std::runtime_error(error_);
  }
  // Waits for the evaluations' finishing threads.
  void join_finishers() {
    std::vector<std::future<void>> finishers;
    {
      std::lock_guard<std::mutex> lock(replies_mutex_);
      finishers.swap(finishers_);
    }
    for (auto& f : finishers) f.wait();
  }

 private:
  static constexpr int64_t kBatchOps = 512;
  static constexpr size_t kBatchBytes = 4 << 20;

  void flush_locked() {
    for (int r = 1; r < size_; ++r) {
      if (counts_[r] == 0) continue;
      const auto start = std::chrono::steady_clock::now();
      send(batches_[r].bytes(), r, kOps, true);
      send_wait_s_ += seconds_since(start);
      ++batches_sent_;
      op_bytes_ += static_cast<int64_t>(batches_[r].bytes().size());
      batches_[r] = BinaryWriter();
      counts_[r] = 0;
    }
    queued_ = 0;
  }

  void receive_loop() {
    for (;;) {
      Message m;
      try {
        m = receive(MPI_ANY_SOURCE, MPI_ANY_TAG);
      } catch (const std::exception& e) {
        fail(e.what());
        return;
      }
      if (m.tag == kStop) return;
      try {
        BinaryReader r(m.bytes, "a message from rank " + std::to_string(m.source));
        if (m.tag == kError) {
          fail(r.get_string());
        } else if (m.tag == kShare) {
          const int64_t job = r.get<int64_t>();
          std::string share = r.get_string();
          std::shared_ptr<Pending> p;
          {
            std::lock_guard<std::mutex> lock(replies_mutex_);
            share_bytes_ += static_cast<int64_t>(share.size());
            auto it = pending_.find(job);
            GOSSIPSIM_CHECK(it != pending_.end(), "a share of an evaluation rank 0 asked for");
            it->second->shares.push_back(std::move(share));
            if (static_cast<int>(it->second->shares.size()) < it->second->expected) continue;
            p = std::move(it->second);
            pending_.erase(it);
          }
          // The average model is evaluated beside the receiving, which goes on.
          std::lock_guard<std::mutex> lock(replies_mutex_);
          // One at a time: the home learner has a module per worker, and
          // evaluations in flight may complete together.
          finishers_.push_back(std::async(std::launch::async, [this, p] {
            try {
              std::lock_guard<std::mutex> one(finish_mutex_);
              p->promise.set_value(p->finish(p->shares));
            } catch (...) {
              p->promise.set_exception(std::current_exception());
            }
          }));
        } else if (m.tag == kRows) {
          const int64_t request = r.get<int64_t>();
          Rows rows;
          rows.train_s = r.get<double>();
          rows.eval_s = r.get<double>();
          rows.counters = RankCounters::get(r);
          rows.rows = get_strings(r);
          std::lock_guard<std::mutex> lock(replies_mutex_);
          counters_[m.source] = rows.counters;
          rows_[{request, m.source}] = std::move(rows);
          replied_.notify_all();
        }
      } catch (const std::exception& e) {
        fail(e.what());
      }
    }
  }

  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(replies_mutex_);
    if (error_.empty()) error_ = what;
    for (auto& [job, p] : pending_) p->promise.set_exception(std::make_exception_ptr(std::runtime_error(error_)));
    pending_.clear();
    replied_.notify_all();
  }

  const int size_;
  std::mutex mutex_;  // the batches
  std::vector<BinaryWriter> batches_;
  std::vector<int64_t> counts_;
  int64_t queued_ = 0;
  bool closed_ = false;
  int64_t batches_sent_ = 0, op_bytes_ = 0;
  double send_wait_s_ = 0;  // the engine blocked in sends: a rank had not taken its last batch yet
  std::atomic<int64_t> next_id_{0};

  std::mutex replies_mutex_;
  std::condition_variable replied_;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  std::map<std::pair<int64_t, int>, Rows> rows_;
  std::string error_;                     // the first failure a rank reported
  std::map<int, RankCounters> counters_;  // each rank's, as of its last reply
  double gather_wait_s_ = 0;              // rank 0 waiting for rows (all-reduces, resets, totals)
  int64_t share_bytes_ = 0;
  std::vector<std::future<void>> finishers_;
  std::mutex finish_mutex_;
  std::thread receiver_;
};

// The rank that holds node n of `nodes`, over ranks 1..workers: blocks of
// consecutive nodes.
int owner_of(NodeId n, int nodes, int workers) {
  return 1 + static_cast<int>(static_cast<int64_t>(n) * workers / std::max(1, nodes));
}

// A snapshot held by the rank that took it (and copied to the ranks it was
// shipped to); gone from all of them when rank 0 lets go of it.
struct RankSnapshot : ModelSnapshot {
  int64_t id = 0;
  int rank = 0;
  std::set<int> shipped_to;
  std::weak_ptr<Link> link;
  ~RankSnapshot() override {
    auto l = link.lock();
    if (!l) return;
    auto release = [id = id](BinaryWriter& w) { w.put<int64_t>(id); };
    l->post(rank, kRelease, release);
    for (int r : shipped_to) l->post(r, kRelease, release);
  }
};

class RankLearner : public Learner {
 public:
  RankLearner(std::shared_ptr<Link> link, std::unique_ptr<PartLearner> home, int nodes)
      : link_(std::move(link)), home_(std::move(home)), nodes_(nodes) {}
  ~RankLearner() override {
    // On the way out of an error a rank may be stuck: the launcher ends them.
    if (std::uncaught_exceptions() == 0) try {
        link_->post_all(kDestroy);
        link_->flush();
      } catch (...) {
      }
    link_->join_finishers();
  }

  int node_count() const override { return nodes_; }
  Bytes model_bytes() const override { return home_->model_bytes(); }
  int64_t batch() const override { return home_->batch(); }
  int64_t train_size() const override { return home_->train_size(); }
  std::vector<std::vector<int64_t>> label_histogram() const override { return home_->label_histogram(); }

  void step(NodeId n, Time at) override {
    const uint64_t asked = asked_++;
    link_->post(owner(n), kStep, [&](BinaryWriter& w) {
      w.put<int64_t>(n);
      w.put<int64_t>(at.ns());
      w.put<uint64_t>(asked);
    });
    if ((asked & 1023) == 0) link_->check_error();
  }

  SnapshotPtr snapshot(NodeId n) override {
    auto s = std::make_shared<RankSnapshot>();
    s->id = link_->next_id();
    s->rank = owner(n);
    s->link = link_;
    link_->post(s->rank, kSnap, [&](BinaryWriter& w) {
      w.put<int64_t>(n);
      w.put<int64_t>(s->id);
    });
    return s;
  }

  void merge(NodeId receiver, const SnapshotPtr& snap, double w_self, double w_other) override {
    auto s = std::const_pointer_cast<RankSnapshot>(std::static_pointer_cast<const RankSnapshot>(snap));
    const int to = owner(receiver);
    if (to != s->rank && s->shipped_to.insert(to).second)
      link_->post(s->rank, kShip, [&](BinaryWriter& w) {
        w.put<int64_t>(s->id);
        w.put<int32_t>(to);
      });
    link_->post(to, kMerge, [&](BinaryWriter& w) {
      w.put<int64_t>(receiver);
      w.put<int64_t>(s->id);
      w.put<double>(w_self);
      w.put<double>(w_other);
    });
  }

  // The rows of `nodes` gathered to the home learner, which computes the
  // mean there as the one-process run does; the result goes back.
  void average(const std::vector<NodeId>& nodes) override {
    if (nodes.empty()) return;
    gather(nodes);
    home_->average(nodes);
    // Every listed node now holds the same rows: one copy goes to each rank.
    for (const auto& [rank, subset] : by_rank(nodes)) {
      const std::string row = home_->rows({subset.front()}).front();
      link_->post(rank, kSetSame, [&, subset = subset](BinaryWriter& w) {
        w.put_vector(subset);
        w.put_string(row);
      });
    }
  }

  void reset_node(NodeId n, const std::vector<NodeId>& from) override {
    std::vector<NodeId> involved = from;
    involved.push_back(n);
    gather(involved);
    home_->reset_node(n, from);
    scatter({n});
  }

  void set_evaluated(const std::vector<NodeId>& nodes) override { evaluated_ = nodes; }
  void set_groups(const std::vector<int>& groups) override { home_->set_groups(groups); }

  PendingEvaluation evaluate_async(bool per_node) override {
    std::vector<NodeId> nodes = evaluated_;
    if (nodes.empty())
      for (NodeId i = 0; i < nodes_; ++i) nodes.push_back(i);
    const std::map<int, std::vector<NodeId>> shares = by_rank(nodes);
    auto p = std::make_shared<Link::Pending>();
    p->nodes = nodes;
    p->per_node = per_node;
    p->expected = static_cast<int>(shares.size());
    PartLearner* home = home_.get();
    p->finish = [home, nodes, per_node](const std::vector<std::string>& parts) {
      return home->finish_parts(parts, nodes, per_node);
    };
    PendingEvaluation result = p->promise.get_future().share();
    const int64_t job = link_->next_id();
    link_->expect(job, p);
    for (const auto& [rank, subset] : shares)
      link_->post(rank, kEvaluate, [&, subset = subset](BinaryWriter& w) {
        w.put<int64_t>(job);
        w.put<uint8_t>(per_node ? 1 : 0);
        w.put<uint64_t>(asked_);
        w.put_vector(subset);
      });
    link_->flush();  // whoever waits for it must not wait for a batch
    return result;
  }

  double kernel_seconds() const override {
    const auto [train, eval] = totals();
    return train + eval;
  }
  double evaluation_seconds() const override { return totals().second; }

  std::string save_state() override { throw unsupported(); }
  void load_state(const std::string&) override { throw unsupported(); }
  std::string save_snapshot(const ModelSnapshot&) override { throw unsupported(); }
  SnapshotPtr load_snapshot(const std::string&) override { throw unsupported(); }

 private:
  static std::runtime_error unsupported() { return std::runtime_error("a run over MPI ranks takes no checkpoints"); }

  int owner(NodeId n) const { return owner_of(n, nodes_, link_->workers()); }
  std::map<int, std::vector<NodeId>> by_rank(const std::vector<NodeId>& nodes) const {
    std::map<int, std::vector<NodeId>> out;
    for (NodeId n : nodes) out[owner(n)].push_back(n);
    return out;
  }

  // Rows of `nodes` (each rank's once every operation asked of it has run)
  // into the home learner.
  std::map<int, Link::Rows> request_rows(const std::map<int, std::vector<NodeId>>& shares) const {
    const int64_t request = link_->next_id();
    std::set<int> from;
    for (const auto& [rank, subset] : shares) {
      from.insert(rank);
      link_->post(rank, kGetRows, [&, subset = subset](BinaryWriter& w) {
        w.put<int64_t>(request);
        w.put_vector(subset);
      });
    }
    link_->flush();
    return link_->wait_rows(request, from);
  }
  void gather(const std::vector<NodeId>& nodes) {
    const auto shares = by_rank(nodes);
    auto replies = request_rows(shares);
    for (const auto& [rank, subset] : shares) home_->set_rows(subset, replies[rank].rows);
  }
  // The rows of `nodes` back to the ranks that hold them.
  void scatter(const std::vector<NodeId>& nodes) {
    for (const auto& [rank, subset] : by_rank(nodes)) {
      const std::vector<std::string> rows = home_->rows(subset);
      link_->post(rank, kSetRows, [&, subset = subset](BinaryWriter& w) {
        w.put_vector(subset);
        put_strings(w, rows);
      });
    }
  }

  // Kernel seconds (training, evaluating) of every rank, home included.
  std::pair<double, double> totals() const {
    std::map<int, std::vector<NodeId>> everyone;
    for (int r = 1; r <= link_->workers(); ++r) everyone[r] = {};
    auto [train, eval] = home_->kernel_split();
    for (const auto& [rank, rows] : request_rows(everyone)) {
      train += rows.train_s;
      eval += rows.eval_s;
    }
    return {train, eval};
  }

  std::shared_ptr<Link> link_;
  std::unique_ptr<PartLearner> home_;
  const int nodes_;
  uint64_t asked_ = 0;
  std::vector<NodeId> evaluated_;
};

class RankFactory : public LearnerFactory {
 public:
  RankFactory(std::unique_ptr<LearnerFactory> local, MpiSession& session)
      : local_(std::move(local)), link_(std::make_shared<Link>(session.size())) {}
  ~RankFactory() override {
    if (std::uncaught_exceptions() == 0) try {
        link_->close();
      } catch (...) {
      }
  }
  nlohmann::json stats() { return link_->stats(); }
  std::unique_ptr<Learner> make(int nodes) override {
    // Each rank keeps the rows of its own nodes only.
    std::vector<std::vector<NodeId>> held(link_->workers() + 1);
    for (NodeId n = 0; n < nodes; ++n) held[owner_of(n, nodes, link_->workers())].push_back(n);
    for (int r = 1; r <= link_->workers(); ++r)
      link_->post(r, kMake, [&](BinaryWriter& w) {
        w.put<int64_t>(nodes);
        w.put_vector(held[r]);
      });
    return std::make_unique<RankLearner>(link_, make_part_learner(*local_, nodes), nodes);
  }

 private:
  std::unique_ptr<LearnerFactory> local_;
  std::shared_ptr<Link> link_;
};

}  // namespace

std::unique_ptr<LearnerFactory> make_rank_factory(std::unique_ptr<LearnerFactory> local, MpiSession& session) {
  return std::make_unique<RankFactory>(std::move(local), session);
}

nlohmann::json rank_stats(LearnerFactory& rank_factory) { return dynamic_cast<RankFactory&>(rank_factory).stats(); }

}  // namespace gossipsim
