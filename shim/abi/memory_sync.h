/*
 * What the program's synchronisations mean for its memory (hooks_sync.c
 * calls, hooks_stream_ordered.c answers): as the driver's pool trims to its release
 * threshold at the next synchronisation, so do the pools' freed allocations
 * that Ember keeps (EMBER_KEEP_FREED, kept.h).
 */
#ifndef EMBER_MEMORY_SYNC_H
#define EMBER_MEMORY_SYNC_H

/* The program's thread synchronised with the GPU (a stream, event or context, or a synchronous copy). */
void ember_memory_synchronized(void);

#endif
