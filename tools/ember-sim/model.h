/* The tier model: block geometry, the calibration profile and the cost of a
 * read on each tier. Everything here is pure arithmetic on virtual time. */
#ifndef EMBER_SIM_MODEL_H
#define EMBER_SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_BLOCK (2ull << 20)          /* a VA block: the unit of placement */
#define SIM_PAGE (64ull << 10)          /* a big page: a leaf of the prefetch tree */
#define SIM_PAGES_PER_BLOCK 32u         /* SIM_BLOCK / SIM_PAGE: fits one uint32 bitmap */
#define SIM_SMALL_PAGE (4ull << 10)     /* the host page a GPU fault names on x86 */
#define SIM_GIB (1ull << 30)

/* Every cost the simulator charges comes from one of these. */
struct sim_profile {
	double device_read_gbps;            /* streaming read of device memory */
	double mapped_read_gbps;            /* streaming read of mapped host memory */
	double mapped_sparse_reads_per_s;   /* random 4-byte reads of mapped memory */
	double resident_sparse_reads_per_s; /* random 4-byte reads of device memory */
	double mapped_sparse_block_us;      /* latency per 2 MiB block a sparse access touches, mapped */
	double mapped_piece_gbps;           /* 128-byte pieces scattered over mapped memory */
	double resident_piece_gbps;         /* the same in device memory */
	double resident_sparse_block_us;    /* the same, device-resident */
	double promote_gbps;                /* prefetch to GPU, bulk */
	double promote_call_us;             /* fixed cost of one prefetch-to-GPU call */
	double demote_gbps;                 /* prefetch to host, and eviction write-back */
	double demote_call_us;              /* fixed cost of one prefetch-to-host call */
	double advise_ms_per_gib;           /* advice pair, per GiB of range */
	double advise_call_us;              /* advice pair, fixed cost per call */
	double fault_batch_us;              /* servicing one batch of GPU faults */
	double fault_batch_pages;           /* fault events (4 KiB pages) per batch */
	double fault_migrate_gbps;          /* migration on the fault path */
	double first_touch_gbps;            /* GPU first touch of never-touched pages, CPU preferred */
	double launch_us;                   /* kernel launch floor */
	double mapped_small_launch_us;      /* a launch touching a small mapped range: latency-bound */
	double mapped_small_mib;            /* what "small" is: ranges below this many MiB */
	double vram_gib;                    /* the card's memory (informational; --budget rules) */
	double peer_read_gbps;              /* streaming read of another GPU's memory over the peer link (assumed) */
};


void sim_profile_default(struct sim_profile *p);
/* Loads key = value lines over the current values; on error writes one line
 * to err (naming the key and accepted form) and returns -1. */
int sim_profile_load(struct sim_profile *p, const char *path, char *err, size_t errlen);
int sim_profile_set(struct sim_profile *p, const char *key, const char *val, char *err, size_t errlen);
void sim_profile_print(const struct sim_profile *p, FILE *out);

/* Bulk transfer costs in ns: `calls` driver calls moving `bytes` in all. */
double sim_promote_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls);
double sim_demote_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls);
double sim_advise_cost(const struct sim_profile *p, uint64_t bytes, uint64_t calls);

/* Element sizes a pattern reads in: what turns touched bytes into reads. */
#define SIM_RANDOM_ELEM 4u
#define SIM_STRIDED_ELEM 32u            /* one sector per strided element */
#define SIM_PIECE_ELEM 128u             /* a piece: one tile row of 32 ints */

/* Grow the zero-filled array *array of *n elements of elem bytes, by doubling, until index fits. */
bool sim_grow_to(void *array, uint64_t *n, uint64_t index, size_t elem);

/* Sizes: "24G", "1T", "512M", "4096", "1.5G"; K M G T are binary. */
int sim_parse_size(const char *s, uint64_t *out);
void sim_format_size(uint64_t bytes, char *buf, size_t len);

#endif
