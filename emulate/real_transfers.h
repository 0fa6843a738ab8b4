// Real TCP transfers through the emulated WAN (emulate/wan_emulator.h): the
// transfers of a `net replay` file, each a stream of its bytes from a socket
// in its sender's namespace to one in its receiver's, timed from its start
// until the receiver has read its last byte. The Linux TCP stack does the
// rest: handshake, slow start, congestion control, losses, ACKs.
//
// How connections are kept (fresh, persistent, warm) is a choice, always
// reported: emulate/sockets.h says what each does.
// One thread drives every socket (epoll); a socket keeps the namespace it
// was made in.
#pragma once

#include <string>
#include <vector>

#include "emulate/sockets.h"
#include "emulate/wan_emulator.h"
#include "sim/replay.h"

namespace gossipsim::emulate {

struct RealTransferOptions {
  Connections connections = Connections::kFresh;
  // Congestion control for every socket (TCP_CONGESTION): "" for the
  // kernel's default, or one of net.ipv4.tcp_available_congestion_control.
  std::string congestion;
  int64_t warm_bytes = 4 << 20;  // warm: bytes sent once on every pair before the first transfer
  double time_limit_s = 900;     // transfers not done by then are reported unfinished
};

struct RealTransfer {
  double start_s = 0;    // when it was due (its replay start time)
  double finish_s = -1;  // when its receiver read its last byte; < 0: did not finish
};

// Runs the replay's transfers (control messages are left out: they are not
// TCP transfers) and returns one result per transfer, in order. Times are
// seconds from the replay's time 0.
std::vector<RealTransfer> run_real_transfers(EmulatedWan& wan, const std::vector<ReplayTransfer>& transfers,
                                             const RealTransferOptions& options, TcpSettings* settings = nullptr);

}  // namespace gossipsim::emulate
