// `gossipsim net emulate REPLAY.json`: the transfers of a `net replay` file
// as real TCP transfers through the emulated WAN (emulate/), with the same
// CSV out, and beside it (OUT.json, or on stderr without --out) the TCP
// settings of the kernel, the connection mode and the emulator's own timing:
// a run whose lag was too large is marked invalid and exits 3.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "analysis/output_dir.h"
#include "base/console.h"
#include "base/error.h"
#include "cli/commands.h"
#include "emulate/real_transfers.h"
#include "input/replay_reader.h"
#include "sim/network.h"
#include "sim/simulator.h"

namespace gossipsim {

namespace {

// Refuses a route the emulator cannot keep time on: its bottleneck above
// `max_mbps`.
void check_rates(const ReplayInput& in, double max_mbps, const std::string& file) {
  Simulator sim;
  Network net(sim, in.topology);
  for (size_t i = 0; i < in.transfers.size(); ++i) {
    const ReplayTransfer& t = in.transfers[i];
    const double mbps = net.route(t.src, t.dst).bottleneck.megabits_per_second();
    if (mbps > max_mbps)
      throw InputError(file, fmt::format("/transfers/{}", i),
                       fmt::format("expected a route the emulator keeps time on: a bottleneck of at most {:g} Mbit/s "
                                   "(--max-rate-mbps); this one's is {:g} Mbit/s",
                                   max_mbps, mbps));
  }
}

}  // namespace

int emulate_command(const EmulateCommand& cmd) {
  using namespace emulate;
  if (!cmd.out.empty()) {
    check_output_file(cmd.out, "--out", kReplayCsvHeader);
    check_output_file(cmd.out + ".json", "--out", "{\n  \"connections\"");  // the side file below
  }
  if (!(cmd.max_rate_mbps > 0 && cmd.max_rate_mbps <= 1e5))
    throw InputError("--max-rate-mbps", "", "expected a number of Mbit/s in (0, 1e5]");
  if (!(cmd.time_limit_s > 0 && cmd.time_limit_s <= 86400))
    throw InputError("--time-limit", "", "expected a number of seconds in (0, 86400]");
  if (cmd.queue_packets < 1 || cmd.queue_packets > 1'000'000)
    throw InputError("--queue-packets", "", "expected an integer in [1, 1000000]");
  const ReplayInput in = read_replay(JsonReader::parse_file(cmd.file), cmd.file);
  check_rates(in, cmd.max_rate_mbps, cmd.file);
  if (auto why = unavailable()) throw InputError("net emulate", "", "expected a machine that can run it: " + *why);
  // Two sockets a transfer in flight: thousands at once pass the usual
  // soft limit of 1,024 open files.
  const uint64_t limit = raise_open_file_limit(), needed = 2 * in.transfers.size() + 256;
  note_open_files_needed(needed);
  if (needed > limit)
    say(stderr,
        "gossipsim: net emulate: {} transfers take up to {} open files if they all overlap; this process may "
        "hold {} (the hard limit of ulimit -n): if they do, the run fails and says so\n",
        in.transfers.size(), needed, limit);
  RealTransferOptions opt;
  opt.connections = cmd.connections == "persistent" ? Connections::kPersistent
                    : cmd.connections == "warm"     ? Connections::kWarm
                                                    : Connections::kFresh;
  opt.congestion = cmd.congestion == "default" ? "" : cmd.congestion;
  opt.time_limit_s = cmd.time_limit_s;
  EmulatorOptions eo;
  eo.queue_packets = cmd.queue_packets;
  EmulatedWan wan(in.topology, eo);
  TcpSettings tcp;
  const std::vector<RealTransfer> rows = run_real_transfers(wan, in.transfers, opt, &tcp);
  const LagStats lag = wan.lag();

  std::string csv = kReplayCsvHeader;
  int unfinished = 0, flows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReplayTransfer& t = in.transfers[i];
    if (t.control) continue;  // not a TCP transfer
    ++flows;
    const bool done = rows[i].finish_s >= 0;
    unfinished += done ? 0 : 1;
    csv += fmt::format("{},{},{},{},flow,{:.9f},{},{}\n", i, t.src, t.dst, t.bytes, rows[i].start_s,
                       done ? fmt::format("{:.9f}", rows[i].finish_s) : "",
                       done ? fmt::format("{:.9f}", rows[i].finish_s - rows[i].start_s) : "");
  }
  const nlohmann::json meta = {
      {"replay", cmd.file},
      {"connections", cmd.connections},
      {"tcp",
       {{"congestion_control", tcp.congestion},
        {"available", tcp.available},
        {"slow_start_after_idle", tcp.slow_start_after_idle},
        {"no_metrics_save", tcp.no_metrics_save},
        {"initial_window_segments", tcp.initial_window_segments},
        {"rmem", tcp.rmem},
        {"wmem", tcp.wmem},
        {"kernel", tcp.kernel}}},
      {"emulator",
       {{"queue_packets", eo.queue_packets},
        {"mtu", eo.mtu},
        {"events", lag.events},
        {"late_events", lag.late},
        {"late_us", eo.late_us},
        {"lag_p50_us", lag.p50_us},
        {"lag_p99_us", lag.p99_us},
        {"lag_max_us", lag.max_us},
        {"packets", lag.packets},
        {"bytes", lag.bytes},
        {"drops", lag.drops},
        {"write_failures", lag.write_failures}}},
      {"unfinished", unfinished},
      {"valid", lag.valid},
  };
  if (cmd.out.empty()) {
    std::cout << csv;
    say(stderr, "gossipsim: net emulate: {}\n", meta.dump());
  } else {
    write_file_atomically(cmd.out, csv);
    write_file_atomically(cmd.out + ".json", meta.dump(2) + "\n");
  }
  if (unfinished > 0)
    say(stderr,
        "gossipsim: net emulate: {} of {} transfers did not finish within --time-limit {:g} s "
        "(their finish_s and duration_s are empty)\n",
        unfinished, flows, cmd.time_limit_s);
  if (!lag.valid) {
    say(stderr,
        "gossipsim: net emulate: the emulator fell behind ({} of {} events more than {:g} us late, p99 {:g} us): "
        "the run is marked invalid\n",
        lag.late, lag.events, eo.late_us, lag.p99_us);
    return 3;
  }
  return 0;
}

}  // namespace gossipsim
