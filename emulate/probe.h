// Probes of the emulated WAN's own fidelity: ICMP echo round trips (the
// receiver's kernel answers, so no application wakes up on that side, as
// with ping(8)).
#pragma once

#include <vector>

#include "emulate/wan_emulator.h"

namespace gossipsim::emulate {

// `count` ICMP echo requests of `payload` bytes from node `from` to node
// `to`, `interval_s` apart; the round trips in milliseconds (lost ones left
// out). Each round trip ends at the kernel's time of the reply's arrival
// (SO_TIMESTAMPNS), as ping(8) measures it.
std::vector<double> ping_ms(EmulatedWan& wan, NodeId from, NodeId to, int count, double interval_s, int payload = 56);

}  // namespace gossipsim::emulate
