/*
 * Finding and opening the real libcuda.so.1.
 *
 * Candidates, in order: EMBER_REAL_LIBCUDA; then the folders of
 * EMBER_DRIVER_SEARCH if it is set, else each folder of LD_LIBRARY_PATH, the
 * folders named in /etc/ld.so.conf.d and the standard driver locations. A
 * candidate that is Ember itself (same file, or any library that exports
 * ember_version) is skipped. The driver is opened by absolute path, once,
 * under a lock that fork() cannot leave held; resolving a symbol afterwards
 * takes no lock at all. When nothing is found, every call returns
 * CUDA_ERROR_STUB_LIBRARY and one error line names each path tried and why
 * it failed.
 */
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "locks.h"
#include "shim.h"

enum driver_state { DRIVER_UNOPENED, DRIVER_OPEN, DRIVER_MISSING };

#define open_lock ember_lock_loader
static int driver_state = DRIVER_UNOPENED;
static void *driver;
static char driver_path[PATH_MAX];

static const char *const standard_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu",
	"/lib64", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib",
	"/run/opengl-driver/lib",
};

/* A growing, bounded record of what was tried, for the error line. */
struct tried {
	char text[3072];
	size_t len;
};

static void note(struct tried *t, const char *path, const char *why)
{
	if (t->len >= sizeof t->text - 1)
		return;
	int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%s%s (%s)",
			 t->len ? "; " : "", path, why);
	if (n > 0)
		t->len += (size_t)n;
}

static bool same_file(const char *a, const struct stat *b)
{
	struct stat sa;
	return stat(a, &sa) == 0 && sa.st_dev == b->st_dev && sa.st_ino == b->st_ino;
}

/* True when path was already tried: LD_LIBRARY_PATH and ld.so.conf.d often repeat folders. */
static bool already_tried(const struct tried *t, const char *path)
{
	size_t n = strlen(path);
	for (const char *p = t->text; (p = strstr(p, path)); p += n)
		if ((p == t->text || p[-1] == ' ') && !strncmp(p + n, " (", 2))
			return true;
	return false;
}

static bool try_candidate(const char *path, const struct stat *self, struct tried *t,
			  bool explicit)
{
	if (!*path || already_tried(t, path))
		return false;
	/* The toolkit's link-time stub answers every call with an error. */
	if (!explicit && strstr(path, "/stubs/"))
		return note(t, path, "toolkit stub, skipped"), false;
	struct stat st;
	if (stat(path, &st) != 0)
		return note(t, path, "not found"), false;
	if (self && same_file(path, self))
		return note(t, path, "is Ember itself"), false;
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		return note(t, path, e ? e : "dlopen failed"), false;
	}
	if (dlsym(h, "ember_version")) {
		dlclose(h);
		return note(t, path, "is another copy of Ember"), false;
	}
	if (!dlsym(h, "cuInit")) {
		dlclose(h);
		return note(t, path, "has no cuInit"), false;
	}
	driver = h;
	if (!realpath(path, driver_path))
		snprintf(driver_path, sizeof driver_path, "%s", path);
	return true;
}

static bool try_dir(const char *dir, size_t len, const struct stat *self, struct tried *t)
{
	char path[PATH_MAX];
	if (len == 0 || len + sizeof "/libcuda.so.1" > sizeof path)
		return false;
	snprintf(path, sizeof path, "%.*s/libcuda.so.1", (int)len, dir);
	return try_candidate(path, self, t, false);
}

/* The folders of a path list (config.h: one syntax), absolute ones only: a relative one is the caller's cwd. */
static bool try_path_list(const char *list, const struct stat *self, struct tried *t)
{
	for (const char *p = list; p && *p;) {
		size_t n = ember_path_list_next(&p);
		if (n && *p == '/' && try_dir(p, n, self, t))
			return true;
		p += n;
	}
	return false;
}

