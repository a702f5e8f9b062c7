/*
 * A fork in one thread while another has the shim load the simulated driver.
 * The shim holds its loader lock across that dlopen, and the driver's
 * constructor installs fork handlers that take its kernel-table lock; a
 * fork runs them before Ember's, which take the loader lock. If the
 * constructor took its table lock after installing them, the two threads
 * deadlocked (TSan's report, criterion_tsan.c). The test stands in for
 * __register_atfork, which pthread_atfork calls from each library, to fork
 * in another thread right after the driver has installed its handlers,
 * while the constructor is still running: the load must still finish, and
 * the fork with it. A child runs it, under a deadline.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static int go, forked;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void *forker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	__atomic_store_n(&forked, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The simulated driver's handlers installed: fork elsewhere now, and give that fork time to start. */
int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso)
{
	static int (*real)(void (*)(void), void (*)(void), void (*)(void), void *);
	if (!real)
		real = (int (*)(void (*)(void), void (*)(void), void (*)(void), void *))dlsym(RTLD_NEXT,
											 "__register_atfork");
	int rc = real(prepare, parent, child, dso);
	Dl_info info;
	if (dladdr(dso, &info) && info.dli_fname && strstr(info.dli_fname, "ember-sim")) {
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 300 && !__atomic_load_n(&forked, __ATOMIC_ACQUIRE); i++)
			sleep_ms(1); /* the fork waits for the loader lock, which this thread holds */
	}
	return rc;
}

static void load_while_forking(void)
{
	alarm(20); /* a deadlock ends the child by SIGALRM */
	setenv("EMBER_MODE", "static", 1);
	void *shim = load_shim(); /* the driver is loaded at its first call, under the loader lock */
	pthread_t t;
	pthread_create(&t, NULL, forker, NULL);
	CUresult r = SYM(shim, cuInit)(0);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE); /* the driver was loaded already: fork anyway */
	pthread_join(t, NULL);
	_exit(r == CUDA_SUCCESS && __atomic_load_n(&forked, __ATOMIC_ACQUIRE) ? 0 : 3);
}

Test(fork_during_load, a_fork_while_the_shim_loads_the_driver_deadlocks_neither_thread, .timeout = 60)
{
	pid_t p = fork();
	cr_assert_geq(p, 0);
	if (p == 0)
		load_while_forking();
	int status = 0;
	cr_assert_eq(waitpid(p, &status, 0), p);
	cr_expect(!WIFSIGNALED(status), "the child died of signal %d (SIGALRM: the threads deadlocked)",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status: %d", status);
}
