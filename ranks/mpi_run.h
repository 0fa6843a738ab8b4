// One simulation over MPI ranks: `mpirun -np K gossipsim run SCENARIO.json`
// (or `srun --mpi=pmix`). Rank 0 runs the event engine and the methods, and
// writes every result; ranks 1..K-1 hold the nodes' models (node n on rank
// 1 + n(K-1)/N, in blocks) and run their kernels on their own threads.
//
// Rank 0 posts each node's operations to the rank that holds it, in batches;
// a snapshot moves between ranks only when a merge crosses them (sent by the
// rank that took it, straight to the receiver's), and an evaluation gathers
// each rank's rows (and per-node results) to rank 0, which evaluates the
// average model there. All-reduces and churn's resets gather the rows they
// need to rank 0 and send the result back. Every node's operations therefore
// run in the order and on the numbers of the one-process run: the CSVs are
// byte-identical to it for any K (docs/scale.md).
//
// ranks/rank_zero.cc is rank 0's side, ranks/holder.cc the other ranks',
// ranks/wire.h what they say to each other.
//
// Ranks 1..K-1 keep the rows of their own nodes only; rank 0 keeps every
// node's (it computes the averages), so it needs the memory of the
// one-process run's models. Checkpoints,
// --resume and --real are refused under MPI. A rank that fails reports one
// line through rank 0; a rank that dies ends the whole job (the launcher's
// doing), and rank 0 leaves no result folder behind.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/learner.h"

namespace gossipsim {

// Whether this process was started by an MPI launcher (mpirun, or srun with
// PMIx), from the variables it sets. Plain runs never initialize MPI, nor
// do a sweep's points (GOSSIPSIM_ONE_PROCESS, set by the sweep for them: a
// sweep under mpirun is a shard per rank, each point one process).
bool launched_by_mpi();

// MPI for the lifetime of a run: initialized with threads (every thread of a
// rank may send), finalized at the end unless an error is on its way out.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The MPI library as it names itself (MPI_Get_library_version), first line.
  std::string library() const;

 private:
  int rank_ = 0, size_ = 1;
};

// Rank 0 (size > 1): learners whose nodes live on ranks 1..K-1. `local`,
// a torch factory, evaluates the average model and computes all-reduces.
std::unique_ptr<LearnerFactory> make_rank_factory(std::unique_ptr<LearnerFactory> local, MpiSession& session);

// Where the time went between the ranks so far, for summary.json: rank 0's
// batches of operations and the time its engine waited for the ranks (to
// take a batch, to send rows), each rank's idle time and the snapshots it
// sent to other ranks (cumulative, as of its last reply, which every
// method's end asks for).
nlohmann::json rank_stats(LearnerFactory& rank_factory);

// Ranks 1..K-1: holds nodes and runs what rank 0 asks of them, until it says
// the run is over.
void serve_rank(LearnerFactory& local, MpiSession& session);

}  // namespace gossipsim