/* Folders listed one per line in /etc/ld.so.conf.d/ files (containers put the driver there). */
static bool try_ld_conf_dirs(const struct stat *self, struct tried *t)
{
	DIR *d = opendir("/etc/ld.so.conf.d");
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".conf") != 0)
			continue;
		char conf[PATH_MAX];
		snprintf(conf, sizeof conf, "/etc/ld.so.conf.d/%s", e->d_name);
		FILE *f = fopen(conf, "re");
		if (!f)
			continue;
		char line[PATH_MAX];
		while (!found && fgets(line, sizeof line, f)) {
			size_t len = strcspn(line, " \t\r\n#");
			if (line[0] == '/')
				found = try_dir(line, len, self, t);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

static void open_driver_locked(void)
{
	struct stat self_st, *self = NULL;
	Dl_info info;
	if (dladdr((void *)ember_resolve_slot, &info) && info.dli_fname &&
	    stat(info.dli_fname, &self_st) == 0)
		self = &self_st;

	struct tried t = { .len = 0 };
	const char *explicit_path = ember_cfg.real_libcuda ? ember_cfg.real_libcuda : "";
	const char *search = ember_cfg.driver_search ? ember_cfg.driver_search : "";
	bool ok = try_candidate(explicit_path, self, &t, true);
	if (!ok && *explicit_path)
		ember_warn("EMBER_REAL_LIBCUDA cannot be used: %s; searching elsewhere", t.text);
	if (!ok && *search) {
		ok = try_path_list(search, self, &t);
	} else if (!ok) {
		ok = (!ember_config_secure_execution() && try_path_list(getenv("LD_LIBRARY_PATH"), self, &t)) ||
		     try_ld_conf_dirs(self, &t);
		for (size_t i = 0; !ok && i < sizeof standard_dirs / sizeof standard_dirs[0]; i++)
			ok = try_dir(standard_dirs[i], strlen(standard_dirs[i]), self, &t);
	}

	if (ok) {
		ember_info("forwarding to the real driver %s%s", driver_path,
			   ember_active ? "" : " (pass-through)");
		__atomic_store_n(&driver_state, DRIVER_OPEN, __ATOMIC_RELEASE);
	} else {
		ember_error("cannot find the real CUDA driver (libcuda.so.1); every CUDA call will "
			    "fail with CUDA_ERROR_STUB_LIBRARY. Set EMBER_REAL_LIBCUDA to its path. Tried: %s",
			    t.len ? t.text : "nothing");
		__atomic_store_n(&driver_state, DRIVER_MISSING, __ATOMIC_RELEASE);
	}
}

void *ember_driver_handle(void)
{
	if (__atomic_load_n(&driver_state, __ATOMIC_ACQUIRE) == DRIVER_UNOPENED) {
		ember_lock(&open_lock);
		if (__atomic_load_n(&driver_state, __ATOMIC_ACQUIRE) == DRIVER_UNOPENED)
			open_driver_locked();
		ember_unlock(&open_lock);
	}
	return __atomic_load_n(&driver_state, __ATOMIC_ACQUIRE) == DRIVER_OPEN ? driver : NULL;
}

bool ember_driver_used(void)
{
	return __atomic_load_n(&driver_state, __ATOMIC_ACQUIRE) != DRIVER_UNOPENED;
}

const char *ember_driver_path(void)
{
	return ember_driver_handle() ? driver_path : "";
}

/* What a slot points at when there is no driver, or no such function in it. */
static CUresult no_driver(void)
{
	return CUDA_ERROR_STUB_LIBRARY;
}

static CUresult not_in_driver(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

void *ember_resolve_slot(unsigned slot)
{
	if (slot >= EMBER_SLOT_COUNT)
		return (void *)not_in_driver;
	void *h = ember_driver_handle();
	void *fn = h ? dlsym(h, ember_export_names[slot]) : (void *)no_driver;
	if (!fn) {
		ember_warn("the driver %s has no %s; calls to it return CUDA_ERROR_NOT_SUPPORTED",
			   driver_path, ember_export_names[slot]);
		fn = (void *)not_in_driver;
	}
	/* Racing resolvers store the same value; the slot is one aligned word. */
	__atomic_store_n(&ember_slot_table[slot], fn, __ATOMIC_RELEASE);
	return fn;
}

/*
 * fork(): the child gets the parent's handle and resolved slots, which stay
 * valid in its copy of the address space. Only the open lock needs care, so
 * that a fork during the first open cannot leave the child's copy held.
 */

