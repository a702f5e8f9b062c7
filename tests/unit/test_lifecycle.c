/*
 * Life cycle under the shim, with migrations in flight: fork() from a
 * process whose threads keep launching (with and without exec), exit()
 * while moves are still on their way, the runtime's teardown at exit on
 * either side of Ember's, a dlclose of the driver, and a signal handler
 * running in the middle of them. Each run is a child process, so that a hang or a crash
 * shows as its status, within a deadline.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"

#define MiB (1ull << 20)

static void *shim;
static CUfunction reread;
static CUcontext ctx;

static void start(void)
{
	setenv("EMBER_MODE", "adaptive", 1);
	setenv("EMBER_BUDGET", "16M", 1);
	setenv("EMBER_INTERVAL_MS", "1", 1);
	setenv("EMBER_HEAT_RATIO", "1", 1);
	load_sim();
	shim = load_shim();
	CUmodule mod = start_context(shim);
	CU_OK(SYM(shim, cuCtxGetCurrent)(&ctx));
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
}

/* Run child() in a process of its own; its exit status, or -signal, within 30 s. */
static int in_child(void (*child)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		alarm(30); /* a hang ends as SIGALRM */
		child();
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static volatile bool stop;

/* Keep launching over a buffer larger than the budget, so moves are always on their way. */
static void *launcher(void *arg)
{
	CU_OK(SYM(shim, cuCtxSetCurrent)(ctx));
	CUdeviceptr p = (CUdeviceptr)arg;
	while (!stop)
		launch_reread(shim, reread, p, 40 * MiB);
	return NULL;
}

static void fork_while_launching(bool exec_after)
{
	start();
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 7, 40 * MiB);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, launcher, (void *)p);
	for (int round = 0; round < 50; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			if (exec_after)
				execl("/bin/true", "true", (char *)NULL);
			_exit(((unsigned char *)p)[12345] == 7 ? 0 : 9); /* the child's copy of the data */
		}
		int status;
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			exit(5);
	}
	stop = true;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CU_OK(SYM(shim, cuCtxSynchronize)());
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		if (((unsigned char *)p)[i] != 7)
			exit(6);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

static void fork_without_exec(void)
{
	fork_while_launching(false);
}

static void fork_then_exec(void)
{
	fork_while_launching(true);
}

Test(lifecycle, fork_while_threads_launch_with_and_without_exec)
{
	cr_expect_eq(in_child(fork_without_exec), 0, "fork() with launching threads: children and parent finish");
	cr_expect_eq(in_child(fork_then_exec), 0, "fork() and exec() with launching threads");
}

static void exit_with_moves_in_flight(void)
{
	start();
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	for (int i = 0; i < 20; i++)
		launch_reread(shim, reread, p, 40 * MiB);
	exit(0); /* no synchronisation, no free: the worker is stopped at exit with moves on their way */
}

Test(lifecycle, exit_with_migrations_in_flight)
{
	cr_expect_eq(in_child(exit_with_moves_in_flight), 0);
}

static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	signals++;
}

static void signals_during_migrations(void)
{
	start();
	signal(SIGUSR1, on_signal);
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 3, 40 * MiB);
	for (int i = 0; i < 200; i++) {
		launch_reread(shim, reread, p, 40 * MiB);
		kill(getpid(), SIGUSR1);
	}
	CU_OK(SYM(shim, cuCtxSynchronize)());
	CU_OK(SYM(shim, ember_flush)() == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		if (((unsigned char *)p)[i] != 3)
			exit(6);
	if (signals != 200)
		exit(7);
	CU_OK(SYM(shim, cuMemFree_v2)(p));
}

Test(lifecycle, signals_during_migrations)
{
	cr_expect_eq(in_child(signals_during_migrations), 0);
}

/*
 * The CUDA runtime tears down in an atexit handler, which may run before
 * or after Ember's own exit work depending on who was loaded first: in
 * each, the program still launches, frees and releases its context while
 * moves are on their way, and the process exits cleanly.
 */
static CUdeviceptr late_buffer;

static void teardown_at_exit(void)
{
	if (!late_buffer)
		return;
	launch_reread(shim, reread, late_buffer, 40 * MiB);
	if (SYM(shim, cuCtxSynchronize)() != CUDA_SUCCESS)
		_exit(8);
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		if (((unsigned char *)late_buffer)[i] != 5)
			_exit(9);
	if (SYM(shim, cuMemFree_v2)(late_buffer) != CUDA_SUCCESS)
		_exit(10);
	late_buffer = 0;
	CUdevice d;
	SYM(shim, cuDeviceGet)(&d, 0);
	SYM(shim, cuDevicePrimaryCtxRelease_v2)(d);
}

static void exit_with_teardown(bool registered_first)
{
	if (registered_first)
		atexit(teardown_at_exit); /* before the shim is loaded: runs after its exit work */
	start();
	if (!registered_first)
		atexit(teardown_at_exit);
	CU_OK(SYM(shim, cuMemAllocManaged)(&late_buffer, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)late_buffer, 5, 40 * MiB);
	for (int i = 0; i < 20; i++)
		launch_reread(shim, reread, late_buffer, 40 * MiB);
	exit(0);
}

static void teardown_registered_first(void)
{
	exit_with_teardown(true);
}

static void teardown_registered_last(void)
{
	exit_with_teardown(false);
}

Test(lifecycle, the_runtime_tears_down_at_exit_on_either_side_of_ember)
{
	cr_expect_eq(in_child(teardown_registered_first), 0, "teardown after Ember's exit work");
	cr_expect_eq(in_child(teardown_registered_last), 0, "teardown before it");
}

/* A program that dlcloses what it opened as libcuda, with moves still on their way. */
static void dlclose_with_moves_in_flight(void)
{
	start();
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 7, 40 * MiB);
	for (int i = 0; i < 20; i++)
		launch_reread(shim, reread, p, 40 * MiB);
	if (dlclose(shim) != 0)
		exit(11);
	usleep(100 * 1000); /* the worker's interval passes, had its code gone */
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		if (((unsigned char *)p)[i] != 7)
			exit(12);
}

Test(lifecycle, dlclose_with_moves_in_flight)
{
	cr_expect_eq(in_child(dlclose_with_moves_in_flight), 0);
}
