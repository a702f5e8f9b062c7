/* Driver errors on demand, by entry point, for the tests of what Ember gives up. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

enum { MAX_INJECTIONS = 16, NAME_MAX_LEN = 48 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[NAME_MAX_LEN];
	unsigned skip, count;
	CUresult result;
} table[MAX_INJECTIONS];

EMBER_SIM_API void ember_sim_fail_call(const char *name, unsigned skip, unsigned count, CUresult result)
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
	}
	pthread_mutex_unlock(&lock);
}

CUresult sim_injected(const char *name)
{
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_INJECTIONS; i++) {
		if (strcmp(table[i].name, name) != 0)
			continue;
		if (table[i].skip) {
			table[i].skip--;
		} else if (table[i].count) {
			r = table[i].result;
			if (--table[i].count == 0)
				table[i].name[0] = 0;
		}
		break;
	}
	pthread_mutex_unlock(&lock);
	return r;
}
