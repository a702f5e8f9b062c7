/* The interactive view (ncurses), and the keys it takes: main.c's --help prints the same text. */
#ifndef EMBER_TOP_TUI_H
#define EMBER_TOP_TUI_H

#include "view.h"

extern const char top_keys_help[];

/* Until q, or wait_s seconds (< 0: without end) with no program live; returns the exit status. */
int top_tui(struct top_view *v, const char *file, double wait_s);

/* main.c: whether what the view waits for is there (the chosen process, else any) and live. */
bool top_ready(const struct top_list *list, const struct top_view *v);

double top_now(void);

#endif
