/*
 * Can the simulated driver serve this program? It implements the driver
 * API for programs that load PTX or its own kernel names (ember-demo, the
 * tests); the CUDA runtime (cudart) first asks the driver for private
 * export tables that only NVIDIA's driver has, and then fails with
 * cudaErrorNotSupported and no hint. So ember-run --driver sim refuses an
 * executable that carries cudart, dynamically or statically, before it
 * starts. Scripts and anything else it cannot read are let through: the
 * simulated driver then says so itself at the first private table asked
 * for (sim/exporttable.c).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_check.h"

/* program as execvp would find it */
static int resolve(const char *program, char *out, size_t len)
{
	if (strchr(program, '/'))
		return snprintf(out, len, "%s", program) < (int)len ? 0 : -1;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");
		if (n && snprintf(out, len, "%.*s/%s", (int)n, p, program) < (int)len && access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

/* What in the ELF file says cudart: nvcc's fatbin section, a DT_NEEDED libcudart, or its registration symbol defined. */
static const char *cudart_in(Elf *elf)
{
	size_t names;
	if (elf_getshdrstrndx(elf, &names) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *section = elf_strptr(elf, names, sh.sh_name);
		if (section && !strcmp(section, ".nv_fatbin")) /* nvcc's kernels, registered by cudart: stripped too */
			return "it carries nvcc-built kernels and the CUDA runtime that registers them";
		if (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (sh.sh_type == SHT_DYNAMIC) {
				GElf_Dyn dyn;
				const char *name = gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_NEEDED
							   ? elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)
							   : NULL;
				if (name && !strncmp(name, "libcudart.so", 12))
					return "it links the CUDA runtime (libcudart)";
				continue;
			}
			GElf_Sym sym;
			const char *name = gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF
						   ? elf_strptr(elf, sh.sh_link, sym.st_name)
						   : NULL;
			if (name && !strcmp(name, "__cudaRegisterFatBinary"))
				return "it carries the CUDA runtime, linked statically (nvcc's default)";
		}
	}
	return NULL;
}

int ember_run_sim_check(const char *program, char *why, size_t len)
{
	char path[PATH_MAX];
	if (resolve(program, path, sizeof path) != 0 || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const char *found = elf && elf_kind(elf) == ELF_K_ELF ? cudart_in(elf) : NULL;
	if (found)
		snprintf(why, len, "%s", found);
	if (elf)
		elf_end(elf);
	close(fd);
	return found ? -1 : 0;
}
