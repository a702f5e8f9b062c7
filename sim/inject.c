/* Driver errors and slow calls on demand, by entry point, for the tests of what Ember gives up or reports. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim.h"

enum { MAX_INJECTIONS = 16, NAME_MAX_LEN = 48 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[NAME_MAX_LEN];
	unsigned skip, count;
	CUresult result;
	uint64_t delay_ns; /* the call succeeds after this long, instead of failing */
} table[MAX_INJECTIONS];

static void put(const char *name, unsigned skip, unsigned count, CUresult result, uint64_t delay_ns)
{
	if (!name || strlen(name) >= NAME_MAX_LEN)
		return;
	pthread_mutex_lock(&lock);
	int slot = -1;
	for (int i = 0; i < MAX_INJECTIONS; i++)
		if (!strcmp(table[i].name, name) || (slot < 0 && !table[i].name[0]))
			slot = i;
	if (slot >= 0) {
		snprintf(table[slot].name, NAME_MAX_LEN, "%s", count ? name : "");
		table[slot].skip = skip;
		table[slot].count = count;
		table[slot].result = result;
		table[slot].delay_ns = delay_ns;
	}
	pthread_mutex_unlock(&lock);
}

EMBER_SIM_API void ember_sim_fail_call(const char *name, unsigned skip, unsigned count, CUresult result)
{
	put(name, skip, count, result, 0);
}

EMBER_SIM_API void ember_sim_slow_call(const char *name, unsigned skip, unsigned count, uint64_t delay_ns)
{
	put(name, skip, count, CUDA_SUCCESS, delay_ns);
}

CUresult sim_injected(const char *name)
{
	CUresult r = CUDA_SUCCESS;
	uint64_t delay_ns = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_INJECTIONS; i++) {
		if (strcmp(table[i].name, name) != 0)
			continue;
		if (table[i].skip) {
			table[i].skip--;
		} else if (table[i].count) {
			r = table[i].result;
			delay_ns = table[i].delay_ns;
			if (--table[i].count == 0)
				table[i].name[0] = 0;
		}
		break;
	}
	pthread_mutex_unlock(&lock);
	if (delay_ns) { /* outside the lock: other threads' calls go on meanwhile, as the driver's would */
		struct timespec ts = { (time_t)(delay_ns / 1000000000u), (long)(delay_ns % 1000000000u) };
		nanosleep(&ts, NULL);
	}
	return r;
}
