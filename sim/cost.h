/*
 * The cost model: how long things take on the simulated GPU, in virtual
 * time. Rates are from DESIGN.md's H200 measurements unless marked as
 * assumed; fixed per-call costs are fitted so that small and large calls
 * land on the measured rates.
 */
#ifndef EMBER_SIM_COST_H
#define EMBER_SIM_COST_H

/* Bytes per second. */
#define SIM_DEVICE_MEMORY_BPS 4.3e12   /* device memory, read kernel */
#define SIM_HOST_LINK_BPS 55.4e9       /* pinned copy host<->device */
#define SIM_MAPPED_BPS 51e9            /* GPU access to host memory through a mapping */
#define SIM_HOST_MEMCPY_BPS 20e9       /* host to host through the driver (assumed) */
/*
 * A GPU reading another GPU's memory over the peer link (assumed, not
 * measured: NVLink 4 between two H200s, one direction; over PCIe
 * peer-to-peer it would be near SIM_HOST_LINK_BPS). Issue 13 measures it
 * on the x2 machine.
 */
#define SIM_PEER_BPS 300e9

/* Prefetch to GPU: 2 MiB calls 16 GB/s, 64 MiB calls 44-47, one 2 GiB call 48.7. */
#define SIM_PROMOTE_BPS 48.7e9
#define SIM_PROMOTE_CALL_NS 88000
/*
 * Read-mostly advice + prefetch to GPU: a duplicate is made at about the
 * promotion's rate (ember-readmostly-probe, 4 GiB: 39.5-50.6 GB/s on the
 * H200, ab-34; 49.95 on an H100, ab-40's call 6). DESIGN.md's single
 * earlier run had 8.5.
 */
#define SIM_DUPLICATE_BPS 48e9
/*
 * A prefetch to the GPU over blocks already there walks them: 4 GiB in
 * 2.95 ms as one call on the H200 (promote-probe.json), 3.6 ms for
 * read-mostly duplicates on an H100 (ab-40's call 6).
 */
#define SIM_PREFETCH_RESIDENT_BPS 1.4e12
/*
 * A copy into memory under read-mostly advice: 4 GiB from pinned host
 * memory into a GPU-resident read-mostly array in 21.4 s on the H200,
 * against 0.084 s into plain memory (ember-readmostly-probe, ab-41's
 * call 1).
 */
#define SIM_READ_MOSTLY_WRITE_BPS 0.2e9
/* Prefetch to host (demotion), and eviction: 2 MiB calls 8-9.6 GB/s, 64 MiB calls 9.7. */
#define SIM_DEMOTE_BPS 10e9
#define SIM_DEMOTE_CALL_NS 25000

/* GPU faults on managed memory. */
#define SIM_FAULT_MIGRATE_BPS 10.2e9   /* default managed memory, first GPU pass */
#define SIM_FIRST_TOUCH_HOST_BPS 4.2e9 /* never-touched pages under CPU preference land on the host */
#define SIM_FAULT_MAP_BPS 0.79e9       /* per-4 KiB faults that re-map host pages: 128 MiB in 170 ms */
/* Never-touched pages populated on the GPU by faults (assumed: fault handling dominates). */
#define SIM_FAULT_POPULATE_BPS SIM_FAULT_MIGRATE_BPS

/* cuMemAdvise: 0.17 ms for a pair on one 2 MiB block, 127 ms for a pair over 4 GiB. */
#define SIM_ADVISE_CALL_NS 54000
#define SIM_ADVISE_BLOCK_NS 31000

/* Fixed costs (assumed). */
#define SIM_LAUNCH_NS 3000             /* a kernel, before its memory traffic */
#define SIM_COPY_CALL_NS 2000          /* a copy or memset, before its bytes */
#define SIM_POLL_NS 5000               /* a query that finds work still pending */

#endif
