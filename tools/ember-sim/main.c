/* ember-sim: replays a workload or a recorded trace against placement
 * variants in virtual time. Bad input: one line on stderr and exit 2. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gathers.h"
#include "gzfile.h"
#include "lookups.h"
#include "overlay.h"
#include "report.h"
#include "rows.h"
#include "trace.h"
#include "workloads.h"

#ifndef EMBER_SIM_PLOT_PY
#define EMBER_SIM_PLOT_PY "plot.py"
#endif

static const double sweep_ratios[] = { 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0 };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ember-sim [options]\n"
		"Simulates GPU managed memory placement in virtual time: device memory and host\n"
		"memory joined by an interconnect, 2 MiB blocks of 64 KiB pages, costs from a\n"
		"calibration profile (built in: an H200 on PCIe Gen5).\n"
		"\n"
		"  --workload W         built-in workload: %s (default reread)\n"
		"  --working-set SIZE   bytes the workload allocates (default 24G); sizes take K M G T\n"
		"  --budget SIZE        device memory the variants may use; for stock UVM this is the\n"
		"                       VRAM (default: a trace's D line, else 16G)\n"
		"  --variant V|all      uvm, uvm-noprefetch, prefetch, mapped, static, adaptive,\n"
		"                       resident (everything on the GPU, nothing moved),\n"
		"                       static-peer, adaptive-peer (a second, idle GPU: the peer\n"
		"                       tier; --param peer_budget_gib=N, default --budget), a comma\n"
		"                       list, or all (= uvm,prefetch,mapped,static,adaptive; default)\n"
		"  --trace FILE         replay an EMBER_TRACE file instead of a workload\n"
		"  --kernel-reads W     with --trace: the launches read what built-in workload W\n"
		"                       reads (the same program, modelled), where the trace\n"
		"                       names only what the launch scan credited: nw, nw-scalar,\n"
		"                       star (the suite's star.cu: each table beside the fact\n"
		"                       columns read once a row, at random), moe (a Mixtral\n"
		"                       layer's expert gathers read 2 of 8 experts, at random),\n"
		"                       or pathfinder (the suite's: a launch reads one row)\n"
		"  --launches sync|async|recorded\n"
		"                       with --trace: sync (default) issues each launch once the\n"
		"                       one before has ended; async issues them at the host's\n"
		"                       recorded pace, ahead of the GPU, which runs them in turn\n"
		"                       (a trace that records its waits; others replay sync);\n"
		"                       recorded replays every event at its recorded time, the\n"
		"                       kernels taking the recorded run's time: what Ember's\n"
		"                       policy decides on the GPU's own timeline (with --moves),\n"
		"                       not how long a run takes (static and adaptive only)\n"
		"  --moves FILE         Ember's variants write each move they make to FILE, as a\n"
		"                       trace's M lines (time id first count P|D), after a\n"
		"                       '# variant' line: to set beside what a trace recorded;\n"
		"                       adaptive adds R lines (time, then why regions gave way\n"
		"                       since the last: the shim's EMBER_LOG=debug note)\n"
		"  --json               one JSON object per variant per line\n"
		"  --sweep              run working sets of 0.25x .. 4x the budget and print them\n"
		"  --plot OUT.png       the sweep, plotted as time against working set / budget\n"
		"                       (python3 with matplotlib; plot.py beside the sources)\n"
		"  --profile FILE       load a calibration profile (key = value lines, # comments)\n"
		"  --print-profile      print the active profile and exit\n"
		"  --param key=value    a variant parameter (repeatable), passed to every variant\n"
		"  --seed N             random seed (default 1)\n"
		"workload options:\n"
		"  --passes N           launches (reread 8, strided 8, random 32, window 32, phase 16,\n"
		"                       scan 13 queries, wavefront 64 diagonals, train 5 steps; nw and\n"
		"                       nw-scalar: every anti-diagonal of tiles unless given)\n"
		"  --stride SIZE        strided: bytes between 32 B elements (default 16K)\n"
		"  --reads N            random: 4-byte reads per 2 MiB block per launch (default 16)\n"
		"  --drift PCT          window: window movement per launch, %% of the window (default 5)\n"
		"  --tokens N           decode: tokens generated (default 8)\n"
		"  --layers N           decode and train: layers (default 32)\n"
		"  --help               this text\n"
		"Exit status: 0 done, 1 a run or the plot failed, 2 bad input.\n",
		sim_workload_names());
}

static _Noreturn void bad(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ember-sim: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see ember-sim --help)\n");
	va_end(ap);
	exit(2);
}

static uint64_t size_arg(const char *opt, const char *v)
{
	uint64_t b;
	if (sim_parse_size(v, &b) || !b)
		bad("%s: bad size '%s' (expected a positive number with an optional K, M, G or T suffix, e.g. 24G)", opt, v);
	return b;
}

static uint64_t uint_arg(const char *opt, const char *v, uint64_t lo, uint64_t hi)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (!*v || *v == '-' || *end || errno || n < lo || n > hi)
		bad("%s: bad value '%s' (expected an integer from %llu to %llu)", opt, v, (unsigned long long)lo,
		    (unsigned long long)hi);
	return n;
}

struct opts {
	const char *workload, *variant, *trace, *plot, *profile, *kernel_reads, *moves;
	uint64_t budget;
	bool json, sweep, print_profile;
	char params[1024];
	unsigned recorded_high_pct, recorded_low_pct; /* a trace's watermarks (sim_env's) */
	enum sim_launches launches;                   /* --launches */
	const char *launches_name;                    /* as given, for messages */
	FILE *moves_file;                             /* --moves, open */
	struct sim_wl_opts wl;
};

