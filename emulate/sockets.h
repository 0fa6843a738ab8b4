// Messages over real TCP between the emulated WAN's namespaces
// (emulate/wan_emulator.h): what `net emulate` (real_transfers.h) and
// `run --real` (real_network.h) send. A message is its bytes (zeros) from a
// socket in its sender's namespace to one in its receiver's; it has arrived
// when the receiver has read its last byte. The Linux TCP stack does the
// rest: handshake, slow start, congestion control, losses, ACKs.
//
// How connections are kept changes a model's transfer time several-fold on
// a WAN, so it is a choice, always reported:
//   fresh       a new connection per message, opened when it is sent
//               (handshake and slow start in every message);
//   persistent  one connection per ordered pair, opened before time 0
//               (open_pairs) or at the pair's first message; a pair's
//               messages follow each other on it, and Linux restarts slow
//               start after an idle period (tcp_slow_start_after_idle = 1,
//               its default) for congestion controls that leave the window
//               to the kernel (CUBIC, Reno); BBR keeps its rate model across
//               idle (the kernel skips the restart for a module with its own
//               cong_control), so under BBR persistent behaves as warm;
//   warm        persistent, with tcp_slow_start_after_idle = 0 and every
//               connection opened by open_pairs warmed by a message of
//               `warm_bytes` (in rounds where no two warm-ups share a
//               resource: warm_rounds): a message starts at the window, and
//               under BBR the rate, the pair has reached alone on its path.
// Control messages (no payload) go on a connection of their own per ordered
// pair, kept open once made, whatever the mode: a system's RPC channel.
//
// One thread drives every socket (epoll); a socket keeps the namespace it
// was made in. Not thread safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulate/wan_emulator.h"
#include "sim/flow_model.h"

namespace gossipsim::emulate {

// The flow model's own names and values (sim/flow_model.h: connections_names()).
using Connections = FlowModel::Connections;

// What the kernel's TCP does here, read in the namespaces: to be reported
// beside every measurement.
struct TcpSettings {
  std::string congestion;             // used by the sockets
  std::string available;              // net.ipv4.tcp_available_congestion_control
  std::string slow_start_after_idle;  // net.ipv4.tcp_slow_start_after_idle
  std::string no_metrics_save;        // net.ipv4.tcp_no_metrics_save (set to 1: no ssthresh carried over)
  int initial_window_segments = 10;   // the kernel's (TCP_INIT_CWND; the routes set no initcwnd)
  std::string rmem, wmem;             // net.ipv4.tcp_rmem, tcp_wmem
  std::string kernel;                 // uname -r
};

// Sets every namespace's TCP for `connections` (slow start after idle off
// for warm; no metrics carried from one connection to the next) and reads
// back what the sockets will use. `congestion`: "" for the kernel's default.
TcpSettings configure_tcp(EmulatedWan& wan, Connections connections, const std::string& congestion);

// The rounds warm connections are warmed in: every pair in one round, no
// two pairs of a round sharing a resource of their data's route or of their
// ACKs' (`resources(src, dst)`: a route's resources, uplink to downlink),
// each pair in the first round it fits, in the set's order. (Rounds that
// kept only senders and receivers apart let warm-ups share the links
// between regions: BBR then carried a share of a link into every later
// message, and a 321 kB message that takes 0.09 s on a connection warmed
// alone took 0.22-0.29 s on the quickstart's network.)
std::vector<std::vector<std::pair<NodeId, NodeId>>> warm_rounds(
    const std::set<std::pair<NodeId, NodeId>>& pairs, const std::function<std::vector<int>(NodeId, NodeId)>& resources);

class Sockets {
 public:
  struct Options {
    Connections connections = Connections::kFresh;
    std::string congestion;        // TCP_CONGESTION of every socket; "": the kernel's default
    int64_t warm_bytes = 4 << 20;  // warm: bytes sent once on every pair open_pairs opens
  };
  // `arrived(id, at_ns)`: message `id` (a payload, or a control message) was
  // read whole by its receiver at monotonic time at_ns.
  using Arrived = std::function<void(int64_t id, int64_t at_ns)>;

  // Listens on every node of `wan`.
  Sockets(EmulatedWan& wan, Options options, Arrived payload_arrived, Arrived control_arrived = {});
  ~Sockets();
  Sockets(const Sockets&) = delete;
  Sockets& operator=(const Sockets&) = delete;

  // persistent and warm: opens (and, warm, warms) a connection for each
  // ordered pair, before time 0; at most 600 s, else std::runtime_error.
  void open_pairs(const std::set<std::pair<NodeId, NodeId>>& pairs);
  // `bytes` of payload from src to dst, as message `id` (>= 0, unique).
  void send(NodeId src, NodeId dst, int64_t id, int64_t bytes);
  // A control message (a header, no payload) from src to dst.
  void send_control(NodeId src, NodeId dst, int64_t id);
  // Gives up message `id`: fresh, its connection is closed; persistent or
  // warm, its bytes still go. It may still be reported, if its bytes had all
  // arrived; the caller ignores an id it no longer waits for.
  void cancel(int64_t id);
  // Waits at most wait_ns for the sockets, and serves what is ready.
  void poll(int64_t wait_ns);

 private:
  struct Conn;
  Conn* connect_from(NodeId src, NodeId dst);
  Conn* add(std::unique_ptr<Conn> c);
  void watch(Conn* c, uint32_t events);
  void close(Conn* c);
  void enqueue(Conn* c, int64_t id, int64_t length);
  void send_some(Conn* c);
  void receive_some(Conn* c);
  void received(Conn* c);
  void accept_all(Conn* listener);

  EmulatedWan& wan_;
  Options opt_;
  Arrived payload_arrived_, control_arrived_;
  Fd epoll_;
  std::map<Conn*, std::unique_ptr<Conn>> conns_;
  std::vector<Conn*> closed_;  // freed after the poll that closed them
  std::vector<Conn*> listeners_;
  std::map<std::pair<NodeId, NodeId>, Conn*> pairs_, control_pairs_;
  std::map<int64_t, Conn*> fresh_;  // fresh: the sender's connection of each message in flight (Conn::fresh_id)
  std::vector<char> zeros_, scratch_;
  int64_t warmed_ = 0;
};

}  // namespace gossipsim::emulate
