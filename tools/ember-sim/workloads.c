/* The built-in workloads. Each is a few allocations and a loop of launches
 * whose ranges say which bytes each kernel reads and how densely. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "workloads.h"

void sim_wl_defaults(struct sim_wl_opts *o)
{
	*o = (struct sim_wl_opts){
		.working_set = 24ull << 30, .seed = 1, .drift_pct = 5, .tokens = 8, .layers = 32,
		.stride = 16 << 10, .reads = 16,
	};
}

static unsigned passes(const struct sim_wl_opts *o, unsigned dflt) { return o->passes ? o->passes : dflt; }

static struct sim_range rng(uint64_t id, uint64_t off, uint64_t bytes, enum sim_pattern p, uint64_t touched)
{
	return (struct sim_range){ .alloc_id = id, .offset = off, .bytes = bytes, .pattern = p, .touched = touched };
}

/* One allocation read whole by every launch. */
static int one_alloc(const struct sim_wl_opts *o, struct sim_events *e, unsigned n, enum sim_pattern p, uint64_t touched)
{
	int rc = sim_events_alloc(e, 0, o->working_set);
	struct sim_range r = rng(0, 0, o->working_set, p, touched);
	for (unsigned i = 0; i < n && !rc; i++)
		rc = sim_events_launch(e, 0, 1, &r, 0);
	return rc ? rc : sim_events_free(e, 0);
}

static int reread(const struct sim_wl_opts *o, struct sim_events *e)
{
	return one_alloc(o, e, passes(o, 8), SIM_STREAM, o->working_set);
}

static int strided(const struct sim_wl_opts *o, struct sim_events *e)
{
	uint64_t elems = o->working_set / o->stride;
	return one_alloc(o, e, passes(o, 8), SIM_STRIDED, elems * SIM_STRIDED_ELEM);
}

static int random_wl(const struct sim_wl_opts *o, struct sim_events *e)
{
	uint64_t blocks = (o->working_set + SIM_BLOCK - 1) / SIM_BLOCK;
	uint64_t touched = blocks * o->reads * SIM_RANDOM_ELEM;
	if (touched > o->working_set)
		touched = o->working_set;
	return one_alloc(o, e, passes(o, 32), SIM_RANDOM, touched);
}

/* A window of half the allocation that slides drift% of itself per launch,
 * wrapping around: the hot set moves slowly. */
static int window(const struct sim_wl_opts *o, struct sim_events *e)
{
	uint64_t ws = o->working_set, win = ws / 2 / SIM_BLOCK * SIM_BLOCK;
	if (!win)
		win = ws;
	uint64_t step = (uint64_t)((double)win * o->drift_pct / 100.0);
	int rc = sim_events_alloc(e, 0, ws);
	uint64_t at = 0;
	for (unsigned i = 0; i < passes(o, 32) && !rc; i++) {
		struct sim_range r[2];
		unsigned n = 1;
		if (at + win <= ws) {
			r[0] = rng(0, at, win, SIM_STREAM, win);
		} else {
			r[0] = rng(0, at, ws - at, SIM_STREAM, ws - at);
			r[1] = rng(0, 0, win - (ws - at), SIM_STREAM, win - (ws - at));
			n = 2;
		}
		rc = sim_events_launch(e, 0, n, r, 0);
		at = (at + step) % ws;
	}
	return rc ? rc : sim_events_free(e, 0);
}

/* Hot set A (first half) for half the launches, then B (second half). */
static int phase(const struct sim_wl_opts *o, struct sim_events *e)
{
	uint64_t half = o->working_set / 2;
	unsigned n = passes(o, 16);
	int rc = sim_events_alloc(e, 0, o->working_set);
	for (unsigned i = 0; i < n && !rc; i++) {
		struct sim_range r = rng(0, i < n / 2 ? 0 : half, i < n / 2 ? half : o->working_set - half, SIM_STREAM, 0);
		r.touched = r.bytes;
		rc = sim_events_launch(e, 0, 1, &r, 0);
	}
	return rc ? rc : sim_events_free(e, 0);
}

/* Token generation: per token every layer's weights once, in order, plus a
 * small activation buffer read and written by each layer. */
