// nw: Needleman-Wunsch global alignment of two sequences (Rodinia's nw):
// an (n+1)x(n+1) score matrix filled from a substitution-score matrix of
// the same shape, in wavefronts of 32x32 tiles: one launch per
// anti-diagonal of tiles, one block per tile, each tile's own
// anti-diagonals swept in shared memory. The kernel gets only the two
// matrices' base pointers: a launch touches a thin diagonal band of tiles,
// 128-byte pieces of rows spread over the whole of both matrices.
#include "suite.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

namespace {

const int tile = 32;     // one warp per tile, a lane per tile row
const int gap = 10;      // the cost of a gap
const uint64_t seq_seed = 0x4e57;

struct state {
	int *score; // (n+1)^2: row 0 and column 0 the gap costs, the rest the DP
	int *ref;   // (n+1)^2: the substitution score of each pair, row and column 0 unused
	size_t n, dim;
	int sub[20][20];
};

// The residue at position i of sequence `which` (0 or 1): 20 letters.
int letter(size_t i, int which)
{
	return (int)(suite_mix((i << 1 | which) ^ seq_seed) % 20);
}

__global__ void nw_init(int *score, int cols, int penalty)
{
	for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < (size_t)cols; k += (size_t)gridDim.x * blockDim.x) {
		score[k] = -(int)k * penalty;
		score[k * cols] = -(int)k * penalty;
	}
}

// Tile (ti, tj) of anti-diagonal `wave`, ti + tj = wave, covers rows
// ti*tile+1.. and columns tj*tile+1..; it needs the row above it and the
// column left of it, which earlier launches wrote.
__global__ void nw_wave(int *score, const int *ref, int cols, int wave, int penalty)
{
	// A row stride of tile+2 puts each anti-diagonal of s in distinct banks
	// (tile+1 would not: its anti-diagonals step by 32 words).
	__shared__ int s[tile + 1][tile + 2];
	__shared__ int w[tile][tile];
	const int tiles = (cols - 1) / tile;
	const int ti = max(0, wave - tiles + 1) + blockIdx.x, tj = wave - ti;
	const int t = threadIdx.x;
	const size_t c = cols, i0 = (size_t)ti * tile, j0 = (size_t)tj * tile;
	s[0][t + 1] = score[i0 * c + j0 + 1 + t];
	s[t + 1][0] = score[(i0 + 1 + t) * c + j0];
	if (t == 0)
		s[0][0] = score[i0 * c + j0];
	for (int k = 0; k < tile; k++)
		w[k][t] = ref[(i0 + 1 + k) * c + j0 + 1 + t];
	__syncwarp();
	// lane t owns tile row t; on step d it takes the cell (t, d - t)
	for (int d = 0; d < 2 * tile - 1; d++) {
		int y = d - t;
		if (y >= 0 && y < tile)
			s[t + 1][y + 1] = max(s[t][y] + w[t][y], max(s[t][y + 1], s[t + 1][y]) - penalty);
		__syncwarp();
	}
	for (int k = 0; k < tile; k++)
		score[(i0 + 1 + k) * c + j0 + 1 + t] = s[k + 1][t + 1];
}

