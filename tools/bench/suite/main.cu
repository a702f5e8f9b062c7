// ember-suite NAME BYTES RUNS [resident | placed PLACE_BYTES]
//   Runs one workload RUNS times on about BYTES of managed data and prints
//   one JSON record. The data is made once (untimed, on the host, as a
//   loader would); each run times the algorithm over it from its first
//   launch to its end. The first run is cold (the data fresh from the
//   host: first_seconds); later runs find what the placement left (warm),
//   as a program that goes on working on its data would. With `resident`, the
//   timed part starts by moving every allocation to the GPU in one prefetch
//   each: the program as it would run on a GPU that holds all of it (its
//   input copied in once, at link speed). With `placed`, for a run without
//   Ember, the program places its own data with hints after one untimed run
//   that counts its traffic: its busiest arrays per byte on the GPU, up to
//   PLACE_BYTES, the rest in host memory mapped for the GPU (placed.cu); the
//   timed runs then find that placement.
// EMBER_SUITE_MAX_SECONDS, EMBER_SUITE_FRESH and EMBER_SUITE_PLACE_BY are the harness's settings
// (tools/bench/settings.sh, where suite.sh sets them): no further run starts
// once the runs so far took that many seconds (unset: no limit; runs_seconds
// says how many ran), and 1 makes the data afresh for every run.
// ember-suite list   the workloads, one a line
#include "placed.h"
#include "suite.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#include "wall_clock.h"

static const suite_workload *const workloads[] = {
	&suite_pathfinder, &suite_kmeans, &suite_cnn, &suite_bitonic,
	&suite_radix, &suite_bfs, &suite_nw, &suite_star,
};

static std::mutex live_lock;
static std::vector<std::pair<void *, size_t>> live; // the run's managed allocations
static size_t managed_total;

void *suite_managed(size_t bytes)
{
	void *p = nullptr;
	CHECK(cudaMallocManaged(&p, bytes));
	std::lock_guard<std::mutex> g(live_lock);
	live.emplace_back(p, bytes);
	managed_total += bytes;
	return p;
}

void suite_free(void *p)
{
	if (!p)
		return;
	CHECK(cudaFree(p));
	std::lock_guard<std::mutex> g(live_lock);
	for (size_t i = 0; i < live.size(); i++)
		if (live[i].first == p) {
			live.erase(live.begin() + i);
			break;
		}
}

template <typename T, typename F> static void fill_parallel(T *p, size_t n, F fn)
{
	suite_for_shares(n, [=](unsigned, size_t lo, size_t hi) {
		for (size_t i = lo; i < hi; i++)
			p[i] = fn(i);
	});
}

void suite_fill_u32(uint32_t *p, size_t n, uint32_t (*fn)(size_t, uint64_t), uint64_t seed)
{
	fill_parallel(p, n, [=](size_t i) { return fn(i, seed); });
}

void suite_fill_f32(float *p, size_t n, float (*fn)(size_t, uint64_t), uint64_t seed)
{
	fill_parallel(p, n, [=](size_t i) { return fn(i, seed); });
}

int suite_blocks()
{
	int sms = 0;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	return sms * 8;
}

// Ember's ember_flush(), when Ember is loaded: each run starts settled.
static void ember_flush_if_loaded()
{
	typedef int (*flush_fn)(void);
	flush_fn f = (flush_fn)dlsym(RTLD_DEFAULT, "ember_flush");
	if (f)
		f();
}

static void prefetch_all_to_gpu()
{
	cudaMemLocation gpu = {};
	gpu.type = cudaMemLocationTypeDevice;
	gpu.id = 0;
	for (auto &a : live)
		CHECK(cudaMemPrefetchAsync(a.first, a.second, gpu, 0, 0));
	CHECK(cudaDeviceSynchronize());
}

