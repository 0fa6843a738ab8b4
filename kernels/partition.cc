#include "kernels/partition.h"

#include <algorithm>
#include <boost/random/gamma_distribution.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gossipsim {

Partition make_partition(const std::vector<int64_t>& labels, int classes, int nodes, const PartitionSpec& spec,
                         Rng& rng) {
  const int64_t n = static_cast<int64_t>(labels.size());
  if (nodes < 1 || n < nodes) throw std::invalid_argument("fewer samples than nodes");
  Partition parts(nodes);
  if (spec.by == PartitionSpec::By::kRegion && nodes > 1 && static_cast<int>(spec.region_of.size()) == nodes) {
    const int regions = *std::max_element(spec.region_of.begin(), spec.region_of.end()) + 1;
    PartitionSpec per_region = spec;
    per_region.by = PartitionSpec::By::kNode;
    Partition shares = make_partition(labels, classes, regions, per_region, rng);
    std::vector<std::vector<int>> members(regions);
    for (int node = 0; node < nodes; ++node) members[spec.region_of[node]].push_back(node);
    // A region whose draw holds fewer samples than it has nodes takes the
    // missing ones from the first region with samples to spare (there are at
    // least as many samples as nodes), so that no node is left empty.
    auto spare = [&](int r) {
      return static_cast<int64_t>(shares[r].size()) - static_cast<int64_t>(members[r].size());
    };
    for (int r = 0; r < regions; ++r)
      while (spare(r) < 0) {
        int giver = 0;
        while (giver < regions && spare(giver) <= 0) ++giver;
        if (giver == regions) throw std::invalid_argument("fewer samples than nodes");
        shares[r].push_back(shares[giver].back());
        shares[giver].pop_back();
      }
    for (int r = 0; r < regions; ++r) {
      auto& share = shares[r];
      const auto m = static_cast<int64_t>(members[r].size()), size = static_cast<int64_t>(share.size());
      seeded_shuffle(share, rng);
      for (int64_t i = 0; i < size; ++i) parts[members[r][i * m / size]].push_back(share[i]);
    }
    return parts;
  }
  switch (spec.kind) {
    case PartitionSpec::Kind::kFile: {
      // Checked against the data before the run (check_against_data).
      if (static_cast<int64_t>(spec.nodes.size()) != n) throw std::invalid_argument("a split of another length");
      for (int64_t i = 0; i < n && nodes == 1; ++i) parts[0].push_back(i);  // a method that trains alone: all of it
      for (int64_t i = 0; i < n && nodes > 1; ++i) {
        if (spec.nodes[i] < 0 || spec.nodes[i] >= nodes) throw std::invalid_argument("a split naming an unknown node");
        parts[spec.nodes[i]].push_back(i);
      }
      break;
    }
    case PartitionSpec::Kind::kIid: {
      std::vector<int64_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      seeded_shuffle(all, rng);
      for (int64_t i = 0; i < n; ++i) parts[i * nodes / n].push_back(all[i]);
      break;
    }
    case PartitionSpec::Kind::kDirichlet: {
      std::vector<std::vector<int64_t>> by_class(classes);
      for (int64_t i = 0; i < n; ++i) by_class[labels[i]].push_back(i);
      boost::random::gamma_distribution<double> gamma(spec.alpha, 1.0);
      for (int c = 0; c < classes; ++c) {
        std::vector<double> p(nodes);
        double total = 0;
        for (double& x : p) total += (x = gamma(rng));
        auto& idx = by_class[c];
        seeded_shuffle(idx, rng);
        double cum = 0;
        size_t start = 0;
        for (int k = 0; k < nodes; ++k) {
          cum += p[k] / total;
          size_t end = k == nodes - 1 ? idx.size() : static_cast<size_t>(std::llround(cum * idx.size()));
          end = std::clamp(end, start, idx.size());
          parts[k].insert(parts[k].end(), idx.begin() + start, idx.begin() + end);
          start = end;
        }
      }
      for (auto& part : parts)
        if (part.empty()) {
          auto& largest = *std::max_element(parts.begin(), parts.end(),
                                            [](const auto& a, const auto& b) { return a.size() < b.size(); });
          part.push_back(largest.back());
          largest.pop_back();
        }
      break;
    }
    case PartitionSpec::Kind::kShards: {
      const int k = spec.classes_per_node;
      std::vector<int64_t> sorted(n);
      std::iota(sorted.begin(), sorted.end(), 0);
      std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) { return labels[a] < labels[b]; });
      const int64_t shards = static_cast<int64_t>(nodes) * k;
      if (n < shards) throw std::invalid_argument("fewer samples than shards");
      std::vector<int64_t> order(shards);
      std::iota(order.begin(), order.end(), 0);
      seeded_shuffle(order, rng);
      for (int64_t s = 0; s < shards; ++s) {
        int64_t shard = order[s], begin = shard * n / shards, end = (shard + 1) * n / shards;
        auto& part = parts[s / k];
        part.insert(part.end(), sorted.begin() + begin, sorted.begin() + end);
      }
      break;
    }
  }
  return parts;
}

std::vector<std::vector<int64_t>> label_histogram(const Partition& p, const std::vector<int64_t>& labels, int classes) {
  std::vector<std::vector<int64_t>> h(p.size(), std::vector<int64_t>(classes, 0));
  for (size_t node = 0; node < p.size(); ++node)
    for (int64_t i : p[node]) ++h[node][labels[i]];
  return h;
}

}  // namespace gossipsim