void *make(size_t bytes)
{
	state *s = new state;
	s->n = std::max<size_t>(tile, ((size_t)std::sqrt(bytes / 8.0) - 1) / tile * tile);
	s->dim = s->n + 1;
	s->score = (int *)suite_managed(s->dim * s->dim * sizeof(int));
	s->ref = (int *)suite_managed(s->dim * s->dim * sizeof(int));
	// A symmetric BLOSUM-like table: matches 2..4, mismatches -4..1.
	for (int a = 0; a < 20; a++)
		for (int b = a; b < 20; b++) {
			uint64_t h = suite_mix((uint64_t)(a * 20 + b) ^ 0x5b);
			s->sub[a][b] = s->sub[b][a] = a == b ? 2 + (int)(h % 3) : (int)(h % 6) - 4;
		}
	std::vector<int> second(s->dim);
	for (size_t j = 1; j < s->dim; j++)
		second[j] = letter(j, 1);
	suite_for_chunks(s->dim, 1, [&](size_t i, size_t) { // a row each
		int *row = s->ref + i * s->dim;
		if (i == 0) {
			std::fill(row, row + s->dim, 0);
			return;
		}
		const int *sub = s->sub[letter(i, 0)];
		row[0] = 0;
		for (size_t j = 1; j < s->dim; j++)
			row[j] = sub[second[j]];
	});
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	const int tiles = (int)(s->n / tile), cols = (int)s->dim;
	nw_init<<<std::min<int>(suite_blocks(), (cols + 255) / 256), 256>>>(s->score, cols, gap);
	for (int wave = 0; wave < 2 * tiles - 1; wave++) {
		int lo = std::max(0, wave - tiles + 1), hi = std::min(wave, tiles - 1);
		nw_wave<<<hi - lo + 1, tile>>>(s->score, s->ref, cols, wave, gap);
	}
	CHECK(cudaGetLastError());
	r->sparse = true;
	const double cells = (double)s->n * s->n, tiles2 = (double)tiles * tiles, matrix = (double)s->dim * s->dim * 4;
	// the score matrix: per tile the row above and the column left read, every cell written once
	suite_traffic(r, s->score, matrix, tiles2 * (2 * tile + 1) * 4, cells * 4 + 2.0 * s->dim * 4);
	// the substitution scores, read once
	suite_traffic(r, s->ref, matrix, cells * 4, 0);
}

// Recompute an h x h region with top-left cell (i0, j0) from its top row
// and left column: the matrix's own gap costs where the region lies on its
// edge, otherwise the GPU's values, which the region's cells depend on
// alone. Compares every cell, the gap costs too.
bool region(const state *s, size_t i0, size_t j0, size_t h, std::string *why)
{
	const size_t d = s->dim;
	auto gpu = [&](size_t i, size_t j) { return s->score[i * d + j]; };
	std::vector<int> m((h + 1) * (h + 1));
	auto at = [&](size_t i, size_t j) -> int & { return m[(i - i0) * (h + 1) + (j - j0)]; };
	at(i0, j0) = i0 == 0 || j0 == 0 ? -(int)(i0 + j0) * gap : gpu(i0, j0);
	for (size_t k = 1; k <= h; k++) {
		at(i0, j0 + k) = i0 == 0 ? -(int)(j0 + k) * gap : gpu(i0, j0 + k);
		at(i0 + k, j0) = j0 == 0 ? -(int)(i0 + k) * gap : gpu(i0 + k, j0);
	}
	for (size_t i = i0 + 1; i <= i0 + h; i++)
		for (size_t j = j0 + 1; j <= j0 + h; j++)
			at(i, j) = std::max(at(i - 1, j - 1) + s->ref[i * d + j],
			                    std::max(at(i - 1, j), at(i, j - 1)) - gap);
	for (size_t i = i0; i <= i0 + h; i++)
		for (size_t j = j0; j <= j0 + h; j++)
			if (at(i, j) != gpu(i, j)) {
				*why = "cell (" + std::to_string(i) + ", " + std::to_string(j) + "): " +
				       std::to_string(gpu(i, j)) + " against " + std::to_string(at(i, j));
				return false;
			}
	return true;
}

void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const size_t n = s->n, b = std::min<size_t>(64, n);
	std::string why;
	bool ok;
	if (s->dim * s->dim <= (32u << 20)) {
		ok = region(s, 0, 0, n, &why);
		r->note = "the whole matrix recomputed on the host";
	} else {
		ok = region(s, 0, 0, std::min<size_t>(256, n), &why) &&
		     region(s, n / 2 / tile * tile, n / 3 / tile * tile, b, &why) && region(s, n - b, n - b, b, &why);
		r->note = "the first 256x256 cells, a 64x64 block in the middle and the last recomputed on the host";
	}
	if (!ok) {
		r->note = why;
		return;
	}
	r->verified = true;
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->score);
	suite_free(s->ref);
	delete s;
}

} // namespace

const suite_workload suite_nw = { "nw", "Needleman-Wunsch, one launch per anti-diagonal of 32x32 tiles",
	                          make, run, check, destroy };