static void parse(int argc, char **argv, struct opts *o)
{
	enum { O_WS = 256, O_BUDGET, O_VARIANT, O_JSON, O_PLOT, O_SWEEP, O_PROFILE, O_PRINT, O_PARAM, O_SEED,
	       O_TRACE, O_PASSES, O_DRIFT, O_TOKENS, O_LAYERS, O_STRIDE, O_READS, O_HELP, O_WL, O_KREADS,
	       O_LAUNCHES, O_MOVES };
	static const struct option lo[] = {
		{ "workload", 1, 0, O_WL }, { "working-set", 1, 0, O_WS }, { "budget", 1, 0, O_BUDGET },
		{ "variant", 1, 0, O_VARIANT }, { "json", 0, 0, O_JSON }, { "plot", 1, 0, O_PLOT },
		{ "sweep", 0, 0, O_SWEEP }, { "profile", 1, 0, O_PROFILE }, { "print-profile", 0, 0, O_PRINT },
		{ "param", 1, 0, O_PARAM }, { "seed", 1, 0, O_SEED }, { "trace", 1, 0, O_TRACE },
		{ "passes", 1, 0, O_PASSES }, { "drift", 1, 0, O_DRIFT }, { "tokens", 1, 0, O_TOKENS },
		{ "layers", 1, 0, O_LAYERS }, { "stride", 1, 0, O_STRIDE }, { "reads", 1, 0, O_READS },
		{ "kernel-reads", 1, 0, O_KREADS }, { "launches", 1, 0, O_LAUNCHES }, { "moves", 1, 0, O_MOVES },
		{ "help", 0, 0, O_HELP },
		{ 0, 0, 0, 0 },
	};
	memset(o, 0, sizeof *o);
	o->workload = "reread";
	o->variant = "all";
	sim_wl_defaults(&o->wl);
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_WL: o->workload = optarg; break;
		case O_WS: o->wl.working_set = size_arg("--working-set", optarg); break;
		case O_BUDGET: o->budget = size_arg("--budget", optarg); break;
		case O_VARIANT: o->variant = optarg; break;
		case O_JSON: o->json = true; break;
		case O_PLOT: o->plot = optarg; break;
		case O_SWEEP: o->sweep = true; break;
		case O_PROFILE: o->profile = optarg; break;
		case O_PRINT: o->print_profile = true; break;
		case O_PARAM:
			if (!strchr(optarg, '=') || *optarg == '=' || strchr(optarg, ','))
				bad("--param: bad value '%s' (expected key=value)", optarg);
			if (strlen(o->params) + strlen(optarg) + 2 > sizeof o->params)
				bad("--param: too many parameters");
			if (*o->params)
				strcat(o->params, ",");
			strcat(o->params, optarg);
			break;
		case O_SEED: o->wl.seed = uint_arg("--seed", optarg, 0, UINT64_MAX); break;
		case O_TRACE: o->trace = optarg; break;
		case O_KREADS: o->kernel_reads = optarg; break;
		case O_MOVES: o->moves = optarg; break;
		case O_LAUNCHES:
			if (strcmp(optarg, "sync") && strcmp(optarg, "async") && strcmp(optarg, "recorded"))
				bad("--launches: bad value '%s' (expected sync, async or recorded)", optarg);
			o->launches = !strcmp(optarg, "async")    ? SIM_LAUNCHES_ASYNC :
				      !strcmp(optarg, "recorded") ? SIM_LAUNCHES_RECORDED :
								    SIM_LAUNCHES_SYNC;
			o->launches_name = optarg;
			break;
		case O_PASSES: o->wl.passes = (unsigned)uint_arg("--passes", optarg, 1, 1000000); break;
		case O_DRIFT: o->wl.drift_pct = (double)uint_arg("--drift", optarg, 0, 100); break;
		case O_TOKENS: o->wl.tokens = (unsigned)uint_arg("--tokens", optarg, 1, 1000000); break;
		case O_LAYERS: o->wl.layers = (unsigned)uint_arg("--layers", optarg, 1, 100000); break;
		case O_STRIDE:
			o->wl.stride = size_arg("--stride", optarg);
			if (o->wl.stride < SIM_STRIDED_ELEM)
				bad("--stride: bad value '%s' (expected at least 32)", optarg);
			break;
		case O_READS: o->wl.reads = (unsigned)uint_arg("--reads", optarg, 1, 1u << 20); break;
		case O_HELP:
		case 'h': usage(stdout); exit(0);
		case ':': bad("%s needs a value", argv[optind - 1]);
		default: bad("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad("unexpected argument '%s'", argv[optind]);
	if (o->trace && (o->sweep || o->plot))
		bad("--sweep and --plot need a built-in workload, not --trace");
	if (o->kernel_reads && !o->trace)
		bad("--kernel-reads needs --trace");
	if (o->launches != SIM_LAUNCHES_SYNC && !o->trace)
		bad("--launches %s needs --trace (a built-in workload has no host of its own)", o->launches_name);
	if (o->moves && !(o->moves_file = fopen(o->moves, "w")))
		bad("--moves: cannot write %s: %s", o->moves, strerror(errno)); /* the stream is flushed at exit */
}

/* Resolves --variant into a NULL-terminated list. */
static void variants(const char *spec, const struct sim_variant **out, unsigned max)
{
	unsigned n = 0;
	if (!strcmp(spec, "all")) {
		for (unsigned i = 0; sim_variants_all[i] && n + 1 < max; i++)
			out[n++] = sim_variants_all[i];
		out[n] = NULL;
		return;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct sim_variant *v = sim_variant_find(t);
		if (!v)
			bad("--variant: unknown variant '%s' (expected uvm, uvm-noprefetch, prefetch, mapped, static, "
			    "adaptive, resident, static-peer, adaptive-peer or all)", t);
		if (n + 1 < max)
			out[n++] = v;
	}
	if (!n)
		bad("--variant: empty list");
	out[n] = NULL;
}

static int run_all(const struct opts *o, const struct sim_profile *p, const struct sim_variant **vs,
		   const struct sim_events *ev, uint64_t ws, uint64_t budget, long long skipped, FILE *out, bool sweep,
		   bool json)
{
	struct sim_env env = { .profile = p, .budget = budget, .seed = o->wl.seed, .params = o->params,
			       .high_pct = o->recorded_high_pct, .low_pct = o->recorded_low_pct,
			       .launches = o->launches, .moves = o->moves_file };
	for (unsigned i = 0; vs[i]; i++) {
		struct sim_result r;
		if (sim_run(vs[i], &env, ev, &r)) {
			fprintf(stderr, "ember-sim: variant %s could not start (out of memory)\n", vs[i]->name);
			return 1;
		}
		struct sim_row row = { .workload = o->trace ? "trace" : o->workload, .variant = vs[i]->name,
				       .working_set = ws, .budget = budget, .r = &r, .trace_skipped = skipped };
		sim_report_row(out, &row, json, sweep);
		fflush(out);
	}
	return 0;
}

/* Build workload at ws, or exit 2 saying why (after option and the workload, when the workload came from one). */
static void build(const struct opts *o, const char *option, const char *workload, uint64_t ws,
		  struct sim_events *ev)
{
	struct sim_wl_opts w = o->wl;
	w.working_set = ws;
	char err[256];
	if (sim_workload_build(workload, &w, ev, err, sizeof err)) {
		if (option)
			fprintf(stderr, "ember-sim: %s %s: %s (see ember-sim --help)\n", option, workload, err);
		else
			fprintf(stderr, "ember-sim: %s (see ember-sim --help)\n", err);
		exit(2);
	}
}

/* --kernel-reads moe: hf_generate.py's Mixtral shapes route each token to 2 of 8 experts */
enum { MOE_EXPERTS = 8, MOE_TOP_K = 2 };

/* --kernel-reads star: the dimension tables, up to this size, are looked up a row at a time */
#define STAR_TABLE_MAX (64ull << 20)

static long star_reads(struct sim_events *ev, uint64_t seed)
{
	(void)seed;
	return (long)sim_lookup_reads(ev, STAR_TABLE_MAX);
}

static long moe_reads(struct sim_events *ev, uint64_t seed)
{
	return sim_gather_reads(ev, MOE_EXPERTS, MOE_TOP_K, seed);
}

static long pathfinder_reads(struct sim_events *ev, uint64_t seed)
{
	(void)seed;
	return sim_row_reads(ev);
}

/* The models that rewrite a trace's launches in place: how many they changed (-1 out of memory). */
static const struct {
	const char *name;
	long (*apply)(struct sim_events *ev, uint64_t seed);
	const char *none; /* why a trace none of whose launches it changed is not the program */
} in_place[] = {
	{ "star", star_reads, "no launch reads a table beside columns 64 times its size" },
	{ "moe", moe_reads, "no launch gathers experts" },
	{ "pathfinder", pathfinder_reads, "no launch reads a grid beside two rows" },
};

/* --kernel-reads: the trace's launches read what the model of the same program at its working set reads. */
static void overlay(const struct opts *o, struct sim_events *ev, uint64_t ws)
{
	for (size_t i = 0; i < sizeof in_place / sizeof in_place[0]; i++) {
		if (strcmp(o->kernel_reads, in_place[i].name))
			continue;
		long n = in_place[i].apply(ev, o->wl.seed);
		if (n <= 0) {
			fprintf(stderr, "ember-sim: --kernel-reads %s: %s\n", in_place[i].name,
				n < 0 ? "out of memory" : in_place[i].none);
			exit(2);
		}
		return;
	}
	struct sim_events model = { 0 };
	build(o, "--kernel-reads", o->kernel_reads, ws, &model);
	char err[256];
	int rc = sim_overlay_reads(ev, &model, err, sizeof err);
	sim_events_clear(&model);
	if (rc) {
		fprintf(stderr, "ember-sim: --kernel-reads %s: %s\n", o->kernel_reads, err);
		exit(2);
	}
}

static int do_trace(const struct opts *o, const struct sim_profile *p, const struct sim_variant **vs)
{
	FILE *f = sim_open_maybe_gz(o->trace);
	if (!f)
		bad("--trace: cannot open %s: %s", o->trace, strerror(errno));
	struct sim_events ev = { 0 };
	struct sim_trace_info info;
	char err[256];
	int rc = sim_trace_read(f, o->trace, &ev, &info, err, sizeof err);
	fclose(f);
	if (rc) {
		fprintf(stderr, "ember-sim: %s\n", err);
		exit(2);
	}
	uint64_t budget = o->budget ? o->budget : info.budget ? info.budget : 16ull << 30;
	if (budget < SIM_BLOCK)
		bad("--budget: at least 2M");
	if (o->kernel_reads)
		overlay(o, &ev, info.working_set);
	FILE *msg = o->json ? stderr : stdout;
	fprintf(msg, "trace %s: %llu lines, %llu events, %llu malformed lines skipped", o->trace,
		(unsigned long long)info.lines, (unsigned long long)info.events, (unsigned long long)info.skipped);
	if (info.skipped)
		fprintf(msg, " (first at line %llu)", (unsigned long long)info.first_bad);
	fprintf(msg, "%s\n", info.ended ? "" : "; no E line: the run was cut short");
	if (!o->json)
		sim_report_header(stdout, false);
	/* a run replays under the watermarks it was recorded with, unless --param says otherwise */
	struct opts ro = *o;
	ro.recorded_high_pct = info.high_pct;
	ro.recorded_low_pct = info.low_pct;
	rc = run_all(&ro, p, vs, &ev, info.working_set, budget, (long long)info.skipped, stdout, false, o->json);
	sim_events_clear(&ev);
	return rc;
}

static int do_sweep(const struct opts *o, const struct sim_profile *p, const struct sim_variant **vs, uint64_t budget,
		    FILE *out, bool json)
{
	if (!json)
		sim_report_header(out, true);
	for (size_t i = 0; i < sizeof sweep_ratios / sizeof sweep_ratios[0]; i++) {
		uint64_t ws = (uint64_t)((double)budget * sweep_ratios[i]) / SIM_BLOCK * SIM_BLOCK;
		struct sim_events ev = { 0 };
		build(o, NULL, o->workload, ws, &ev);
		int rc = run_all(o, p, vs, &ev, ws, budget, -1, out, true, json);
		sim_events_clear(&ev);
		if (rc)
			return rc;
	}
	return 0;
}

static int do_plot(const struct opts *o, const struct sim_profile *p, const struct sim_variant **vs, uint64_t budget)
{
	char tmp[] = "/tmp/ember-sim-sweep-XXXXXX";
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, "ember-sim: --plot: cannot create a temporary file: %s\n", strerror(errno));
		return 1;
	}
	int rc = do_sweep(o, p, vs, budget, f, true);
	fclose(f);
	if (!rc) {
		const char *script = getenv("EMBER_SIM_PLOT") ? getenv("EMBER_SIM_PLOT") : EMBER_SIM_PLOT_PY;
		pid_t pid = fork();
		if (pid == 0) {
			execlp("python3", "python3", script, tmp, o->plot, (char *)NULL);
			fprintf(stderr, "ember-sim: --plot needs python3 with matplotlib: python3 not found\n");
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1; /* plot.py has said why in one line */
		else
			printf("ember-sim: wrote %s\n", o->plot);
	}
	unlink(tmp);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	parse(argc, argv, &o);
	struct sim_profile p;
	sim_profile_default(&p);
	char err[512];
	if (o.profile && sim_profile_load(&p, o.profile, err, sizeof err)) {
		fprintf(stderr, "ember-sim: %s\n", err);
		return 2;
	}
	if (o.print_profile) {
		sim_profile_print(&p, stdout);
		return 0;
	}
	const struct sim_variant *vs[16];
	variants(o.variant, vs, 16);
	for (unsigned i = 0; o.launches == SIM_LAUNCHES_RECORDED && vs[i]; i++)
		if (!vs[i]->issue)
			bad("--launches recorded: variant '%s' decides nothing at a launch (expected static, adaptive, "
			    "static-peer or adaptive-peer)", vs[i]->name);
	if (o.trace)
		return do_trace(&o, &p, vs);
	uint64_t budget = o.budget ? o.budget : 16ull << 30;
	if (budget < SIM_BLOCK)
		bad("--budget: bad size (expected at least 2M)");
	if (o.plot)
		return do_plot(&o, &p, vs, budget);
	if (o.sweep)
		return do_sweep(&o, &p, vs, budget, stdout, o.json);
	struct sim_events ev = { 0 };
	build(&o, NULL, o.workload, o.wl.working_set, &ev);
	if (!o.json)
		sim_report_header(stdout, false);
	int rc = run_all(&o, &p, vs, &ev, o.wl.working_set, budget, -1, stdout, false, o.json);
	sim_events_clear(&ev);
	return rc;
}