static int decode(const struct sim_wl_opts *o, struct sim_events *e)
{
	unsigned L = o->layers;
	uint64_t act = o->working_set / 256 < (64ull << 20) ? o->working_set / 256 : 64ull << 20;
	uint64_t layer = (o->working_set - act) / L;
	int rc = 0;
	for (unsigned i = 0; i < L && !rc; i++)
		rc = sim_events_alloc(e, i, layer);
	rc = rc ? rc : sim_events_alloc(e, L, act);
	for (unsigned t = 0; t < o->tokens && !rc; t++)
		for (unsigned i = 0; i < L && !rc; i++) {
			struct sim_range r[2] = { rng(i, 0, layer, SIM_STREAM, layer), rng(L, 0, act, SIM_STREAM, act) };
			r[1].write = true;
			rc = sim_events_launch(e, 0, 2, r, 0);
		}
	for (unsigned i = 0; i <= L && !rc; i++)
		rc = sim_events_free(e, i);
	return rc;
}

/* Star schema: 16 fact-table columns (90% of the set) and 4 dimension
 * tables. Each query scans a few columns and probes some dimensions. */
static int scan(const struct sim_wl_opts *o, struct sim_events *e)
{
	enum { COLS = 16, DIMS = 4 };
	static const unsigned char cols[4][6] = { { 0, 1, 2, 99 }, { 3, 4, 5, 6, 99 }, { 0, 7, 8, 99 }, { 1, 9, 10, 11, 12, 99 } };
	static const unsigned char dims[4] = { 0x1, 0x3, 0xc, 0xe };
	uint64_t col = o->working_set * 9 / 10 / COLS, dim = o->working_set / 10 / DIMS;
	int rc = 0;
	for (unsigned i = 0; i < COLS + DIMS && !rc; i++)
		rc = sim_events_alloc(e, i, i < COLS ? col : dim);
	for (unsigned q = 0; q < passes(o, 13) && !rc; q++) {
		struct sim_range r[COLS + DIMS];
		unsigned n = 0, shape = q % 4;
		for (unsigned c = 0; cols[shape][c] != 99; c++)
			r[n++] = rng(cols[shape][c], 0, col, SIM_STREAM, col);
		for (unsigned d = 0; d < DIMS; d++) /* hash probes: scattered reads, ~1/8 of the table */
			if (dims[shape] >> d & 1)
				r[n++] = rng(COLS + d, 0, dim, SIM_RANDOM, dim / 8);
		rc = sim_events_launch(e, 0, n, r, 0);
	}
	for (unsigned i = 0; i < COLS + DIMS && !rc; i++)
		rc = sim_events_free(e, i);
	return rc;
}

/* Needleman-Wunsch-style anti-diagonal sweep: each launch touches ~1 KiB in
 * every 2 MiB region of two big arrays, and names the whole arrays because
 * the kernel gets only base pointers. */
static int wavefront(const struct sim_wl_opts *o, struct sim_events *e)
{
	uint64_t half = o->working_set / 2;
	uint64_t touched = (half + SIM_BLOCK - 1) / SIM_BLOCK * 1024;
	int rc = sim_events_alloc(e, 0, half);
	rc = rc ? rc : sim_events_alloc(e, 1, o->working_set - half);
	for (unsigned i = 0; i < passes(o, 64) && !rc; i++) {
		struct sim_range r[2] = { rng(0, 0, half, SIM_SPARSE, touched),
					  rng(1, 0, o->working_set - half, SIM_SPARSE, touched) };
		r[1].write = true;
		rc = sim_events_launch(e, 0, 2, r, 0);
	}
	rc = rc ? rc : sim_events_free(e, 0);
	return rc ? rc : sim_events_free(e, 1);
}

/*
 * The suite's Needleman-Wunsch (tools/bench/suite/nw.cu) as the driver sees
 * it: two (n+1)^2 int matrices, score and ref, filled in waves of 32x32
 * tiles, one launch per anti-diagonal of tiles. Tile (ti, tj) reads the row
 * above it and the column left of it in score, its 32x32 of ref, and writes
 * its 32x32 of score: 128-byte pieces of 33 rows at column tj * 32. The
 * matrices are row-major, so a launch's tiles ti in [lo, hi] lie in one
 * band of rows, [32 lo, 32 hi + 33), and the band of each matrix is what
 * the kernel reads: thin (about 2 KiB of each 2 MiB region of ref, 5 KiB of
 * score) and moving, growing from the top of both matrices to all of them
 * and shrinking to their bottom. The kernel gets only the two base
 * pointers and scalars (cols, wave, penalty), so the launch scan never sees
 * the band: `nw` models a scan that credits each pointer's whole
 * allocation, `nw-scalar` one that takes cols for an element count and
 * credits cols * 4 bytes, one region of each matrix. Touched bytes are
 * counted in the 32-byte sectors the GPU moves (a left-column int is a
 * sector of its own). The sweep runs three times over the same data, as
 * the suite runs it; the timed window (a mark) is the last run.
 */
