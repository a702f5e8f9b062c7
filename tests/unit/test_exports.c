/* The shim exports every cu* function that the toolkit's stub libcuda exports. */
#include <criterion/criterion.h>
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "api.h"

/* Calls fn(name) for each defined cu* function in a library's dynamic symbol table. */
static size_t for_each_cu_export(const char *path, void (*fn)(const char *, void *), void *arg)
{
	cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "cannot open %s", path);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	size_t count = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			gelf_getsym(data, (int)i, &sym);
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) == STT_FUNC && name &&
			    !strncmp(name, "cu", 2)) {
				fn(name, arg);
				count++;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return count;
}

struct check {
	void *shim;
	char shim_real[PATH_MAX];
	size_t missing;
};

static void check_exported(const char *name, void *arg)
{
	struct check *c = arg;
	void *p = dlsym(c->shim, name);
	Dl_info info;
	char where[PATH_MAX];
	if (!p || !dladdr(p, &info) || !realpath(info.dli_fname, where) || strcmp(where, c->shim_real)) {
		cr_log_error("the shim does not export %s", name);
		c->missing++;
	}
}

Test(exports, every_stub_export_is_exported_by_the_shim)
{
	struct check c = { .missing = 0 };
	c.shim = dlopen(EMBER_SHIM_PATH, RTLD_LAZY | RTLD_LOCAL);
	cr_assert_not_null(c.shim, "%s", dlerror());
	cr_assert_not_null(realpath(EMBER_SHIM_PATH, c.shim_real));
	size_t n = for_each_cu_export(EMBER_STUB_PATH, check_exported, &c);
	cr_expect_gt(n, 600, "the stub lists only %zu cu* functions", n);
	cr_expect_eq(c.missing, 0, "%zu of %zu stub exports are missing from the shim", c.missing, n);
	cr_expect_eq((size_t)EMBER_SLOT_COUNT, n, "the generated table covers every stub export");
}

/* DT_SONAME of a shared library, read with libelf. */
static void read_soname(const char *path, char *out, size_t len)
{
	out[0] = 0;
	cr_assert_neq(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			gelf_getdyn(data, (int)i, &dyn);
			if (dyn.d_tag == DT_SONAME)
				snprintf(out, len, "%s", elf_strptr(elf, sh.sh_link, dyn.d_un.d_val));
		}
	}
	elf_end(elf);
	close(fd);
}

static void count_one(const char *name, void *arg)
{
	(void)name;
	++*(size_t *)arg;
}

Test(exports, the_shim_has_the_driver_soname_and_no_driver_dependency)
{
	char soname[64];
	read_soname(EMBER_SHIM_PATH, soname, sizeof soname);
	cr_expect_str_eq(soname, "libcuda.so.1");
	size_t shim_count = 0;
	for_each_cu_export(EMBER_SHIM_PATH, count_one, &shim_count);
	cr_expect_geq(shim_count, (size_t)EMBER_SLOT_COUNT);
	void *shim = dlopen(EMBER_SHIM_PATH, RTLD_LAZY | RTLD_LOCAL);
	cr_assert_not_null(shim);
	/* loading alone must not open any driver: that happens on the first call */
	cr_expect_null(dlopen("libember-sim.so", RTLD_NOLOAD | RTLD_LAZY));
	cr_expect_not_null(dlsym(shim, "ember_version"));
}

/*
 * The forwarding path is one instruction: jmp *slot(%rip). After the first
 * call the slot holds the driver's own function, so a forwarded call takes
 * no lock, allocates nothing and makes no system call.
 */
Test(exports, each_forwarder_is_one_indirect_jump_to_the_driver)
{
	setenv("EMBER_REAL_LIBCUDA", EMBER_SIM_PATH, 1);
	void *sim = dlopen(EMBER_SIM_PATH, RTLD_NOW | RTLD_LOCAL);
	void *shim = dlopen(EMBER_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
	cr_assert(sim && shim);
	const char *names[] = { "cuInit", "cuDriverGetVersion", "cuStreamQuery", "cuCtxGetCurrent" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const unsigned char *code = dlsym(shim, names[i]);
		cr_assert_not_null(code);
		cr_assert(code[0] == 0xff && code[1] == 0x25, "%s does not start with jmp *rel32(%%rip)", names[i]);
		int32_t rel;
		memcpy(&rel, code + 2, sizeof rel);
		void *const *slot = (void *const *)(code + 6 + rel);
		if (i == 0) {
			CUresult (*init)(unsigned) = (CUresult(*)(unsigned))code;
			cr_assert_eq(init(0), CUDA_SUCCESS);
			cr_expect_eq(*slot, dlsym(sim, names[i]), "after one call the slot holds the driver's function");
		}
	}
	/* rewritten entry points are Ember's own C functions instead */
	const unsigned char *gpa = dlsym(shim, "cuGetProcAddress_v2");
	cr_expect(!(gpa[0] == 0xff && gpa[1] == 0x25));
}
