/*
 * The built-in kernels: host functions with the meaning of the project's
 * PTX kernels, each reporting its memory traffic before it touches memory.
 * A real kernel's thread i handles element i; these loop over the elements
 * the launch would have covered.
 */
#include "sim.h"

/* ember_saxpy(float a, const float *x, float *y, unsigned n): one element per thread. */
static void saxpy(const struct ember_sim_launch *launch, void **params)
{
	float a = *(const float *)params[0];
	const float *x = *(const float *const *)params[1];
	float *y = *(float *const *)params[2];
	unsigned n = *(const unsigned *)params[3];
	uint64_t threads = (uint64_t)launch->grid[0] * launch->block[0];
	size_t count = (size_t)SIM_MIN((uint64_t)n, threads);
	if (count == 0)
		return;
	ember_sim_access(x, count * sizeof *x, 0);
	ember_sim_access(y, count * sizeof *y, 0);
	ember_sim_access(y, count * sizeof *y, 1);
	for (size_t i = 0; i < count; i++)
		y[i] = a * x[i] + y[i];
}

/* ember_fill_u32(unsigned *p, unsigned value, size_t n): a grid-stride loop, so every element. */
static void fill_u32(const struct ember_sim_launch *launch, void **params)
{
	unsigned *p = *(unsigned *const *)params[0];
	unsigned value = *(const unsigned *)params[1];
	size_t n = *(const size_t *)params[2];
	if (n == 0)
		return;
	ember_sim_access(p, n * sizeof *p, 1);
	for (size_t i = 0; i < n; i++)
		p[i] = value;
}

/*
 * ember_reread_sum(const float *x, size_t n, unsigned passes, float *out):
 * reads all of x `passes` times, the pattern of hot data; *out is its sum.
 */
static void reread_sum(const struct ember_sim_launch *launch, void **params)
{
	const float *x = *(const float *const *)params[0];
	size_t n = *(const size_t *)params[1];
	unsigned passes = *(const unsigned *)params[2];
	float *out = *(float *const *)params[3];
	float sum = 0;
	for (unsigned pass = 0; pass < passes && n > 0; pass++) {
		ember_sim_access(x, n * sizeof *x, 0);
		float s = 0;
		for (size_t i = 0; i < n; i++)
			s += x[i];
		sum = s;
	}
	ember_sim_access(out, sizeof *out, 1);
	*out = sum;
}

void sim_register_builtin_kernels(void)
{
	static const size_t saxpy_params[] = { sizeof(float), sizeof(void *), sizeof(void *), sizeof(unsigned) };
	static const size_t fill_params[] = { sizeof(void *), sizeof(unsigned), sizeof(size_t) };
	static const size_t reread_params[] = { sizeof(void *), sizeof(size_t), sizeof(unsigned), sizeof(void *) };
	ember_sim_register_kernel("ember_saxpy", saxpy, saxpy_params, 4);
	ember_sim_register_kernel("ember_fill_u32", fill_u32, fill_params, 3);
	ember_sim_register_kernel("ember_reread_sum", reread_sum, reread_params, 4);
}
