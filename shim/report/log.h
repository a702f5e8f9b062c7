/* One-line logs: "ember[pid] level: message", behind EMBER_LOG. */
#ifndef EMBER_LOG_H
#define EMBER_LOG_H

#include "config.h"

void ember_log_init(enum ember_log_level level, const char *path, bool timestamps);
bool ember_log_enabled(enum ember_log_level level);
void ember_log(enum ember_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ember_error(...) ember_log(EMBER_LOG_ERROR, __VA_ARGS__)
#define ember_warn(...) ember_log(EMBER_LOG_WARN, __VA_ARGS__)
#define ember_info(...) ember_log(EMBER_LOG_INFO, __VA_ARGS__)
#define ember_debug(...) ember_log(EMBER_LOG_DEBUG, __VA_ARGS__)

#endif
