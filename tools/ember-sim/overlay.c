/* A recorded run's launches given the reads of a model of the same program (overlay.h). */
#include "overlay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t launches(const struct sim_events *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->n; i++)
		n += e->ev[i].kind == SIM_EV_LAUNCH;
	return n;
}

/* Whether the trace's allocation id has this size (ids number allocations in order in both). */
static bool allocated(const struct sim_events *trace, uint64_t id, uint64_t size)
{
	for (size_t i = 0; i < trace->n; i++)
		if (trace->ev[i].kind == SIM_EV_ALLOC && trace->ev[i].id == id)
			return trace->ev[i].size == size;
	return false;
}

int sim_overlay_reads(struct sim_events *trace, const struct sim_events *model, char *err, size_t errlen)
{
	size_t want = launches(model), have = launches(trace);
	if (want != have) {
		snprintf(err, errlen, "the model has %zu launches, the trace %zu: not the same program or size", want, have);
		return -1;
	}
	for (size_t i = 0; i < model->n; i++)
		if (model->ev[i].kind == SIM_EV_ALLOC && !allocated(trace, model->ev[i].id, model->ev[i].size)) {
			snprintf(err, errlen, "the model's allocation %" PRIu64 " (%" PRIu64 " bytes) is not the trace's",
				 model->ev[i].id, model->ev[i].size);
			return -1;
		}
	/* every copy first, so that a failure leaves the trace as it was */
	struct sim_range **copies = calloc(want ? want : 1, sizeof *copies);
	if (!copies)
		goto oom;
	size_t k = 0;
	for (size_t i = 0; i < model->n; i++) {
		const struct sim_launch *l = &model->ev[i].launch;
		if (model->ev[i].kind != SIM_EV_LAUNCH)
			continue;
		copies[k] = malloc((l->n ? l->n : 1) * sizeof **copies);
		if (!copies[k])
			goto undo;
		memcpy(copies[k++], l->ranges, l->n * sizeof **copies);
	}
	k = 0;
	for (size_t i = 0, j = 0; i < trace->n; i++) {
		struct sim_launch *l = &trace->ev[i].launch;
		if (trace->ev[i].kind != SIM_EV_LAUNCH)
			continue;
		while (model->ev[j].kind != SIM_EV_LAUNCH)
			j++;
		free((void *)l->ranges);
		l->ranges = copies[k++];
		l->n = model->ev[j].launch.n;
		l->compute_ns = model->ev[j++].launch.compute_ns;
	}
	free(copies);
	return 0;
undo:
	while (k)
		free(copies[--k]);
	free(copies);
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}
