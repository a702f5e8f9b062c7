// kmeans: Lloyd's k-means on float points of 16 dimensions, 64 centroids,
// ten iterations (Rodinia's kmeans, with the update kept on the GPU). Each
// iteration is two launches: one thread a point finds its nearest centroid
// (the centroids in shared memory), writes its label and adds the point to
// its block's running sums, which go to a small managed buffer by atomics
// at the block's end; then one block divides the sums into the next
// centroids. The points are read once per iteration, front to back:
// streaming, the whole array reused every pass.
#include "suite.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

const int dims = 16;
const int k = 64;
const int iterations = 10;
const int tile_points = 256; // points a block assigns at a time, one a thread

// What the assignment adds up, cleared before the first iteration and by
// each update after it has used them.
struct totals {
	double sums[k * dims];
	uint32_t counts[k];
};

struct state {
	float *points;       // n x dims, row-major
	uint32_t *labels;    // n, the last iteration's nearest centroid
	float *cent[2];      // k x dims each, ping-ponged: cent[0] is the start
	totals *acc;
	size_t n;
};

// One thread a point, a tile of 256 points at a time. The tile's points
// are grouped by label in shared memory (a counting sort), and thread t
// keeps the running sums of four dimensions of cluster t/4 in registers:
// every sum is a plain add, with no float atomics to contend.
__global__ void __launch_bounds__(tile_points) assign(const float *points, size_t n, const float *cent, uint32_t *labels,
                                                      totals *acc)
{
	__shared__ float c[k * dims];
	__shared__ __align__(16) float rows[tile_points][dims + 4]; // the tile by label; 80-byte rows spread the banks
	__shared__ unsigned count[k], start[k + 1];
	static_assert(tile_points == k * 4, "a thread for four dimensions of each cluster");
	const int my_k = threadIdx.x / 4, my_d = threadIdx.x % 4 * 4;
	double sum[4] = {};
	unsigned long long mine = 0;
	for (int i = threadIdx.x; i < k * dims; i += blockDim.x)
		c[i] = cent[i];
	for (size_t base = blockIdx.x * (size_t)tile_points; base < n; base += (size_t)gridDim.x * tile_points) {
		if (threadIdx.x < k)
			count[threadIdx.x] = 0;
		__syncthreads(); // the last tile's sums are done with rows
		size_t p = base + threadIdx.x;
		float x[dims];
		int label = -1;
		unsigned rank = 0;
		if (p < n) {
			const float4 *row = (const float4 *)(points + p * dims);
			for (int q = 0; q < dims / 4; q++) {
				float4 v = row[q];
				x[4 * q] = v.x, x[4 * q + 1] = v.y, x[4 * q + 2] = v.z, x[4 * q + 3] = v.w;
			}
			float best = INFINITY;
			label = 0;
			for (int j = 0; j < k; j++) {
				float d2 = 0;
				for (int d = 0; d < dims; d++) {
					float t = x[d] - c[j * dims + d];
					d2 = fmaf(t, t, d2);
				}
				if (d2 < best)
					best = d2, label = j;
			}
			labels[p] = label;
			rank = atomicAdd(&count[label], 1u);
		}
		__syncthreads();
		if (threadIdx.x < 32) { // where each cluster's points start: a warp's scan, two clusters a lane
			unsigned c0 = count[2 * threadIdx.x], c1 = count[2 * threadIdx.x + 1], incl = c0 + c1;
			for (int d = 1; d < 32; d *= 2) {
				unsigned v = __shfl_up_sync(0xffffffffu, incl, d);
				if ((int)threadIdx.x >= d)
					incl += v;
			}
			start[2 * threadIdx.x] = incl - c0 - c1;
			start[2 * threadIdx.x + 1] = incl - c1;
			if (threadIdx.x == 31)
				start[k] = incl;
		}
		__syncthreads();
		if (label >= 0) {
			float4 *row = (float4 *)rows[start[label] + rank];
			for (int q = 0; q < dims / 4; q++)
				row[q] = make_float4(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
		}
		__syncthreads();
		unsigned lo = start[my_k], hi = start[my_k + 1];
		for (unsigned j = lo; j < hi; j++) {
			float4 v = *(const float4 *)&rows[j][my_d];
			sum[0] += v.x, sum[1] += v.y, sum[2] += v.z, sum[3] += v.w;
		}
		mine += hi - lo;
	}
	for (int j = 0; j < 4; j++)
		if (sum[j] != 0)
			atomicAdd(&acc->sums[my_k * dims + my_d + j], sum[j]);
	if (my_d == 0 && mine)
		atomicAdd(&acc->counts[my_k], (unsigned)mine);
}

// One block of k*dims threads. An empty cluster keeps its centroid.
__global__ void update(totals *acc, const float *old, float *next)
{
	int i = threadIdx.x;
	uint32_t count = acc->counts[i / dims];
	next[i] = count ? (float)(acc->sums[i] / count) : old[i];
	acc->sums[i] = 0;
	__syncthreads(); // every thread has read its count before it is cleared
	if (i < k)
		acc->counts[i] = 0;
}

// The check's own totals, straight from the labels, without shared memory.
__global__ void recount(const float *points, const uint32_t *labels, size_t n, double *sums,
                        unsigned long long *counts)
{
	for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < n; p += (size_t)gridDim.x * blockDim.x) {
		uint32_t label = labels[p];
		if (label >= k)
			continue; // counted short: the check sees it
		for (int d = 0; d < dims; d++)
			atomicAdd(&sums[label * dims + d], (double)points[p * dims + d]);
		atomicAdd(&counts[label], 1ull);
	}
}

