#include "analysis/provenance.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "build_info.h"

namespace gossipsim {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string v = line.substr(line.find(':') + 1);
      const size_t start = v.find_first_not_of(" \t");
      return start == std::string::npos ? "" : v.substr(start);
    }
  return "unknown";
}

}  // namespace

nlohmann::json build_provenance() {
  utsname u{};
  ::uname(&u);
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  return {
      {"gossipsim", {{"version", GOSSIPSIM_VERSION}, {"commit", GOSSIPSIM_COMMIT}, {"dirty", GOSSIPSIM_COMMIT_DIRTY}}},
      {"host", {{"cpu", cpu_model()}, {"cores", cores > 0 ? cores : 1}, {"kernel", u.release}}}};
}

nlohmann::json comparable_provenance(const nlohmann::json& provenance) {
  nlohmann::json p = provenance;
  if (p.contains("gossipsim") && p["gossipsim"].is_object()) p["gossipsim"].erase("dirty");
  if (p.contains("host") && p["host"].is_object()) p["host"].erase("kernel");
  if (p.contains("blas") && p["blas"].is_object()) p["blas"].erase("library");
  return p;
}

}  // namespace gossipsim
