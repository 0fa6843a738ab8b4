// Real TCP transfers through the emulated WAN (emulate/wan_emulator.h): the
// transfers of a `net replay` file, each a stream of its bytes from a socket
// in its sender's namespace to one in its receiver's, timed from its start
// until the receiver has read its last byte. The Linux TCP stack does the
// rest: handshake, slow start, congestion control, losses, ACKs.
//
// How connections are kept changes a model's transfer time several-fold on
// a WAN, so it is a choice, always reported:
//   fresh       a new connection per transfer, opened at its start time
//               (handshake and slow start in every transfer);
//   persistent  one connection per ordered pair, opened before the first
//               transfer; a pair's transfers follow each other on it, and
//               Linux restarts slow start after an idle period
//               (tcp_slow_start_after_idle = 1, its default) for
//               congestion controls that leave the window to the kernel
//               (CUBIC, Reno); BBR keeps its rate model across idle (the
//               kernel skips the restart for a module with its own
//               cong_control), so under BBR persistent behaves as warm;
//   warm        persistent, with tcp_slow_start_after_idle = 0 and every
//               connection warmed by a transfer of `warm_bytes` before the
//               first (in rounds where no node sends or receives two at
//               once): a transfer starts at the window the pair has reached
//               alone on its path.
// One thread drives every socket (epoll); a socket keeps the namespace it
// was made in.
#pragma once

#include <string>
#include <vector>

#include "emulate/wan_emulator.h"
#include "sim/base/enum_names.h"
#include "sim/replay.h"

namespace gossipsim::emulate {

enum class Connections { kFresh, kPersistent, kWarm };
const EnumNames<Connections>& connections_names();  // "fresh", "persistent", "warm"

struct RealTransferOptions {
  Connections connections = Connections::kFresh;
  // Congestion control for every socket (TCP_CONGESTION): "" for the
  // kernel's default, or one of net.ipv4.tcp_available_congestion_control.
  std::string congestion;
  int64_t warm_bytes = 4 << 20;  // warm: bytes sent once on every pair before the first transfer
  double time_limit_s = 900;     // transfers not done by then are reported unfinished
};

// What the kernel's TCP does here, read in the namespaces: to be reported
// beside every measurement.
struct TcpSettings {
  std::string congestion;            // used by the sockets
  std::string available;             // net.ipv4.tcp_available_congestion_control
  std::string slow_start_after_idle; // net.ipv4.tcp_slow_start_after_idle
  std::string no_metrics_save;       // net.ipv4.tcp_no_metrics_save (set to 1: no ssthresh carried over)
  int initial_window_segments = 10;  // the kernel's (TCP_INIT_CWND; the routes set no initcwnd)
  std::string rmem, wmem;            // net.ipv4.tcp_rmem, tcp_wmem
  std::string kernel;                // uname -r
};

struct RealTransfer {
  double start_s = 0;   // when it was due (its replay start time)
  double finish_s = -1; // when its receiver read its last byte; < 0: did not finish
};

// Runs the replay's transfers (control messages are left out: they are not
// TCP transfers) and returns one result per transfer, in order. Times are
// seconds from the replay's time 0.
std::vector<RealTransfer> run_real_transfers(EmulatedWan& wan, const std::vector<ReplayTransfer>& transfers,
                                             const RealTransferOptions& options, TcpSettings* settings = nullptr);

}  // namespace gossipsim::emulate
