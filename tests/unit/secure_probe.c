/*
 * Run by test_secure as a setgid program: it loads the shim by absolute
 * path (ld.so ignores LD_PRELOAD under secure execution, so this is how a
 * machine-wide install reaches such a program) and prints what the shim
 * did with the caller's environment.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!shim)
		return 3;
	CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(shim, "cuInit");
	const char *(*driver)(void) = (const char *(*)(void))dlsym(shim, "ember_real_driver");
	if (!init || !driver)
		return 4;
	CUresult r = init(0);
	printf("secure %lu cuInit %d driver '%s'\n", getauxval(AT_SECURE), (int)r, driver());
	return 0;
}
