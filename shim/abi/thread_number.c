/* Thread numbers that are never reused (thread_number.h). */
#include "thread_number.h"

uint64_t ember_thread_number(void)
{
	static uint64_t last;
	static __thread uint64_t me;
	if (!me)
		me = __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
	return me;
}
