#ifndef EMBER_RUN_SIM_CHECK_H
#define EMBER_RUN_SIM_CHECK_H

#include <stddef.h>

/*
 * -1, with the reason in why, when program (found as execvp would) is an
 * executable the simulated driver cannot serve: one that carries the CUDA
 * runtime. 0 otherwise, including for what cannot be read or is no ELF.
 */
int ember_run_sim_check(const char *program, char *why, size_t len);

#endif
