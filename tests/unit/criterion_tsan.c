/* Linked into every Criterion test program of a ThreadSanitizer build, and
 * only there (tests/CMakeLists.txt), so that Criterion's runner starts under
 * TSan and a race fails the case it happens in.
 *
 * Why Criterion 2.4 does not start under TSan (Criterion issue #274): its
 * sandbox, BoxFort, linked into libcriterion, maps a shared arena for the
 * runner and one more for each test, each at an address drawn with rand_r()
 * as a random 16 MiB slot of [0x2000'0000'0000, 0x6000'0000'0000), MAP_FIXED,
 * and gives up after 10 draws that land on pages already mapped. On x86_64
 * TSan keeps all of that range as its shadow or reserved, except
 * [0x5500'0000'0000, 0x5680'0000'0000), where it lets a program map memory
 * (the "mid" application range, which holds PIE programs): one draw in 43
 * fits, so an arena succeeds one time in five, and a program of 16 tests, 18
 * arenas, never gets all of them. The runner then stops with "Could not
 * initialize inheritable arena" or, when a test's arena fails, crashes on the
 * pointer it did not check: 0 cases run.
 *
 * What this file does about it: the rand_r() below answers libcriterion's
 * calls (BoxFort's slot draw is the library's only use of rand_r) with a slot
 * inside that range, still drawn at random from libc's rand_r; BoxFort still
 * checks that the slot's pages are free, draws again if not, and maps it
 * through TSan's own mmap interceptor. Every other caller gets libc's
 * rand_r unchanged. Nothing of the tests, the shim or TSan is changed.
 *
 * And __tsan_default_options: a case's process ends with _Exit(0), which TSan
 * does not intercept, so a report would print and the case still pass;
 * halt_on_error=1 makes the report end the process with TSan's exit code 66,
 * and Criterion fails the case. TSAN_OPTIONS still overrides it.
 *
 * And __tsan_default_suppressions: one report that can no longer come
 * true. The shim holds its loader lock across dlopen of the simulated driver
 * (the exception shim/abi/locks.h names), whose constructor (sim/init.c)
 * takes its kernel-table lock to register its kernels; a fork() runs the
 * driver's fork handler (the table lock) before Ember's (every Ember lock,
 * the loader's last). TSan sees the two orders and reports a cycle. Two
 * threads deadlocked only if one forked while the other was inside the
 * constructor after its pthread_atfork: the constructor now registers its
 * kernels first, so its fork handlers do not exist yet while it holds the
 * table lock, but the orders TSan records are the same (test_fork_during_load,
 * in the plain and ASan builds, forks at that point). The entry matches
 * reports with that constructor's kernel registration in a stack only, so
 * any other inversion, and every race, still fails its case. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__x86_64__)
#error "criterion_tsan.c knows BoxFort's and TSan's x86_64 address ranges only"
#endif

/* BoxFort's slot: base 0x2000'0000'0000 + ((r & 0x3fffff) << 24). TSan's mid
 * application range, [0x5500'0000'0000, 0x5680'0000'0000), is slots
 * [0x350000, 0x368000). */
enum { SLOT_FIRST = 0x350000, SLOT_COUNT = 0x18000 };

static int called_from_criterion(void *pc)
{
	Dl_info info;
	return dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "libcriterion");
}

int rand_r(unsigned int *seed)
{
	static int (*next)(unsigned int *);
	int (*f)(unsigned int *) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (int (*)(unsigned int *))dlsym(RTLD_NEXT, "rand_r");
		__atomic_store_n(&next, f, __ATOMIC_RELEASE);
	}
	int r = f(seed);
	if (called_from_criterion(__builtin_return_address(0)))
		r = SLOT_FIRST + r % SLOT_COUNT;
	return r;
}

const char *__tsan_default_options(void)
{
	return "halt_on_error=1";
}

const char *__tsan_default_suppressions(void)
{
	return "deadlock:sim_register_builtin_kernels\n";
}
