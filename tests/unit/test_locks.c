/*
 * The lock order (shim/abi/locks.h), checked: locks.c built with
 * EMBER_LOCK_CHECK, the region table's lock taken through the policy's
 * ember_table_lock as the shim takes it. Taking a lock while holding one
 * listed after it aborts with one line; the order itself passes.
 */
#include <criterion/criterion.h>
#include <signal.h>

#include "locks.h"
#include "state.h"

struct ember_table ember_shim_table;
static struct ember_accounts accounts;

static void setup(void)
{
	ember_table_init(&ember_shim_table, &accounts);
}

TestSuite(locks, .init = setup);

Test(locks, the_order_itself_passes)
{
	ember_lock(&ember_lock_worker);
	ember_lock(&ember_lock_uvm);
	ember_table_lock(&ember_shim_table);
	ember_lock(&ember_lock_layouts);
	ember_lock(&ember_lock_loader);
	ember_unlock(&ember_lock_loader);
	ember_unlock(&ember_lock_layouts);
	ember_table_unlock(&ember_shim_table);
	ember_unlock(&ember_lock_uvm);
	ember_unlock(&ember_lock_worker);
	/* released, any lock may be taken again */
	ember_lock(&ember_lock_layouts);
	ember_unlock(&ember_lock_layouts);
	ember_table_lock(&ember_shim_table);
	ember_table_unlock(&ember_shim_table);
}

/* stats.c did this at exit: the event queue's counts read with the table held */
Test(locks, the_event_queue_under_the_table_aborts, .signal = SIGABRT)
{
	ember_table_lock(&ember_shim_table);
	ember_lock(&ember_lock_uvm);
}

Test(locks, the_table_under_the_layouts_aborts, .signal = SIGABRT)
{
	ember_lock(&ember_lock_layouts);
	ember_table_lock(&ember_shim_table);
}

Test(locks, a_lock_taken_twice_aborts, .signal = SIGABRT)
{
	ember_lock(&ember_lock_trace);
	ember_lock(&ember_lock_trace);
}
