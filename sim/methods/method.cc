#include "sim/methods/method.h"

#include <stdexcept>

namespace gossipsim {

std::unique_ptr<Method> make_method(Cluster& cluster) {
  const std::string& name = cluster.ctx().options.name;
  if (name == "gossip") return make_gossip(cluster);
  if (name == "gossip-overlap") return make_gossip_overlap(cluster);
  if (name == "gossip-scheduled") return make_gossip_scheduled(cluster);
  if (name == "gosgd") return make_gosgd(cluster);
  if (name == "dpsgd") return make_dpsgd(cluster);
  if (name == "adpsgd") return make_adpsgd(cluster);
  if (name == "sgp") return make_sgp(cluster);
  if (name == "osgp") return make_osgp(cluster);
  if (name == "allreduce") return make_allreduce(cluster);
  if (name == "single") return make_single(cluster);
  throw std::invalid_argument("unknown method " + name);
}

}  // namespace gossipsim
