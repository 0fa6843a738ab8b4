#include "ranks/mpi_run.h"

#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <stdexcept>

#include "ranks/wire.h"

namespace gossipsim {

using wire::check;

bool launched_by_mpi() {
  if (std::getenv("GOSSIPSIM_ONE_PROCESS")) return false;  // a sweep's point
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

MpiSession::MpiSession() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_MULTIPLE)
    throw std::runtime_error("this MPI library does not give MPI_THREAD_MULTIPLE, which a run over ranks needs");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  // On the way out of an error the other ranks may be waiting for this one:
  // leaving without MPI_Finalize makes the launcher end them all.
  if (std::uncaught_exceptions() == 0) MPI_Finalize();
}

std::string MpiSession::library() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, length);
  return s.substr(0, s.find_first_of("\n,"));
}

}  // namespace gossipsim