// JSON string contents: the notes are ours, but keep them well-formed.
static std::string escaped(const std::string &s)
{
	std::string o;
	for (char c : s)
		if (c == '"' || c == '\\')
			o += '\\', o += c;
		else if ((unsigned char)c >= 0x20)
			o += c;
	return o;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static std::string list(const std::vector<double> &v)
{
	std::string s = "[";
	for (size_t i = 0; i < v.size(); i++)
		s += (i ? ", " : "") + std::to_string(v[i]);
	return s + "]";
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (auto *w : workloads)
			printf("%-11s %s\n", w->name, w->what);
		return 0;
	}
	bool resident = argc == 5 && !strcmp(argv[4], "resident"), placed = argc == 6 && !strcmp(argv[4], "placed");
	unsigned long long place_bytes = 0;
	char *end;
	if (placed)
		place_bytes = strtoull(argv[5], &end, 10);
	if (argc < 4 || argc > 6 || (argc > 4 && !resident && !placed) || (placed && (*end || !place_bytes))) {
		fprintf(stderr, "usage: ember-suite NAME BYTES RUNS [resident | placed PLACE_BYTES] | ember-suite list\n");
		return 2;
	}
	const suite_workload *w = nullptr;
	for (auto *c : workloads)
		if (!strcmp(c->name, argv[1]))
			w = c;
	unsigned long long bytes = strtoull(argv[2], &end, 10);
	int runs = atoi(argv[3]);
	if (!w || *end || bytes < (1u << 20) || runs < 1) {
		fprintf(stderr, "ember-suite: unknown workload, or BYTES below 1 MiB, or RUNS below 1 (try: ember-suite list)\n");
		return 2;
	}
	const char *cap_env = getenv("EMBER_SUITE_MAX_SECONDS");
	double cap = cap_env && atof(cap_env) > 0 ? atof(cap_env) : HUGE_VAL, spent = 0;
	std::vector<double> seconds, compute;
	suite_result last;
	bool all_verified = true;
	size_t ws = 0;
	bool fresh = getenv("EMBER_SUITE_FRESH") && !strcmp(getenv("EMBER_SUITE_FRESH"), "1");
	if (placed && fresh) {
		fprintf(stderr, "ember-suite: placed runs keep their data: unset EMBER_SUITE_FRESH\n");
		return 2;
	}
	size_t placed_bytes = 0;
	const char *place_by = getenv("EMBER_SUITE_PLACE_BY");
	bool reads_first = place_by && !strcmp(place_by, "reads");
	if (placed && place_by && *place_by && !reads_first && strcmp(place_by, "traffic")) {
		fprintf(stderr, "ember-suite: EMBER_SUITE_PLACE_BY is traffic or reads, not %s\n", place_by);
		return 2;
	}
	void *state = nullptr;
	for (int i = 0; i < runs && spent < cap; i++) {
		if (!state) {
			managed_total = 0;
			state = w->make(bytes);
			CHECK(cudaDeviceSynchronize());
			ws = managed_total;
			if (placed) {
				suite_result learned;
				w->run(state, &learned);
				CHECK(cudaDeviceSynchronize());
				placed_bytes = suite_place_by_traffic(live, learned, place_bytes, reads_first);
			}
		}
		ember_flush_if_loaded();
		suite_result r;
		double t0 = now_s();
		if (resident)
			prefetch_all_to_gpu();
		double t1 = now_s();
		w->run(state, &r);
		CHECK(cudaDeviceSynchronize());
		seconds.push_back(now_s() - t0);
		compute.push_back(now_s() - t1);
		spent += seconds.back();
		bool final_run = fresh || i + 1 == runs || spent >= cap;
		if (i == 0 || final_run) { /* checked cold and at the end: a check reads everything */
			w->check(state, &r);
			all_verified = all_verified && r.verified;
			if (!r.verified)
				fprintf(stderr, "ember-suite: %s run %d: answer wrong: %s\n", w->name, i, r.note.c_str());
			last = r;
		}
		if (final_run) {
			w->destroy(state);
			state = nullptr;
		}
	}
	ember_flush_if_loaded();
	printf("{\"bench\": \"%s\", \"working_set_bytes\": %zu, \"requested_bytes\": %llu, \"resident\": %s, "
	       "\"seconds\": %.6f, \"first_seconds\": %.6f, \"runs_seconds\": %s, \"compute_seconds\": %.6f, "
	       "\"first_compute_seconds\": %.6f, \"runs_asked\": %d, \"fresh_data_each_run\": %s, ",
	       w->name, ws, bytes, resident ? "true" : "false", median(seconds), seconds[0], list(seconds).c_str(),
	       median(compute), compute[0], runs, fresh ? "true" : "false");
	if (placed)
		printf("\"placed_bytes\": %zu, \"placed_by\": \"%s\", ", placed_bytes, reads_first ? "reads" : "traffic");
	if (!last.arrays.empty()) {
		printf("\"traffic_by_array\": [");
		for (size_t i = 0; i < last.arrays.size(); i++)
			printf("%s[%.0f, %.0f, %.0f]", i ? ", " : "", last.arrays[i].bytes, last.arrays[i].read,
			       last.arrays[i].written);
		printf("], ");
	}
	printf("\"read_bytes\": %.0f, \"written_bytes\": %.0f, \"sparse\": %s, \"verified\": %s, \"check\": \"%s\"}\n",
	       last.read_bytes, last.written_bytes, last.sparse ? "true" : "false",
	       all_verified ? "true" : "false", escaped(last.note).c_str());
	return all_verified ? 0 : 1;
}
