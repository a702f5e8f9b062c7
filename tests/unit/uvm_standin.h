/*
 * A UVM tools device, stood in for by the test program: its own open(),
 * open64() and readlink() (uvm_standin.c) are found before the C library's
 * by every library in the process, the shim included. The process gets a
 * descriptor that /proc/self/fd names /dev/nvidia-uvm (as the driver's own,
 * opened at cuInit), and opening /dev/nvidia-uvm-tools gives /dev/null,
 * whose ioctls all fail unless the test answers them itself (its own
 * ioctl(), against uvm_standin_fd and uvm_standin_tools_fd).
 */
#ifndef EMBER_TEST_UVM_STANDIN_H
#define EMBER_TEST_UVM_STANDIN_H

#include <sys/types.h>

/* The descriptor that reads as /dev/nvidia-uvm; -1 before uvm_standin_load_shim. */
extern int uvm_standin_fd;
/* The last descriptor open() gave for /dev/nvidia-uvm-tools; -1 before. */
extern int uvm_standin_tools_fd;

/*
 * A test's own files, asked first for every other path open() is given
 * (NULL: none): a descriptor, or -1 with errno set, or UVM_STANDIN_PASS to
 * let the C library open the path. Set it before the shim is loaded.
 */
#define UVM_STANDIN_PASS (-2)
extern int (*uvm_standin_open_hook)(const char *path);

/* The C library's open(), past the stand-in. */
int uvm_standin_real_open(const char *path, int flags, mode_t mode);

/*
 * The device made there (uvm_standin_fd), then the simulated driver and the
 * shim loaded with the event queue read (EMBER_UVM_EVENTS=1), mode as
 * EMBER_MODE, a 64 MiB budget, logging at info into a file made from
 * log_template (mkstemp's, rewritten in place). Returns the shim.
 */
void *uvm_standin_load_shim(char *log_template, const char *mode);

#endif
