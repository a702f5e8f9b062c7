// bfs: level-synchronous breadth-first search (Rodinia's and Graph500's
// top-down kernel) over a directed scale-free graph in CSR form. One launch
// per level: a warp takes a frontier vertex, its lanes walk the neighbour
// list, claim unvisited neighbours with atomicCAS on the level array and
// append them to the next frontier. Each reached vertex's offsets and
// neighbour list are read once, in short runs at random places, and the
// level array is read and claimed at random: sparse, with reuse only at
// the hubs.
#include "suite.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace {

const uint32_t unseen = 0xffffffffu;
const uint8_t far = 255; // unseen, in the check's byte a vertex
const uint32_t hub_cap = 1 << 16; // the largest out-degree: one warp walks it in 2048 steps
const uint64_t degree_seed = 0xb5e1, edge_seed = 0xb5e2;

struct state {
	uint64_t *row;             // V+1 offsets into col
	uint32_t *col;             // E out-neighbours
	uint32_t *level;           // BFS level of each vertex, unseen if unreached
	uint32_t *parent;          // the vertex each was reached from
	uint32_t *front, *next;    // frontiers, ping-ponged
	uint32_t *count;           // the next frontier's length
	unsigned long long *edges; // neighbour-list entries expanded
	uint32_t V, cap;
	uint64_t E;
	uint64_t reached = 0;      // vertices the run reached
	uint32_t levels = 0;       // expand launches
};


// Out-degrees follow a power law, P(d >= x) = (5.5/x)^1.5 (mean about 16),
// capped; vertex 0, the source, is the biggest hub.
uint32_t degree(uint64_t v, uint32_t cap)
{
	if (v == 0)
		return cap;
	double u = (double)((suite_mix(v ^ degree_seed) >> 11) + 1) * 0x1p-53; // (0, 1]
	double d = 5.5 / std::cbrt(u * u);
	return d >= cap ? cap : (uint32_t)d;
}

// Half the edges land uniformly, half with density ~ x^(-2/3) towards low
// ids (u^3 of a uniform u), so the first vertices are in-hubs as well. One
// hash makes two edges; the choice is made without a branch, which would
// be a coin toss for the predictor.
uint32_t target(uint64_t e, uint32_t V)
{
	uint64_t h = suite_mix((e >> 1) ^ edge_seed) >> (e & 1 ? 32 : 0);
	uint64_t x = h & 0xfffffffe, cube = (((x * x) >> 32) * x) >> 32;
	return (uint32_t)(((h & 1 ? cube : x) * V) >> 32);
}

__global__ void clear(uint32_t *level, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		level[i] = unseen;
}

__global__ void seed(uint32_t *level, uint32_t *parent, uint32_t *front, uint32_t src)
{
	level[src] = 0;
	parent[src] = src;
	front[0] = src;
}

// One warp per frontier vertex, lanes striding its neighbour list. The
// loop bounds are the warp's, so the ballot sees every lane; the winners of
// a step take their places in the next frontier with one atomicAdd.
__global__ void expand(const uint64_t *row, const uint32_t *col, uint32_t *level, uint32_t *parent,
                       const uint32_t *front, uint32_t n, uint32_t *next, uint32_t *count,
                       unsigned long long *edges, uint32_t depth)
{
	const unsigned lane = threadIdx.x & 31;
	const size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
	unsigned long long walked = 0;
	for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
		uint32_t u = front[i];
		uint64_t lo = row[u], hi = row[u + 1];
		walked += hi - lo;
		for (uint64_t b = lo; b < hi; b += 32) {
			uint64_t e = b + lane;
			uint32_t v = 0;
			bool won = false;
			if (e < hi) {
				v = col[e];
				// a plain read first: most neighbours are already claimed
				if (level[v] == unseen && atomicCAS(&level[v], unseen, depth + 1) == unseen) {
					parent[v] = u;
					won = true;
				}
			}
			unsigned mask = __ballot_sync(~0u, won);
			if (mask) {
				uint32_t base = 0;
				if (lane == 0)
					base = atomicAdd(count, (uint32_t)__popc(mask));
				base = __shfl_sync(~0u, base, 0);
				if (won)
					next[base + __popc(mask & ((1u << lane) - 1))] = v;
			}
		}
	}
	if (lane == 0 && walked)
		atomicAdd(edges, walked);
}