enum { NW_TILE = 32, NW_SECTOR = 32, NW_PIECE = NW_TILE * 4, NW_RUNS = 3 };

/* One alignment: nw_init, then a launch per anti-diagonal of tiles. */
static int nw_run(const struct sim_wl_opts *o, struct sim_events *e, uint64_t dim, uint64_t guess)
{
	uint64_t row = dim * 4, size = dim * dim * 4, tiles = (dim - 1) / NW_TILE;
	/* nw_init: row 0 and column 0 of score, the column an int (a sector) in every row */
	struct sim_range init[2] = { rng(0, 0, size, SIM_PIECES, row + dim * NW_SECTOR), rng(0, 0, guess, SIM_STREAM, 0) };
	init[0].seen = SIM_SEEN_KERNEL;
	init[0].write = true;
	init[1].seen = SIM_SEEN_SCAN;
	int rc = sim_events_launch(e, 0, 2, init, 0);
	uint64_t waves = 2 * tiles - 1;
	if (o->passes && o->passes < waves)
		waves = o->passes;
	for (uint64_t w = 0; w < waves && !rc; w++) {
		uint64_t lo = w + 1 > tiles ? w + 1 - tiles : 0, hi = w < tiles - 1 ? w : tiles - 1, k = hi - lo + 1;
		uint64_t top = lo * NW_TILE * row, bottom = (hi * NW_TILE + NW_TILE + 1) * row;
		bottom = bottom > size ? size : bottom;
		/* per tile: score, the row above (a piece), the left column (32 sectors) and its 32 rows written; ref, its 32 rows */
		struct sim_range r[4] = {
			rng(0, top, bottom - top, SIM_PIECES, k * (NW_PIECE + NW_TILE * NW_SECTOR + NW_TILE * NW_PIECE)),
			rng(1, top + row, bottom - top - row, SIM_PIECES, k * NW_TILE * NW_PIECE),
			rng(0, 0, guess, SIM_STREAM, 0),
			rng(1, 0, guess, SIM_STREAM, 0),
		};
		r[0].write = true;
		r[0].seen = r[1].seen = SIM_SEEN_KERNEL;
		r[2].seen = r[3].seen = SIM_SEEN_SCAN;
		rc = sim_events_launch(e, 0, 4, r, 0);
	}
	return rc;
}

static int nw(const struct sim_wl_opts *o, struct sim_events *e, bool scalar)
{
	uint64_t n = (uint64_t)sqrt((double)o->working_set / 8.0);
	n = n > NW_TILE ? (n - 1) / NW_TILE * NW_TILE : NW_TILE;
	uint64_t dim = n + 1, size = dim * dim * 4;
	uint64_t guess = scalar ? dim * 4 : size; /* what the scan credits of each matrix */
	int rc = sim_events_alloc(e, 0, size);
	rc = rc ? rc : sim_events_alloc(e, 1, size);
	for (unsigned run = 0; run < NW_RUNS && !rc; run++) {
		if (run == NW_RUNS - 1)
			rc = sim_events_mark(e);
		rc = rc ? rc : nw_run(o, e, dim, guess);
	}
	rc = rc ? rc : sim_events_free(e, 0);
	return rc ? rc : sim_events_free(e, 1);
}

static int nw_whole(const struct sim_wl_opts *o, struct sim_events *e)
{
	return nw(o, e, false);
}

static int nw_scalar(const struct sim_wl_opts *o, struct sim_events *e)
{
	return nw(o, e, true);
}

/*
 * A training loop as the driver sees it under PyTorch (train_step.py):
 * each block's weights, gradients, AdamW's two moments (a quarter of its
 * state each) and its activations: the model made first, the rest as the
 * first step first uses it, each once, since the caching allocator keeps
 * what it frees and hands it out again the next step. A
 * step: the forward pass reads each block's weights and writes its
 * activations; the backward pass, last block first, reads weights and
 * activations and writes gradients; the optimizer reads the gradients and
 * reads and writes weights and moments. A byte of weights is used three
 * times a step, of gradients or activations twice, of a moment once: the
 * best fixed split keeps the first three and as much of the moments as fits.
 * The timed window is the steps after the first (passes, default 5 steps).
 */
enum { TRAIN_W, TRAIN_G, TRAIN_M, TRAIN_V, TRAIN_A, TRAIN_KINDS };

/* The training loop's sizes: per layer, a quarter of its state for each of W, G, M and V, and its activations. */
struct train_shape {
	unsigned layers;
	uint64_t quarter, act;
};

