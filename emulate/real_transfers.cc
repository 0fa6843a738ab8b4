#include "emulate/real_transfers.h"

#include <algorithm>

namespace gossipsim::emulate {

std::vector<RealTransfer> run_real_transfers(EmulatedWan& wan, const std::vector<ReplayTransfer>& transfers,
                                             const RealTransferOptions& options, TcpSettings* settings) {
  const TcpSettings tcp = configure_tcp(wan, options.connections, options.congestion);
  if (settings) *settings = tcp;
  std::vector<int64_t> finish(transfers.size(), -1);
  int64_t pending = 0;
  Sockets sockets(wan, {options.connections, options.congestion, options.warm_bytes}, [&](int64_t id, int64_t at) {
    if (finish[id] < 0) finish[id] = at, --pending;
  });
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (const ReplayTransfer& t : transfers)
    if (!t.control) pairs.insert({t.src, t.dst});
  sockets.open_pairs(pairs);

  const int64_t t0 = now_ns() + 50'000'000;
  auto due = [&](size_t i) { return t0 + static_cast<int64_t>(transfers[i].start_s * 1e9); };
  std::vector<size_t> order;
  for (size_t i = 0; i < transfers.size(); ++i)
    if (!transfers[i].control) order.push_back(i), ++pending;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return transfers[a].start_s < transfers[b].start_s; });
  size_t next = 0;
  const int64_t deadline = t0 + static_cast<int64_t>(options.time_limit_s * 1e9);
  while (pending > 0 && now_ns() < deadline) {
    for (; next < order.size() && due(order[next]) <= now_ns(); ++next) {
      const ReplayTransfer& t = transfers[order[next]];
      sockets.send(t.src, t.dst, static_cast<int64_t>(order[next]), t.bytes);
    }
    const int64_t wake = next < order.size() ? std::min(due(order[next]), deadline) : deadline;
    sockets.poll(wake - now_ns());
  }
  std::vector<RealTransfer> out(transfers.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].start_s = transfers[i].start_s;
    out[i].finish_s = finish[i] < 0 ? -1 : (finish[i] - t0) / 1e9;
  }
  return out;
}

}  // namespace gossipsim::emulate