void *make(size_t bytes)
{
	state *s = new state;
	// The mean degree from a sample, to size V so that the CSR, the level
	// and parent arrays and the two frontiers come to `bytes`.
	const uint32_t samples = 1 << 20;
	double mean = 0;
	for (uint32_t v = 1; v <= samples; v++)
		mean += degree(v, hub_cap);
	mean /= samples;
	size_t V = (size_t)(bytes / (8 + 4 * 4 + 4 * mean));
	V = std::min<size_t>(std::max<size_t>(V, 1024), 0xfffffff0u);
	s->V = (uint32_t)V;
	s->cap = (uint32_t)std::min<size_t>(hub_cap, V / 8);

	// Degrees into row[v+1], then an in-place prefix sum, share by share.
	s->row = (uint64_t *)suite_managed((V + 1) * sizeof(uint64_t));
	std::vector<uint64_t> share(suite_workers() + 1, 0);
	suite_for_shares(V, [&](unsigned t, size_t lo, size_t hi) {
		uint64_t sum = 0;
		for (size_t v = lo; v < hi; v++)
			sum += s->row[v + 1] = degree(v, s->cap);
		share[t + 1] = sum;
	});
	for (size_t t = 1; t < share.size(); t++)
		share[t] += share[t - 1];
	s->row[0] = 0;
	suite_for_shares(V, [&](unsigned t, size_t lo, size_t hi) {
		uint64_t at = share[t];
		for (size_t v = lo; v < hi; v++)
			s->row[v + 1] = at += s->row[v + 1];
	});
	s->E = s->row[V];

	s->col = (uint32_t *)suite_managed(s->E * sizeof(uint32_t));
	suite_for_chunks(V, 1 << 14, [&](size_t lo, size_t hi) {
		for (uint64_t e = s->row[lo]; e < s->row[hi]; e++)
			s->col[e] = target(e, s->V);
	});
	s->level = (uint32_t *)suite_managed(V * sizeof(uint32_t));
	s->parent = (uint32_t *)suite_managed(V * sizeof(uint32_t));
	s->front = (uint32_t *)suite_managed(V * sizeof(uint32_t));
	s->next = (uint32_t *)suite_managed(V * sizeof(uint32_t));
	s->count = (uint32_t *)suite_managed(sizeof(uint32_t));
	s->edges = (unsigned long long *)suite_managed(sizeof(unsigned long long));
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	const int nb = suite_blocks();
	clear<<<nb, 256>>>(s->level, s->V);
	seed<<<1, 1>>>(s->level, s->parent, s->front, 0);
	CHECK(cudaMemset(s->edges, 0, sizeof(unsigned long long)));
	uint32_t *front = s->front, *next = s->next;
	uint32_t n = 1, depth = 0;
	uint64_t reached = 1;
	while (n) {
		CHECK(cudaMemset(s->count, 0, sizeof(uint32_t)));
		unsigned blocks = std::min<unsigned>(nb, (n + 7) / 8); // 8 warps a block
		expand<<<blocks, 256>>>(s->row, s->col, s->level, s->parent, front, n, next, s->count, s->edges,
		                        depth);
		CHECK(cudaGetLastError());
		CHECK(cudaMemcpy(&n, s->count, sizeof(n), cudaMemcpyDefault));
		reached += n;
		depth++;
		std::swap(front, next);
	}
	unsigned long long edges = 0;
	CHECK(cudaMemcpy(&edges, s->edges, sizeof(edges), cudaMemcpyDefault));
	s->reached = reached;
	s->levels = depth;
	r->sparse = true;
	// each reached vertex once: its frontier slot and two offsets; each
	// edge walked: its column index and its target's level. Written: the
	// cleared level array; each claimed vertex's level, parent and slot.
	// The two frontiers take turns, an even share each.
	const double V = (double)s->V, claimed = reached - 1.0;
	suite_traffic(r, s->row, (V + 1) * 8, reached * 16.0, 0);        // row offsets
	suite_traffic(r, s->col, (double)s->E * 4, edges * 4.0, 0);       // columns
	suite_traffic(r, s->level, V * 4, edges * 4.0, V * 4 + claimed * 4); // levels
	suite_traffic(r, s->parent, V * 4, 0, claimed * 4);                  // parents
	for (int k = 0; k < 2; k++)                               // frontiers
		suite_traffic(r, k ? s->next : s->front, V * 4, reached * 2.0, claimed * 2.0);
}

