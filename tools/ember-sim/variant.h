/* The placement-variant interface: the engine replays events against one of
 * these, and every policy (stock UVM, mapped, Ember's) implements it. */
#ifndef EMBER_SIM_VARIANT_H
#define EMBER_SIM_VARIANT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum sim_tier {
	SIM_TIER_DEVICE,
	SIM_TIER_MAPPED,
	SIM_TIER_FAULT, /* not present on the GPU, access faults (stock UVM) */
	SIM_TIER_PEER,  /* on a peer GPU, read over the peer link (the peer tier, variants *-peer) */
};
/* SIM_PIECES: 128-byte pieces (a tile's rows) scattered over the range, costed at the sparse probe's rates */
enum sim_pattern { SIM_STREAM, SIM_STRIDED, SIM_RANDOM, SIM_SPARSE, SIM_PIECES };

/*
 * Who sees a range: by default both the kernel (it reads the range) and the
 * launch scan (it guesses the range from the launch's arguments). A kernel
 * passed only base pointers and scalars reads ranges the scan cannot bound
 * (SIM_SEEN_KERNEL) while the scan credits a guess that the kernel may not
 * read at all (SIM_SEEN_SCAN): the whole allocation, or one region where it
 * takes a scalar for a count.
 */
enum sim_seen { SIM_SEEN_BOTH, SIM_SEEN_KERNEL, SIM_SEEN_SCAN };

struct sim_range {
	uint64_t alloc_id, offset, bytes;
	enum sim_pattern pattern;
	uint64_t touched; /* bytes the kernel actually reads in the range; == bytes for streaming */
	bool write;
	enum sim_seen seen; /* SIM_SEEN_BOTH unless a workload says otherwise */
};

/* A range one argument of a traced launch covered, for launch order (launch_order.h). */
struct sim_follow {
	unsigned arg;
	uint64_t alloc_id, offset, bytes;
};

struct sim_launch {
	uint64_t stream;
	unsigned n;
	const struct sim_range *ranges;
	double compute_ns; /* work other than memory */
	uint64_t kernel;   /* a trace's kernel number; meaningful only with nfollow > 0 */
	unsigned nfollow;  /* ranges launch order follows (a trace of version 2), by argument */
	const struct sim_follow *follow;
};

/* An allocation made as plain device memory and converted to managed (EMBER_MANAGE_ALL). */
#define SIM_ALLOC_CONVERTED 1u

struct sim_counts {
	uint64_t bytes_promoted, bytes_demoted, faults, evictions, bytes_evicted, migrations, notifications;
	uint64_t credited; /* notifications the shim's reader credited */
	uint64_t repeats;  /* notifications it took that added nothing: their regions had their launch's worth, or were not mapped */
	uint64_t withheld; /* the launch scan's credits to mapped regions it withheld, the counters not confirming them */
	unsigned gpus;           /* 2 for the peer variants (a second, idle GPU), else 0: one */
	uint64_t bytes_on_peers; /* the peer tier: bytes placed on the second GPU, in all */
	uint64_t peer_pushed_out; /* the peer tier: of those, bytes its own demand sent back (none in a one-GPU trace) */
};

/* --launches: when a trace's launches run against its host's recorded pace. */
enum sim_launches {
	SIM_LAUNCHES_SYNC,     /* each once the one before has ended (replay.c) */
	SIM_LAUNCHES_ASYNC,    /* issued at the host's pace, ahead of its GPU (replay_async.c) */
	SIM_LAUNCHES_RECORDED, /* every event on the trace's own clock (replay_recorded.c) */
};

struct sim_env {
	const struct sim_profile *profile;
	uint64_t budget;
	uint64_t seed;
	const char *params; /* "key=value,key=value" overrides, may be NULL */
	unsigned high_pct, low_pct; /* a trace's recorded watermarks (0: the shim's defaults); params override */
	enum sim_launches launches; /* --launches: how a trace's launches meet its host's pace */
	FILE *moves;                /* --moves: Ember's variants write each move there, as a trace's M line; may be NULL */
};

struct sim_variant {
	const char *name;
	void *(*start)(const struct sim_env *env);
	/* Returns the time the allocating thread spends in it (advice, population), in ns. */
	uint64_t (*alloc)(void *v, uint64_t id, uint64_t size, unsigned flags, uint64_t now);
	void (*free)(void *v, uint64_t id, uint64_t now);
	/* Before launch l is issued at now: returns the virtual time it may start (>= now): promotions it waits for, fault service is NOT here */
	uint64_t (*before_launch)(void *v, const struct sim_launch *l, uint64_t now);
	/*
	 * Optional: the host's part of before_launch alone, for a replay whose
	 * host issues launches ahead of its GPU (--launches async): the
	 * policy's decisions at the launch call, at the host's time now.
	 * Returns when what the launch waits for is ready (>= now). Such a
	 * replay then calls advance, not before_launch, at the kernel's start,
	 * and no after_launch. A variant without it has no host part: its
	 * before_launch and after_launch run at the kernel's start and end.
	 */
	uint64_t (*issue)(void *v, const struct sim_launch *l, uint64_t now);
	/* The cost in ns of the launch's read/write of `bytes` of block `block` (2 MiB index) of allocation id, `touched` of them actually read, with pattern; updates the variant's state (stock UVM faults/migrates/evicts here) */
	double (*access)(void *v, uint64_t id, uint64_t block, uint64_t bytes, uint64_t touched, enum sim_pattern pat, bool write, uint64_t now);
	void (*after_launch)(void *v, const struct sim_launch *l, uint64_t end);
	void (*advance)(void *v, uint64_t now);  /* timers: lets a policy run its periodic passes up to now */
	void (*counts)(void *v, struct sim_counts *out);
	void (*finish)(void *v);
	/* Added: plain device memory allocated (bytes > 0) or freed (< 0); it
	 * takes device memory from the managed data. May be NULL. */
	void (*plain)(void *v, int64_t bytes, uint64_t now);
	/* Added: a host phase was declared at now (a trace's Q line); seen: while it lasted. May be NULL. */
	void (*host_phase)(void *v, uint32_t phase, bool seen, uint64_t now);
	/* Added: where block `block` of allocation id is now, for the engine's
	 * per-launch costs. May be NULL (then no such cost is charged). */
	enum sim_tier (*tier_of)(void *v, uint64_t id, uint64_t block);
};

/* shared cost helper every variant uses for a tier */
double sim_read_cost(const struct sim_profile *p, enum sim_tier t, uint64_t bytes, uint64_t touched, enum sim_pattern pat);

/* The registry (variants.c). */
extern const struct sim_variant sim_variant_uvm, sim_variant_uvm_noprefetch, sim_variant_prefetch,
	sim_variant_mapped, sim_variant_static, sim_variant_adaptive, sim_variant_resident, sim_variant_static_peer,
	sim_variant_adaptive_peer;
const struct sim_variant *sim_variant_find(const char *name);
/* NULL-terminated: the variants `--variant all` runs. */
extern const struct sim_variant *const sim_variants_all[];
/* Every registered name, for --help and error messages. */
extern const struct sim_variant *const sim_variants_known[];

/* "key=value,key=value": the value of key, copied into buf; 0 if absent. */
int sim_param_get(const char *params, const char *key, char *buf, unsigned len);
double sim_param_double(const char *params, const char *key, double dflt);

#endif
