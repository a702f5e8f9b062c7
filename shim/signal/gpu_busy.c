/* The streams that may still run the program's work (gpu_busy.h). */
#include "gpu_busy.h"
#include "launch_scan.h"
#include "locks.h"

/*
 * The set, written under ember_lock_busy and read without it: a launch on
 * a stream already in it (nearly every launch) takes no lock. A reader
 * racing a removal may miss its key and take the lock to add it again,
 * which the lock's re-check makes harmless.
 */
static uint64_t keys[EMBER_BUSY_STREAMS];
static unsigned count;
static bool overflow; /* more streams than keys: busy until a context's synchronisation */

static bool listed(uint64_t key)
{
	unsigned n = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n && i < EMBER_BUSY_STREAMS; i++)
		if (__atomic_load_n(&keys[i], __ATOMIC_RELAXED) == key)
			return true;
	return false;
}

void ember_gpu_busy_launch(CUstream stream, bool per_thread)
{
	uint64_t key = ember_scan_stream_key(stream, per_thread);
	if (listed(key) || __atomic_load_n(&overflow, __ATOMIC_RELAXED))
		return;
	ember_lock(&ember_lock_busy);
	if (!listed(key)) {
		if (count < EMBER_BUSY_STREAMS) {
			__atomic_store_n(&keys[count], key, __ATOMIC_RELAXED);
			__atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&overflow, true, __ATOMIC_RELAXED);
		}
	}
	ember_unlock(&ember_lock_busy);
}

static void drop(uint64_t key)
{
	for (unsigned i = 0; i < count; i++)
		if (keys[i] == key) {
			__atomic_store_n(&keys[i], keys[count - 1], __ATOMIC_RELAXED);
			__atomic_store_n(&count, count - 1, __ATOMIC_RELEASE);
			return;
		}
}

void ember_gpu_busy_waited(enum ember_wait_scope scope, CUstream stream, bool per_thread)
{
	if (!__atomic_load_n(&count, __ATOMIC_ACQUIRE) && !__atomic_load_n(&overflow, __ATOMIC_RELAXED))
		return;
	ember_lock(&ember_lock_busy);
	if (scope == EMBER_WAIT_CONTEXT) {
		__atomic_store_n(&count, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&overflow, false, __ATOMIC_RELAXED);
	} else if (scope == EMBER_WAIT_STREAM) {
		drop(ember_scan_stream_key(stream, per_thread));
	} else if (count == 1 && !overflow) {
		drop(keys[0]);
	}
	ember_unlock(&ember_lock_busy);
}

bool ember_gpu_idle(void)
{
	return !__atomic_load_n(&count, __ATOMIC_ACQUIRE) && !__atomic_load_n(&overflow, __ATOMIC_RELAXED);
}

void ember_gpu_busy_after_fork_child(void)
{
	count = 0;
	overflow = false;
}
