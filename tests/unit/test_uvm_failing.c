/*
 * A UVM tools device that is there but fails: this test program stands in
 * for the device. The process gets a descriptor that /proc/self/fd names
 * /dev/nvidia-uvm (as the driver's own, opened at cuInit), and opening
 * /dev/nvidia-uvm-tools gives /dev/null, whose ioctls all fail, so the
 * driver seems to refuse the event tracker. Ember must say so in exactly
 * one line and go on placing, the program's bytes intact. The program's own
 * open() and readlink() (uvm_standin.c) are found before the C library's by
 * every library in the process, the shim included.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ember/ember.h"
#include "ember_sim.h"
#include "harness.h"
#include "uvm_standin.h"

#define MiB (1ull << 20)

Test(uvm_failing, a_refused_event_tracker_costs_one_line_and_nothing_else)
{
	char log[] = "/tmp/ember-uvm-failing-XXXXXX";
	void *shim = uvm_standin_load_shim(log, "static");
	CUmodule mod = start_context(shim);
	CUfunction reread;
	CU_OK(SYM(shim, cuModuleGetFunction)(&reread, mod, "ember_reread_sum"));
	CUdeviceptr p;
	CU_OK(SYM(shim, cuMemAllocManaged)(&p, 40 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)p, 0x5e, 40 * MiB);
	for (int i = 0; i < 5; i++)
		launch_reread(shim, reread, p, 40 * MiB);
	cr_assert_eq(SYM(shim, ember_flush)(), 0);
	struct ember_region_info info;
	cr_assert_eq(SYM(shim, ember_region_info)((void *)p, &info), 0);
	cr_expect_eq(info.state, 2, "the split went ahead: resident");
	for (size_t i = 0; i < 40 * MiB; i += 4099)
		cr_assert_eq(((unsigned char *)p)[i], 0x5e, "byte %zu", i);
	char buf[8192];
	cr_assert_gt(read_file(log, buf, sizeof buf), 0);
	unlink(log);
	cr_expect_eq(lines_with(buf, "UVM tools event queue not used"), 1, "one line: %s", buf);
	cr_expect_not_null(strstr(buf, "the driver refused the event tracker"), "%s", buf);
}
