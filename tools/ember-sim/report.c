/* Result rows. JSON field names are a contract with scripts (plot.py, the
 * tests): add fields, do not rename them. */
#include "report.h"

void sim_report_header(FILE *out, bool sweep)
{
	if (sweep)
		fprintf(out, "%-6s ", "ratio");
	fprintf(out, "%-10s %-9s %-8s %-15s %12s %12s %12s %12s %10s %12s\n", "workload", "working", "budget",
		"variant", "time_s", "promoted", "demoted", "faults", "evictions", "evicted");
}

void sim_report_row(FILE *out, const struct sim_row *w, bool json, bool sweep)
{
	const struct sim_counts *c = &w->r->c;
	double ratio = (double)w->working_set / (double)w->budget;
	if (json) {
		fprintf(out, "{\"workload\":\"%s\",\"working_set\":%llu,\"budget\":%llu,\"variant\":\"%s\","
			"\"sim_seconds\":%.9g,\"bytes_promoted\":%llu,\"bytes_demoted\":%llu,\"faults\":%llu,"
			"\"evictions\":%llu,\"bytes_evicted\":%llu,\"migrations\":%llu,\"launches\":%llu,\"ratio\":%.4g,"
			"\"window_seconds\":%.9g,\"notifications\":%llu,\"credited\":%llu",
			w->workload, (unsigned long long)w->working_set, (unsigned long long)w->budget, w->variant,
			w->r->seconds, (unsigned long long)c->bytes_promoted, (unsigned long long)c->bytes_demoted,
			(unsigned long long)c->faults, (unsigned long long)c->evictions,
			(unsigned long long)c->bytes_evicted, (unsigned long long)c->migrations,
			(unsigned long long)w->r->launches, ratio, w->r->window_seconds,
			(unsigned long long)c->notifications, (unsigned long long)c->credited);
		if (c->notifications) /* with the counter model only: the other rows stay as they were */
			fprintf(out, ",\"repeats\":%llu,\"withheld\":%llu", (unsigned long long)c->repeats,
				(unsigned long long)c->withheld);
		if (w->trace_skipped >= 0)
			fprintf(out, ",\"trace_skipped\":%lld", w->trace_skipped);
		if (c->gpus) /* the peer variants only: the other rows stay as they were */
			fprintf(out, ",\"gpus\":%u,\"bytes_on_peers\":%llu,\"peer_pushed_out\":%llu", c->gpus,
				(unsigned long long)c->bytes_on_peers, (unsigned long long)c->peer_pushed_out);
		fprintf(out, "}\n");
		return;
	}
	char ws[16], b[16], pr[16], de[16], ev[16];
	sim_format_size(w->working_set, ws, sizeof ws);
	sim_format_size(w->budget, b, sizeof b);
	sim_format_size(c->bytes_promoted, pr, sizeof pr);
	sim_format_size(c->bytes_demoted, de, sizeof de);
	sim_format_size(c->bytes_evicted, ev, sizeof ev);
	if (sweep)
		fprintf(out, "%-6.3g ", ratio);
	fprintf(out, "%-10s %-9s %-8s %-15s %12.4f %12s %12s %12llu %10llu %12s\n", w->workload, ws, b, w->variant,
		w->r->seconds, pr, de, (unsigned long long)c->faults, (unsigned long long)c->evictions, ev);
}
