/*
 * A number for the calling thread that no other thread of the process is
 * given. pthread_self() is not one: a thread that starts after another
 * exits often has its value, but not its per-thread default stream, whose
 * work may still be running.
 */
#ifndef EMBER_THREAD_NUMBER_H
#define EMBER_THREAD_NUMBER_H

#include <stdint.h>

/* Never 0. */
uint64_t ember_thread_number(void);

#endif
