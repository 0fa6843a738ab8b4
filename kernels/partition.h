// Splitting a training set across nodes. No LibTorch: indices and labels only.
//
//   iid        a seeded shuffle cut into equal parts (sizes differ by at most 1)
//   dirichlet  label skew: for each class c in order, proportions
//              p ~ Dirichlet(alpha) over the nodes (one Gamma(alpha, 1) draw
//              per node, normalised), then the class's indices, shuffled, are
//              cut at the rounded cumulative proportions. Small alpha: few
//              classes per node; large alpha: close to IID. A node left empty
//              takes one sample from the largest node.
//   shards     k classes per node (McMahan et al. 2017): indices sorted by
//              label (stable), cut into nodes*k equal shards, shards dealt to
//              nodes by a seeded shuffle, k each.
//   file       the node of each sample as a split file names it
//              (input/data_files.h), each node's samples in sample order;
//              a method that trains alone (one node) holds every sample.
//
// by region: the kind (not file) draws one share per region, as if each
// region were one node, with region_of naming each node's region; then each
// region's share, shuffled, is cut into equal parts for its nodes in node
// order, as iid cuts. A call for another number of nodes than region_of
// names (a method that trains alone) splits by node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/random.h"
#include "sim/workload.h"

namespace gossipsim {

using Partition = std::vector<std::vector<int64_t>>;  // node -> sample indices

Partition make_partition(const std::vector<int64_t>& labels, int classes, int nodes, const PartitionSpec& spec,
                         Rng& rng);

// histogram[node][class]: how many samples of each class a node holds.
std::vector<std::vector<int64_t>> label_histogram(const Partition& p, const std::vector<int64_t>& labels, int classes);

// Fisher-Yates with uniform_index, so shuffles do not depend on the standard library.
template <typename T>
void seeded_shuffle(std::vector<T>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_index(rng, i)]);
}

}  // namespace gossipsim
