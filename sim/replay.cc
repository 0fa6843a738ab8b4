#include "sim/replay.h"

#include <fmt/format.h>

#include "sim/network.h"
#include "sim/simulator.h"

namespace gossipsim {

std::string replay_transfers(const ReplayInput& in) {
  Simulator sim;
  Network net(sim, in.topology, in.model);
  std::vector<FlowRecord> rows(in.transfers.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReplayTransfer& x = in.transfers[i];
    rows[i].src = x.src;
    rows[i].dst = x.dst;
    rows[i].size = bytes(x.bytes);
    rows[i].start = seconds(x.start_s);
    sim.schedule_at(seconds(x.start_s), [&, i, x] {
      if (x.control)
        net.send_control(x.src, x.dst, [&, i] { rows[i].finish = sim.now(); });
      else
        net.start_flow(x.src, x.dst, bytes(x.bytes), [&, i](const FlowRecord& f) { rows[i] = f; });
    });
  }
  sim.run();
  std::string csv = kReplayCsvHeader;
  for (size_t i = 0; i < rows.size(); ++i) {
    const FlowRecord& f = rows[i];
    csv += fmt::format("{},{},{},{},{},{:.9f},{:.9f},{:.9f}\n", i, f.src, f.dst, f.size.count,
                       in.transfers[i].control ? "control" : "flow", f.start.seconds(), f.finish.seconds(),
                       (f.finish - f.start).seconds());
  }
  return csv;
}

}  // namespace gossipsim
