/* Growing an array by doubling: the one place that does it. */
#ifndef EMBER_GROW_H
#define EMBER_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * Make room for one more element in *array (n used of *cap, each elem
 * bytes), doubling from first. Returns false, leaving everything as it
 * was, when memory is short.
 */
static inline bool ember_grow(void *array, size_t n, size_t *cap, size_t elem, size_t first)
{
	if (n < *cap)
		return true;
	size_t want = *cap ? 2 * *cap : first;
	void *p = realloc(*(void **)array, want * elem);
	if (!p)
		return false;
	*(void **)array = p;
	*cap = want;
	return true;
}

#endif
