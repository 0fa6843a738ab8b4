#include "topologies/generators.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

namespace gossipsim {

namespace {
std::pair<int, int> ordered(int a, int b) { return a < b ? std::make_pair(a, b) : std::make_pair(b, a); }

struct DisjointSets {
  std::vector<int> parent;
  explicit DisjointSets(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void join(int a, int b) { parent[find(a)] = find(b); }
};
}  // namespace

bool is_connected(int n, const EdgeList& edges) {
  if (n <= 1) return true;
  DisjointSets ds(n);
  for (auto [a, b] : edges) ds.join(a, b);
  int root = ds.find(0);
  for (int v = 1; v < n; ++v)
    if (ds.find(v) != root) return false;
  return true;
}

EdgeList complete_edges(int n) {
  EdgeList e;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) e.emplace_back(a, b);
  return e;
}

EdgeList ring_edges(int n) {
  EdgeList e;
  if (n == 2) e.emplace_back(0, 1);
  if (n > 2)
    for (int a = 0; a < n; ++a) e.push_back(ordered(a, (a + 1) % n));
  return e;
}

EdgeList torus_edges(int rows, int cols) {
  std::set<std::pair<int, int>> s;
  auto id = [cols](int r, int c) { return r * cols + c; };
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      int v = id(r, c);
      int right = id(r, (c + 1) % cols), down = id((r + 1) % rows, c);
      if (right != v) s.insert(ordered(v, right));
      if (down != v) s.insert(ordered(v, down));
    }
  return EdgeList(s.begin(), s.end());
}

EdgeList star_edges(int n) {
  EdgeList e;
  for (int v = 1; v < n; ++v) e.emplace_back(0, v);
  return e;
}

EdgeList random_regular_edges(int n, int d, Rng& rng) {
  if (d >= n || (static_cast<long>(n) * d) % 2 != 0 || d < 1)
    throw std::invalid_argument("random regular graph needs 1 <= d < n and n*d even");
  // Steger-Wormald: pair random stubs, redrawing a pair that would make a
  // loop or a double edge; start over only when the draw gets stuck.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v)
      for (int k = 0; k < d; ++k) stubs.push_back(v);
    std::set<std::pair<int, int>> edges;
    bool stuck = false;
    while (!stubs.empty() && !stuck) {
      stuck = true;
      for (int tries = 0; tries < 200; ++tries) {
        size_t i = uniform_index(rng, stubs.size()), j = uniform_index(rng, stubs.size());
        int a = stubs[i], b = stubs[j];
        if (i == j || a == b || edges.count(ordered(a, b))) continue;
        edges.insert(ordered(a, b));
        if (i < j) std::swap(i, j);  // remove the later index first
        std::swap(stubs[i], stubs.back());
        stubs.pop_back();
        std::swap(stubs[j], stubs.back());
        stubs.pop_back();
        stuck = false;
        break;
      }
    }
    EdgeList e(edges.begin(), edges.end());
    if (!stuck && is_connected(n, e)) return e;
  }
  throw std::runtime_error("could not draw a connected random regular graph");
}

EdgeList erdos_renyi_edges(int n, double p, Rng& rng) {
  EdgeList e;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    e.clear();
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (uniform01(rng) < p) e.emplace_back(a, b);
    if (is_connected(n, e)) return e;
  }
  DisjointSets ds(n);
  for (auto [a, b] : e) ds.join(a, b);
  for (int v = 1; v < n; ++v)
    if (ds.find(v) != ds.find(0)) {
      e.emplace_back(0, v);
      ds.join(0, v);
    }
  return e;
}

EdgeList watts_strogatz_edges(int n, int k, double beta, Rng& rng) {
  if (k % 2 != 0 || k >= n) throw std::invalid_argument("watts-strogatz needs an even k < n");
  std::set<std::pair<int, int>> s;
  for (int v = 0; v < n; ++v)
    for (int j = 1; j <= k / 2; ++j) s.insert(ordered(v, (v + j) % n));
  EdgeList lattice(s.begin(), s.end());
  for (auto& edge : lattice) {
    if (uniform01(rng) >= beta) continue;
    int a = edge.first;
    for (int tries = 0; tries < 32; ++tries) {
      int b = static_cast<int>(uniform_index(rng, n));
      auto candidate = ordered(a, b);
      if (b == a || s.count(candidate)) continue;
      s.erase(edge);
      s.insert(candidate);
      break;
    }
  }
  return EdgeList(s.begin(), s.end());
}

EdgeList barabasi_albert_edges(int n, int m, Rng& rng) {
  if (m < 1 || m >= n) throw std::invalid_argument("barabasi-albert needs 1 <= m < n");
  EdgeList e = complete_edges(m + 1);
  std::vector<int> targets;  // each vertex once per incident edge
  for (auto [a, b] : e) {
    targets.push_back(a);
    targets.push_back(b);
  }
  for (int v = m + 1; v < n; ++v) {
    std::set<int> chosen;
    while (static_cast<int>(chosen.size()) < m) chosen.insert(targets[uniform_index(rng, targets.size())]);
    for (int t : chosen) {
      e.push_back(ordered(t, v));
      targets.push_back(t);
      targets.push_back(v);
    }
  }
  return e;
}

}  // namespace gossipsim
