// Structure generators: each returns the edges of an undirected graph over
// n vertices 0..n-1 (no values yet). Random generators take their stream.
// All are deterministic given the stream. Complexity O(edges) unless noted.
#pragma once

#include <utility>
#include <vector>

#include "base/random.h"

namespace gossipsim {

using EdgeList = std::vector<std::pair<int, int>>;

EdgeList complete_edges(int n);
EdgeList ring_edges(int n);
EdgeList torus_edges(int rows, int cols);  // 2-D torus, 4 neighbours
EdgeList star_edges(int n);                // vertex 0 is the hub
// Random d-regular graph (n*d even, d < n): random stub pairing that redraws
// pairs making loops or double edges (Steger and Wormald 1999), restarted
// when stuck or disconnected.
EdgeList random_regular_edges(int n, int d, Rng& rng);
// G(n, p), redrawn until connected (p must make that likely; after 1000 draws
// the missing components are joined by one edge each, in vertex order).
EdgeList erdos_renyi_edges(int n, double p, Rng& rng);
// Ring lattice with k neighbours each (k even), each edge rewired with prob. beta.
EdgeList watts_strogatz_edges(int n, int k, double beta, Rng& rng);
// Preferential attachment, m edges per new vertex, seeded with a clique of m+1.
EdgeList barabasi_albert_edges(int n, int m, Rng& rng);

bool is_connected(int n, const EdgeList& edges);

}  // namespace gossipsim
