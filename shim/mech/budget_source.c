/* Per-GPU budgets and the accounting of memory Ember does not place. */
#include <cuda.h>
#include <stdlib.h>

#include "state.h"
#include "budget_source.h"
#include "gpus.h"
#include "tracer.h"
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
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	ember_budget_set(acc, budget, ember_cfg.high_watermark, ember_cfg.low_watermark);
	__atomic_store_n(&known[dev], true, __ATOMIC_RELEASE);
	struct ember_device_account copy = *acc;
	ember_table_unlock(EMBER_TABLE);
	ember_trace_budget(dev, &copy);
	ember_gpus_seen(dev);
	/* the ordinal is the process's own, after CUDA_VISIBLE_DEVICES: say which GPU it is */
	char ident[160];
	ember_gpu_describe(dev, ident, sizeof ident);
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char shown[65] = "";
	for (size_t i = 0; visible && visible[i] && i < sizeof shown - 1; i++) /* printable only: no forged lines */
		shown[i] = visible[i] > ' ' && visible[i] < 0x7f ? visible[i] : '?';
	ember_info("GPU %d: budget %.2f GiB (%s), high watermark %.2f GiB, low %.2f GiB; physical GPU %s%s%s%s", dev,
		   gib(budget), why, gib(copy.high), gib(copy.low), ident, visible ? " (CUDA_VISIBLE_DEVICES=" : "",
		   shown, visible ? ")" : "");
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

void ember_budget_plain(int dev, int64_t delta)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	if (acc)
		ember_budget_other(acc, delta);
	ember_table_unlock(EMBER_TABLE);
}

bool ember_budget_plain_if_room(int dev, uint64_t bytes)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	bool room = !acc || !acc->budget || ember_budget_room(acc, acc->high) >= bytes;
	if (acc && room)
		ember_budget_other(acc, (int64_t)bytes);
	ember_table_unlock(EMBER_TABLE);
	return room;
}

uint64_t ember_budget_plain_up_to(int dev, uint64_t bytes, uint64_t unit)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	uint64_t room = acc && acc->budget ? ember_budget_room(acc, acc->high) : 0;
	uint64_t take = unit ? (room < bytes ? room : bytes) / unit * unit : 0;
	if (take)
		ember_budget_other(acc, (int64_t)take);
	ember_table_unlock(EMBER_TABLE);
	return take;
}

void ember_budget_vmm_on_host(int dev, uint64_t bytes)
{
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	if (acc)
		acc->bytes_vmm_on_host += bytes;
	ember_table_unlock(EMBER_TABLE);
}

uint64_t ember_budget_bytes(int dev)
{
	if (dev < 0 || dev >= EMBER_MAX_DEVICES || !__atomic_load_n(&known[dev], __ATOMIC_ACQUIRE))
		return 0;
	ember_table_lock(EMBER_TABLE);
	struct ember_device_account *acc = ember_table_account(EMBER_TABLE, dev);
	uint64_t budget = acc ? acc->budget : 0;
	ember_table_unlock(EMBER_TABLE);
	return budget;
}