static uint64_t train_id(const struct train_shape *t, unsigned kind, unsigned layer)
{
	return (uint64_t)kind * t->layers + layer;
}

static uint64_t train_bytes(const struct train_shape *t, unsigned kind)
{
	return kind == TRAIN_A ? t->act : t->quarter;
}

/* A launch's use of one layer's allocation of a kind: streamed whole. */
static struct sim_range train_use(const struct train_shape *t, unsigned kind, unsigned layer, bool write)
{
	struct sim_range r = rng(train_id(t, kind, layer), 0, train_bytes(t, kind), SIM_STREAM, train_bytes(t, kind));
	r.write = write;
	return r;
}

/* The allocation made at its first use, in the first step; later steps find it kept. */
static int train_make(struct sim_events *e, const struct train_shape *t, unsigned step, unsigned kind, unsigned layer)
{
	return step ? 0 : sim_events_alloc(e, train_id(t, kind, layer), train_bytes(t, kind));
}

static int train(const struct sim_wl_opts *o, struct sim_events *e)
{
	struct train_shape t = { .layers = o->layers, .act = o->working_set / 16 / o->layers };
	t.quarter = (o->working_set / t.layers - t.act) / 4;
	int rc = 0;
	for (unsigned i = 0; i < t.layers && !rc; i++) /* the model; the rest is made as the first step first uses it */
		rc = sim_events_alloc(e, train_id(&t, TRAIN_W, i), t.quarter);
	for (unsigned step = 0; step < passes(o, 5) && !rc; step++) {
		if (step == 1)
			rc = sim_events_mark(e);
		for (unsigned i = 0; i < t.layers && !rc; i++) {
			struct sim_range r[2] = { train_use(&t, TRAIN_W, i, false), train_use(&t, TRAIN_A, i, true) };
			rc = train_make(e, &t, step, TRAIN_A, i);
			rc = rc ? rc : sim_events_launch(e, 0, 2, r, 0);
		}
		for (unsigned i = t.layers; i-- > 0 && !rc;) {
			struct sim_range r[3] = { train_use(&t, TRAIN_W, i, false), train_use(&t, TRAIN_A, i, false),
						  train_use(&t, TRAIN_G, i, true) };
			rc = train_make(e, &t, step, TRAIN_G, i);
			rc = rc ? rc : sim_events_launch(e, 0, 3, r, 0);
		}
		for (unsigned i = 0; i < t.layers && !rc; i++) {
			struct sim_range r[4] = { train_use(&t, TRAIN_G, i, false), train_use(&t, TRAIN_W, i, true),
						  train_use(&t, TRAIN_M, i, true), train_use(&t, TRAIN_V, i, true) };
			rc = train_make(e, &t, step, TRAIN_M, i);
			rc = rc ? rc : train_make(e, &t, step, TRAIN_V, i);
			rc = rc ? rc : sim_events_launch(e, 0, 4, r, 0);
		}
	}
	for (unsigned k = 0; k < TRAIN_KINDS * t.layers && !rc; k++)
		rc = sim_events_free(e, k);
	return rc;
}

static const struct {
	const char *name;
	int (*build)(const struct sim_wl_opts *, struct sim_events *);
} table[] = {
	{ "reread", reread }, { "strided", strided }, { "random", random_wl }, { "window", window },
	{ "phase", phase }, { "decode", decode }, { "scan", scan }, { "wavefront", wavefront },
	{ "nw", nw_whole }, { "nw-scalar", nw_scalar }, { "train", train },
};

const char *sim_workload_names(void)
{
	return "reread, strided, random, window, phase, decode, scan, wavefront, nw, nw-scalar, train";
}

int sim_workload_build(const char *name, const struct sim_wl_opts *o, struct sim_events *e, char *err, size_t errlen)
{
	if (o->working_set < SIM_BLOCK * 4) {
		snprintf(err, errlen, "--working-set: at least 8M (four 2 MiB blocks)");
		return -1;
	}
	if (o->layers == 0 || (uint64_t)o->layers * SIM_BLOCK > o->working_set) {
		snprintf(err, errlen, "--layers: expected 1 .. working set / 2M");
		return -1;
	}
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (!strcmp(table[i].name, name)) {
			if (table[i].build(o, e)) {
				snprintf(err, errlen, "out of memory building workload %s", name);
				return -1;
			}
			return 0;
		}
	snprintf(err, errlen, "unknown workload '%s' (expected one of: %s)", name, sim_workload_names());
	return -1;
}
