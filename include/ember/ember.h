/*
 * Ember's public interface for programs that want to talk to it. Everything
 * here is optional: an unmodified CUDA program needs none of it. Look the
 * functions up with dlsym(RTLD_DEFAULT, ...) to stay runnable without Ember.
 */
#ifndef EMBER_EMBER_H
#define EMBER_EMBER_H

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0"; its presence also tells a loader that a library is Ember. */
const char *ember_version(void);

/* The path of the real driver Ember forwards to, or "" if none was found. */
const char *ember_real_driver(void);

/* 1 when Ember rewrites calls, 0 when it is a pure pass-through. */
int ember_is_active(void);

#ifdef __cplusplus
}
#endif

#endif
