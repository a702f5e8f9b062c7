// pathfinder: the cheapest path from the top row of a grid of weights to
// the bottom, moving down, down-left or down-right (Rodinia's pathfinder).
// One launch per row: dst[c] = wall[r][c] + min(src[c-1], src[c], src[c+1]).
// The wall is read once, row after row: streaming, with no reuse.
#include "suite.h"

#include <algorithm>
#include <vector>

namespace {

const size_t cols = 1 << 20;

struct state {
	int *wall;      // rows x cols weights, 0..9
	int *a, *b;     // the DP rows, ping-ponged
	size_t rows;
	int *result;    // the last row's costs
};

__global__ void step(const int *wall, const int *src, int *dst, size_t cols, size_t row)
{
	for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < cols; c += (size_t)gridDim.x * blockDim.x) {
		int best = src[c];
		if (c > 0)
			best = min(best, src[c - 1]);
		if (c + 1 < cols)
			best = min(best, src[c + 1]);
		dst[c] = wall[row * cols + c] + best;
	}
}

uint32_t weight(size_t i, uint64_t seed)
{
	return (uint32_t)(suite_mix(i ^ seed) % 10);
}

void *make(size_t bytes)
{
	state *s = new state;
	s->rows = std::max<size_t>(2, bytes / (cols * sizeof(int)));
	s->wall = (int *)suite_managed(s->rows * cols * sizeof(int));
	s->a = (int *)suite_managed(cols * sizeof(int));
	s->b = (int *)suite_managed(cols * sizeof(int));
	suite_fill_u32((uint32_t *)s->wall, s->rows * cols, weight, 7);
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	int nb = suite_blocks();
	CHECK(cudaMemcpy(s->a, s->wall, cols * sizeof(int), cudaMemcpyDefault));
	int *src = s->a, *dst = s->b;
	for (size_t row = 1; row < s->rows; row++) {
		step<<<nb, 256>>>(s->wall, src, dst, cols, row);
		std::swap(src, dst);
	}
	CHECK(cudaGetLastError());
	s->result = src;
	// the wall once; each DP row read once (its neighbours come from cache) and written once, the two
	// rows in turn
	const double wall = (double)s->rows * cols * sizeof(int), row = cols * sizeof(int);
	suite_traffic(r, s->wall, wall, wall, 0);
	for (int k = 0; k < 2; k++)
		suite_traffic(r, k ? s->b : s->a, row, wall / 2, wall / 2);
}

// A band of columns recomputed on the host: a cell's cost depends only on
// the cells within `rows` columns of it, so a band of width 2*rows+1
// around column c gives its exact answer.
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const size_t probes[] = { 0, cols / 3, cols - 1 };
	for (size_t c : probes) {
		size_t lo = c > s->rows ? c - s->rows : 0, hi = std::min(cols, c + s->rows + 1);
		std::vector<int> cur(s->wall + lo, s->wall + hi), next(hi - lo);
		for (size_t row = 1; row < s->rows; row++) {
			const int *w = s->wall + row * cols;
			for (size_t k = lo; k < hi; k++) {
				int best = cur[k - lo];
				if (k > lo)
					best = std::min(best, cur[k - lo - 1]);
				if (k + 1 < hi)
					best = std::min(best, cur[k - lo + 1]);
				next[k - lo] = w[k] + best;
			}
			std::swap(cur, next);
		}
		if (cur[c - lo] != s->result[c]) {
			r->note = "column " + std::to_string(c) + ": " + std::to_string(s->result[c]) + " against " +
			          std::to_string(cur[c - lo]);
			return;
		}
	}
	r->verified = true;
	r->note = "three columns recomputed on the host";
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->wall);
	suite_free(s->a);
	suite_free(s->b);
	delete s;
}

} // namespace

const suite_workload suite_pathfinder = { "pathfinder", "grid DP, one launch per row, the wall read once",
	                                  make, run, check, destroy };