// Points around 64 true centres in [0,10)^16, each coordinate off by up
// to 2: clusters that overlap a little, so labels settle over the passes.
float coordinate(size_t i, uint64_t seed)
{
	size_t point = i / dims, d = i % dims;
	uint64_t cluster = suite_mix(point ^ (seed << 40)) % k;
	float centre = (float)(suite_mix((cluster * dims + d) ^ seed) % 1000) / 100.0f;
	float noise = (float)(suite_mix(i ^ ~seed) >> 40) / (float)(1 << 24) * 4.0f - 2.0f;
	return centre + noise;
}

void *make(size_t bytes)
{
	state *s = new state;
	s->n = std::max<size_t>(k, bytes / (dims * sizeof(float) + sizeof(uint32_t)));
	s->points = (float *)suite_managed(s->n * dims * sizeof(float));
	s->labels = (uint32_t *)suite_managed(s->n * sizeof(uint32_t));
	s->cent[0] = (float *)suite_managed(k * dims * sizeof(float));
	s->cent[1] = (float *)suite_managed(k * dims * sizeof(float));
	s->acc = (totals *)suite_managed(sizeof(totals));
	suite_fill_f32(s->points, s->n * dims, coordinate, 11);
	// the first centroids are points spread over the input, as a loader picks them
	for (int j = 0; j < k; j++)
		for (int d = 0; d < dims; d++)
			s->cent[0][j * dims + d] = s->points[(j * (s->n / k)) * dims + d];
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	int nb = suite_blocks();
	CHECK(cudaMemset(s->acc, 0, sizeof(totals)));
	for (int it = 0; it < iterations; it++) {
		assign<<<nb, tile_points>>>(s->points, s->n, s->cent[it % 2], s->labels, s->acc);
		update<<<1, k * dims>>>(s->acc, s->cent[it % 2], s->cent[(it + 1) % 2]);
	}
	CHECK(cudaGetLastError());
	// per iteration the points once and the labels written once; the
	// centroids and totals are a few KiB
	const double points = (double)s->n * dims * sizeof(float), labels = (double)s->n * sizeof(uint32_t);
	suite_traffic(r, s->points, points, iterations * points, 0);
	suite_traffic(r, s->labels, labels, 0, iterations * labels);
}

// The last iteration checked both ways: its labels, for a few thousand
// points in runs of 512 (few pages), are nearest against the centroids it
// started from; and its centroids are the means of all points by those
// labels, summed again in double by a kernel that shares nothing with
// assign().
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const float *prev = s->cent[(iterations - 1) % 2], *last = s->cent[iterations % 2];
	const size_t run_len = std::min<size_t>(512, s->n), runs = 8;
	for (size_t q = 0; q < runs; q++) {
		size_t lo = suite_mix(q + 99) % (s->n - run_len + 1);
		for (size_t i = lo; i < lo + run_len; i++) {
			const float *x = s->points + i * dims;
			uint32_t label = s->labels[i];
			double best = INFINITY, got = INFINITY;
			for (int j = 0; j < k; j++) {
				double d2 = 0;
				for (int d = 0; d < dims; d++) {
					double t = (double)x[d] - prev[j * dims + d];
					d2 += t * t;
				}
				best = std::min(best, d2);
				if ((uint32_t)j == label)
					got = d2;
			}
			if (!(got <= best + 1e-4 * (1 + best))) {
				r->note = "point " + std::to_string(i) + " labelled " + std::to_string(label) +
				          " at distance^2 " + std::to_string(got) + ", nearest is " + std::to_string(best);
				return;
			}
		}
	}
	double *sums;
	unsigned long long *counts;
	CHECK(cudaMalloc(&sums, k * dims * sizeof(double)));
	CHECK(cudaMalloc(&counts, k * sizeof(unsigned long long)));
	CHECK(cudaMemset(sums, 0, k * dims * sizeof(double)));
	CHECK(cudaMemset(counts, 0, k * sizeof(unsigned long long)));
	recount<<<suite_blocks(), 256>>>(s->points, s->labels, s->n, sums, counts);
	CHECK(cudaGetLastError());
	std::vector<double> hs(k * dims);
	std::vector<unsigned long long> hc(k);
	CHECK(cudaMemcpy(hs.data(), sums, hs.size() * sizeof(double), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(hc.data(), counts, hc.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(sums));
	CHECK(cudaFree(counts));
	unsigned long long total = 0;
	int empty = 0;
	for (int j = 0; j < k; j++) {
		total += hc[j];
		empty += hc[j] == 0;
		for (int d = 0; d < dims; d++) {
			int i = j * dims + d;
			double want = hc[j] ? hs[i] / hc[j] : prev[i];
			if (!(std::fabs(last[i] - want) <= 1e-4 * (1 + std::fabs(want)))) {
				r->note = "centroid " + std::to_string(j) + " dim " + std::to_string(d) + ": " +
				          std::to_string(last[i]) + " against the mean " + std::to_string(want) + " of " +
				          std::to_string(hc[j]) + " points";
				return;
			}
		}
	}
	if (total != s->n) {
		r->note = std::to_string(total) + " labels in range of " + std::to_string(s->n);
		return;
	}
	r->verified = true;
	r->note = "last iteration: 4096 sampled labels nearest, all 64 centroids the means of their points (" +
	          std::to_string(empty) + " empty)";
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->points);
	suite_free(s->labels);
	suite_free(s->cent[0]);
	suite_free(s->cent[1]);
	suite_free(s->acc);
	delete s;
}

} // namespace

const suite_workload suite_kmeans = { "kmeans", "Lloyd's k-means, 16-d, k=64, ten passes over the points",
	                              make, run, check, destroy };
