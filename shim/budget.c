/* Per-GPU budgets and the accounting of memory Ember does not place. */
#include <cuda.h>

#include "budget.h"
#include "regions.h"
#include "shim.h"

static bool known[EMBER_MAX_DEVICES];

static struct ember_size configured_budget(int dev)
{
	if (dev < EMBER_CONFIG_MAX_GPUS && ember_size_is_set(ember_cfg.budget_of[dev]))
		return ember_cfg.budget_of[dev];
	return ember_cfg.budget;
}

bool ember_budget_is_explicit(int dev)
{
	return dev >= 0 && ember_size_is_set(configured_budget(dev));
}

static double gib(uint64_t b)
{
	return (double)b / (1u << 30);
}

/* Called with a context current on dev, the first time dev is seen. */
static void establish(int dev)
{
	size_t free_b = 0, total_b = 0;
	if (EMBER_REAL(cuMemGetInfo_v2)(&free_b, &total_b) != CUDA_SUCCESS)
		return; /* try again next time */
	struct ember_size want = configured_budget(dev);
	uint64_t budget;
	const char *why;
	if (ember_size_is_set(want)) {
		budget = ember_size_resolve(want, total_b);
		why = dev < EMBER_CONFIG_MAX_GPUS && ember_size_is_set(ember_cfg.budget_of[dev])
			      ? "EMBER_BUDGET_<n>"
			      : "EMBER_BUDGET";
	} else {
		uint64_t headroom = ember_size_resolve(ember_cfg.headroom, total_b);
		budget = free_b > headroom ? free_b - headroom : 0;
		why = "free memory less EMBER_HEADROOM";
	}
	if (budget > total_b) {
		ember_warn("GPU %d: the budget of %.1f GiB exceeds its %.1f GiB; using %.1f GiB", dev,
			   gib(budget), gib(total_b), gib(total_b));
		budget = total_b;
	}
	ember_regions_lock();
	struct ember_device_account *acc = ember_account(dev);
	acc->budget = budget;
	acc->high = budget / 100 * ember_cfg.high_watermark;
	acc->low = budget / 100 * ember_cfg.low_watermark;
	__atomic_store_n(&known[dev], true, __ATOMIC_RELEASE);
	ember_regions_unlock();
	ember_info("GPU %d: budget %.2f GiB (%s), high watermark %.2f GiB, low %.2f GiB", dev, gib(budget),
		   why, gib(acc->high), gib(acc->low));
}

int ember_budget_current_device(void)
{
	CUdevice dev;
	if (EMBER_REAL(cuCtxGetDevice)(&dev) != CUDA_SUCCESS || dev < 0 || dev >= EMBER_MAX_DEVICES)
		return -1;
	if (!__atomic_load_n(&known[dev], __ATOMIC_ACQUIRE))
		establish(dev);
	return dev;
}

void ember_budget_other(int dev, int64_t delta)
{
	ember_regions_lock();
	struct ember_device_account *acc = ember_account(dev);
	if (acc) {
		if (delta < 0 && (uint64_t)-delta > acc->other)
			acc->other = 0;
		else
			acc->other += (uint64_t)delta;
		ember_account_note_peak_locked(dev);
	}
	ember_regions_unlock();
}

void ember_budget_reset(void)
{
	for (int i = 0; i < EMBER_MAX_DEVICES; i++)
		known[i] = false;
}
