/*
 * What the host can still give (shim/mech/host_memory.c), read from
 * stand-ins for /proc/meminfo and a cgroup v2 folder: the least of
 * MemAvailable and the cgroup's limit less its use, and "unknown" where
 * neither says. And how many threads the host's touches take
 * (touch_threads.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "host_memory.h"
#include "touch_threads.h"

static const uint64_t MiB = 1 << 20;

static char dir[] = "/tmp/ember-host-memory-XXXXXX";
static char meminfo[sizeof dir + 16], cgroup[sizeof dir + 16];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(meminfo, sizeof meminfo, "%s/meminfo", dir);
	snprintf(cgroup, sizeof cgroup, "%s/cg", dir);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", cgroup);
	cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
}

TestSuite(host_memory, .init = setup, .fini = teardown);

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void write_in_cgroup(const char *name, const char *text)
{
	char path[sizeof cgroup + 32];
	snprintf(path, sizeof path, "%s/%s", cgroup, name);
	write_file(path, text);
}

Test(host_memory, mem_available_in_bytes)
{
	write_file(meminfo, "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n");
	cr_expect_eq(ember_host_memory_available(meminfo, NULL), 20000000ull * 1024);
}

Test(host_memory, a_cgroup_limit_below_it_wins)
{
	write_file(meminfo, "MemAvailable:   20000000 kB\n");
	write_in_cgroup("memory.max", "8589934592\n");
	write_in_cgroup("memory.current", "6442450944\n");
	cr_expect_eq(ember_host_memory_available(meminfo, cgroup), 2ull << 30, "8 GiB less the 6 in use");
}

Test(host_memory, a_cgroup_past_its_limit_can_give_nothing)
{
	write_file(meminfo, "MemAvailable:   20000000 kB\n");
	write_in_cgroup("memory.max", "1000\n");
	write_in_cgroup("memory.current", "5000\n");
	cr_expect_eq(ember_host_memory_available(meminfo, cgroup), 0);
}

Test(host_memory, a_cgroup_without_a_limit_leaves_mem_available)
{
	write_file(meminfo, "MemAvailable:   100 kB\n");
	write_in_cgroup("memory.max", "max\n");
	write_in_cgroup("memory.current", "5000\n");
	cr_expect_eq(ember_host_memory_available(meminfo, cgroup), 100 * 1024);
}

Test(host_memory, neither_saying_is_unknown)
{
	cr_expect_eq(ember_host_memory_available(meminfo, cgroup), UINT64_MAX, "no files");
	write_file(meminfo, "MemTotal: 5 kB\n");
	write_in_cgroup("memory.max", "lots\n");
	write_in_cgroup("memory.current", "5000\n");
	cr_expect_eq(ember_host_memory_available(meminfo, cgroup), UINT64_MAX, "no MemAvailable, a malformed limit");
	cr_expect_eq(ember_host_memory_available(NULL, NULL), UINT64_MAX);
}

Test(host_memory, this_process_reads_something)
{
	uint64_t now = ember_host_memory_available_now();
	cr_expect_gt(now, 0, "a machine running this test has memory to give");
}

/* The host's touches' allowance: half of what the host could give at the first touch, and of what it can give now. */
Test(host_memory, the_allowance_is_half_of_what_the_first_touch_found)
{
	struct ember_host_allowance al = { 0 };
	cr_expect(ember_host_allowance_take(&al, 3 << 20, 10 << 20), "3 MiB of the first 5");
	cr_expect(!ember_host_allowance_take(&al, 3 << 20, 10 << 20), "2 MiB left: 3 more refused");
	cr_expect(ember_host_allowance_take(&al, 2 << 20, 100 << 20), "the rest, though the host could now give more");
	cr_expect(!ember_host_allowance_take(&al, 1, 100 << 20), "nothing left");
}

Test(host_memory, a_free_gives_its_touches_back)
{
	struct ember_host_allowance al = { 0 };
	cr_assert(ember_host_allowance_take(&al, 4 << 20, 8 << 20));
	cr_expect(!ember_host_allowance_take(&al, 1 << 20, 8 << 20));
	ember_host_allowance_give(&al, 4 << 20);
	cr_expect(ember_host_allowance_take(&al, 4 << 20, 8 << 20), "the freed allocation's 4 MiB again");
}

Test(host_memory, never_more_than_half_of_what_the_host_can_give_now)
{
	struct ember_host_allowance al = { 0 };
	cr_assert(ember_host_allowance_take(&al, 1 << 20, 100 << 20));
	cr_expect(!ember_host_allowance_take(&al, 6 << 20, 10 << 20), "within the allowance, past half of the 10 MiB now");
	cr_expect(ember_host_allowance_take(&al, 5 << 20, 10 << 20));
}

Test(host_memory, unknown_memory_limits_nothing)
{
	struct ember_host_allowance al = { 0 };
	cr_expect(ember_host_allowance_take(&al, 1ull << 40, UINT64_MAX), "neither meminfo nor a cgroup said");
}

/* How many threads the host's touches take (touch_threads.h). */
Test(touch_threads, one_thread_below_four_regions)
{
	cr_expect_eq(ember_touch_threads(0, 16), 1);
	cr_expect_eq(ember_touch_threads(8 * MiB - 1, 16), 1);
}

Test(touch_threads, a_weight_of_50_mib_takes_half_the_machine)
{
	cr_expect_eq(ember_touch_threads(8 * MiB, 16), 4, "four regions, four threads");
	cr_expect_eq(ember_touch_threads(50 * MiB, 16), 8, "hf-llama 13b's attention weights: eight threads");
	cr_expect_eq(ember_touch_threads(50 * MiB, 6), 3, "half of six processors");
	cr_expect_eq(ember_touch_threads(50 * MiB, 64), 8, "at most eight");
	cr_expect_eq(ember_touch_threads(50 * MiB, 1), 1, "one processor, the calling thread alone");
	cr_expect_eq(ember_touch_threads(9 * MiB, 16), 5, "a partial region is a region to take");
}

/* The pool's size: a count of regions rounded up must not wrap (it once gave no thread at all). */
Test(touch_threads, the_background_pool_takes_half_the_machine)
{
	cr_expect_eq(ember_touch_threads(UINT64_MAX, 16), 8);
	cr_expect_eq(ember_touch_pool_threads(16), 8);
	cr_expect_eq(ember_touch_pool_threads(6), 3);
	cr_expect_eq(ember_touch_pool_threads(1), 1);
}
