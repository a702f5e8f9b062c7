/* Every change to a device account. */
#include <stddef.h>

#include "budget.h"

struct ember_device_account *ember_budget_account(struct ember_accounts *accs, int dev)
{
	return accs && dev >= 0 && dev < EMBER_MAX_DEVICES ? &accs->dev[dev] : NULL;
}

void ember_budget_set(struct ember_device_account *acc, uint64_t budget, unsigned high_pct, unsigned low_pct)
{
	acc->budget = budget;
	acc->high = budget / 100 * high_pct;
	acc->low = budget / 100 * low_pct;
}

uint64_t ember_budget_room(const struct ember_device_account *acc, uint64_t ceiling)
{
	uint64_t used = acc->resident + acc->other;
	return used < ceiling ? ceiling - used : 0;
}

static void note_peak(struct ember_device_account *acc)
{
	if (acc->resident + acc->other > acc->peak)
		acc->peak = acc->resident + acc->other;
}

void ember_budget_reserve(struct ember_device_account *acc, uint64_t bytes)
{
	acc->resident += bytes;
	note_peak(acc);
}

void ember_budget_release(struct ember_device_account *acc, uint64_t bytes)
{
	acc->resident -= bytes < acc->resident ? bytes : acc->resident;
}

void ember_budget_other(struct ember_device_account *acc, int64_t delta)
{
	if (delta < 0 && (uint64_t)-delta > acc->other)
		acc->other = 0;
	else
		acc->other += (uint64_t)delta;
	note_peak(acc);
}

void ember_budget_moved(struct ember_device_account *acc, bool promote, uint64_t bytes, uint64_t ns)
{
	++*(promote ? &acc->promotions : &acc->demotions);
	*(promote ? &acc->bytes_promoted : &acc->bytes_demoted) += bytes;
	acc->migrate_ns += ns;
}