// Levels that are right satisfy two things: no edge from a reached vertex
// skips a level (level[v] <= level[u] + 1: no level too high), and every
// reached vertex but the source has a parent one level up with an edge to
// it (a path that long exists: no level too low). The first is checked on
// a few million edges, the second on a few thousand vertices; a small
// graph gets a full BFS on the host as well.
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const size_t V = s->V;
	std::mutex lock;
	std::string why;
	auto fail = [&](const std::string &w) {
		std::lock_guard<std::mutex> g(lock);
		if (why.empty())
			why = w;
	};
	if (s->levels >= far) {
		r->note = std::to_string(s->levels) + " levels: more than the check can hold";
		return;
	}

	// The levels come back through a reused buffer, a byte a vertex on the
	// host: fresh host memory for a full copy would cost more than the rest.
	std::unique_ptr<uint8_t[]> level(new uint8_t[V]);
	const size_t chunk = std::min<size_t>(V, 1 << 24);
	std::vector<uint32_t> buf(chunk);
	uint64_t reached = 0;
	for (size_t at = 0; at < V; at += chunk) {
		const size_t n = std::min(chunk, V - at);
		CHECK(cudaMemcpy(buf.data(), s->level + at, n * sizeof(uint32_t), cudaMemcpyDefault));
		std::atomic<uint64_t> k{ 0 };
		suite_for_shares(n, [&](unsigned, size_t lo, size_t hi) {
			uint64_t seen = 0;
			for (size_t i = lo; i < hi; i++) {
				uint32_t l = buf[i];
				if (l != unseen && l >= s->levels)
					fail("vertex " + std::to_string(at + i) + " at level " + std::to_string(l) + " of " +
					     std::to_string(s->levels));
				seen += l != unseen;
				level[at + i] = l == unseen ? far : (uint8_t)l;
			}
			k += seen;
		});
		reached += k;
	}
	if (level[0] != 0)
		fail("the source is at level " + std::to_string(level[0]));
	if (reached != s->reached)
		fail(std::to_string(reached) + " vertices have levels, the frontiers held " + std::to_string(s->reached));

	// Parents of sampled vertices.
	const size_t picks = 4096;
	std::vector<uint32_t> pick(picks), parent(picks);
	for (size_t k = 0; k < picks; k++) {
		pick[k] = (uint32_t)(suite_mix(k ^ 0x9a) % V);
		CHECK(cudaMemcpy(&parent[k], s->parent + pick[k], sizeof(uint32_t), cudaMemcpyDefault));
	}
	suite_for_chunks(picks, 64, [&](size_t lo, size_t hi) {
		for (size_t k = lo; k < hi; k++) {
			uint32_t v = pick[k], u = parent[k];
			if (v == 0 || level[v] == far)
				continue;
			if (u >= V || level[u] == far || level[u] + 1 != level[v]) {
				fail("vertex " + std::to_string(v) + " at level " + std::to_string(level[v]) +
				     " has parent " + std::to_string(u) + " not one level up");
				continue;
			}
			const uint32_t *b = s->col + s->row[u], *e = s->col + s->row[u + 1];
			if (std::find(b, e, v) == e)
				fail("vertex " + std::to_string(v) + "'s parent " + std::to_string(u) + " has no edge to it");
		}
	});

	// Edges out of runs of consecutive vertices (the first run holds the
	// source's own), so that the CSR is read in a few long pieces.
	const size_t span = std::min<size_t>(V, 4096), runs = std::min<size_t>(256, V / span);
	std::atomic<uint64_t> tested{ 0 };
	suite_for_chunks(runs, 1, [&](size_t k, size_t) {
		size_t lo = k ? suite_mix(k ^ 0x9b) % (V - span + 1) : 0;
		uint64_t t = 0;
		for (size_t u = lo; u < lo + span; u++) {
			if (level[u] == far)
				continue;
			for (uint64_t e = s->row[u]; e < s->row[u + 1]; e++, t++) {
				uint32_t v = s->col[e];
				if (level[v] == far || level[v] > level[u] + 1) {
					fail("edge " + std::to_string(u) + "->" + std::to_string(v) + ": levels " +
					     std::to_string(level[u]) + ", " + std::to_string(level[v]));
					break;
				}
			}
		}
		tested += t;
	});

	bool full = (V + 1) * 8 + s->E * 4 < (64u << 20);
	if (full) {
		std::vector<uint32_t> want(V, unseen), q;
		q.reserve(V);
		want[0] = 0;
		q.push_back(0);
		for (size_t h = 0; h < q.size(); h++) {
			uint32_t u = q[h];
			for (uint64_t e = s->row[u]; e < s->row[u + 1]; e++)
				if (want[s->col[e]] == unseen) {
					want[s->col[e]] = want[u] + 1;
					q.push_back(s->col[e]);
				}
		}
		for (size_t v = 0; v < V; v++)
			if ((want[v] == unseen ? far : want[v]) != level[v]) {
				fail("vertex " + std::to_string(v) + ": level " + std::to_string(level[v]) + ", host BFS " +
				     std::to_string((int)want[v]));
				break;
			}
	}
	if (!why.empty()) {
		r->note = why;
		return;
	}
	r->verified = true;
	r->note = std::to_string(s->reached) + " of " + std::to_string(V) + " vertices reached in " +
	          std::to_string(s->levels) + " levels; " + std::to_string(picks) + " parents and " +
	          std::to_string(tested) + " edges checked" + (full ? "; host BFS matches" : "");
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->row);
	suite_free(s->col);
	suite_free(s->level);
	suite_free(s->parent);
	suite_free(s->front);
	suite_free(s->next);
	suite_free(s->count);
	suite_free(s->edges);
	delete s;
}

} // namespace

const suite_workload suite_bfs = { "bfs", "top-down BFS on a scale-free graph, one launch per level",
	                           make, run, check, destroy };
