#include "ranks/wire.h"

namespace gossipsim::wire {

// Sends `bytes`; synchronous: returns once `to` has begun to receive them.
void send(const std::string& bytes, int to, int tag, bool synchronous) {
  MPI_Request request;
  check((synchronous ? MPI_Issend : MPI_Isend)(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag,
                                               MPI_COMM_WORLD, &request),
        "a send");
  Backoff backoff;
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "a send");
    if (done) return;
    backoff.wait();
  }
}

// A matched probe: another thread of this rank cannot take the message
// between the probe and the receive.
Message receive(int from, int tag) {
  MPI_Status status;
  MPI_Message handle;
  Backoff backoff;
  for (int found = 0;;) {
    check(MPI_Improbe(from, tag, MPI_COMM_WORLD, &found, &handle, &status), "a probe");
    if (found) break;
    backoff.wait();
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m{status.MPI_SOURCE, status.MPI_TAG, std::string(count, '\0')};
  check(MPI_Mrecv(m.bytes.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "a receive");
  return m;
}

}  // namespace gossipsim::wire
