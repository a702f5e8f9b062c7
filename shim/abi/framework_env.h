/*
 * Under EMBER_MANAGE_ALL, the frameworks' settings that ember-run gives
 * (framework_defaults.h), given by Ember itself when it was preloaded
 * (LD_PRELOAD, /etc/ld.so.preload), before the program reads its
 * environment.
 */
#ifndef EMBER_FRAMEWORK_ENV_H
#define EMBER_FRAMEWORK_ENV_H

/* From the library's constructor, with ember_cfg loaded. */
void ember_framework_env_at_start(void);

#endif
