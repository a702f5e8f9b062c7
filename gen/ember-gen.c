/*
 * ember-gen: derive Ember's driver API surface from the installed toolkit.
 *
 * Inputs
 *   --stub FILE       the toolkit's stub libcuda.so; its dynamic symbol table
 *                     (read with libelf) is the list of names the shim exports
 *   --typedefs FILE   cudaTypedefs.h-style headers (repeatable); each
 *                     PFN_<name>_v<version>[_ptds|_ptsz] typedef is one
 *                     (name, version, per-thread) row of cuGetProcAddress
 *   --hooks FILE      shim/abi/hooks.def and copies.def (repeatable): exports
 *                     that Ember defines itself
 *   --out DIR         where the outputs go
 *
 * Outputs (all in DIR, all rebuilt by CMake, never committed)
 *   ember_exports.def   EMBER_EXPORT(name) per export, sorted: the slot order
 *   ember_forwarders.S  one tail-jump forwarder per export Ember does not hook
 *   ember_versions.c    the versioned table that cuGetProcAddress answers from
 *
 * Version rows map to export names by the rule the headers follow: the plain
 * versions of a name, in ascending order, are exported as name, name_v2,
 * name_v3, ...; a per-thread row of version v takes the export of the newest
 * plain version <= v and appends its _ptds/_ptsz suffix. Every mapped name
 * must be an export of the stub, or generation fails: a toolkit that breaks
 * the rule is caught at build time, not at run time.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct strvec {
	char **items;
	size_t len, cap;
};

struct version_row {
	char *base;   /* "cuMemAlloc" */
	int version;  /* 3020 */
	char suffix[6]; /* "", "_ptds" or "_ptsz" */
	const char *export_name; /* resolved: "cuMemAlloc_v2" */
};

static struct strvec exports, hooks;
static struct version_row *rows;
static size_t nrows, caprows;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ember-gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static void strvec_push(struct strvec *v, const char *s, size_t n)
{
	if (v->len == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->items = xrealloc(v->items, v->cap * sizeof *v->items);
	}
	v->items[v->len] = strndup(s, n);
	if (!v->items[v->len])
		die("out of memory");
	v->len++;
}

static void strvec_free(struct strvec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i]);
	free(v->items);
	*v = (struct strvec){ 0 };
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int strvec_has(const struct strvec *v, const char *s)
{
	return bsearch(&s, v->items, v->len, sizeof *v->items, cmp_str) != NULL;
}

/* Global function symbols named cu* that the stub defines. */
static void read_stub_exports(const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf: %s", elf_errmsg(-1));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("cannot open stub %s: %s", path, strerror(errno));
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		die("%s: %s", path, elf_errmsg(-1));
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			int bind = GELF_ST_BIND(sym.st_info);
			if (bind != STB_GLOBAL && bind != STB_WEAK)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && strncmp(name, "cu", 2) == 0)
				strvec_push(&exports, name, strlen(name));
		}
	}
	elf_end(elf);
	close(fd);
	if (exports.len == 0)
		die("%s exports no cu* functions: is it the toolkit's stub libcuda.so?", path);
	qsort(exports.items, exports.len, sizeof *exports.items, cmp_str);
	size_t w = 0; /* drop duplicates (versioned aliases) */
	for (size_t r = 0; r < exports.len; r++)
		if (w == 0 || strcmp(exports.items[w - 1], exports.items[r]) != 0)
			exports.items[w++] = exports.items[r];
	exports.len = w;
}

/* Rows from "typedef CUresult (CUDAAPI *PFN_<base>_v<ver>[_ptds|_ptsz])(". */
static void read_typedefs(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, "*PFN_");
		if (!p || !strstr(line, "typedef"))
			continue;
		p += 5;
		char *close = strchr(p, ')');
		if (!close)
			continue;
		/* the version is the last _v<digits> before an optional suffix */
		char name[512];
		size_t len = (size_t)(close - p);
		if (len >= sizeof name)
			continue;
		memcpy(name, p, len);
		name[len] = 0;
		char suffix[6] = "";
		if (len > 5 && (!strcmp(name + len - 5, "_ptds") || !strcmp(name + len - 5, "_ptsz"))) {
			strcpy(suffix, name + len - 5);
			name[len - 5] = 0;
		}
		char *v = strrchr(name, '_');
		if (!v || v[1] != 'v' || !isdigit((unsigned char)v[2]))
			continue;
		int version = atoi(v + 2);
		*v = 0;
		if (caprows == nrows) {
			caprows = caprows ? 2 * caprows : 1024;
			rows = xrealloc(rows, caprows * sizeof *rows);
		}
		rows[nrows] = (struct version_row){ .base = strdup(name), .version = version };
		strcpy(rows[nrows].suffix, suffix);
		nrows++;
	}
	fclose(f);
}

/* Lines of the form EMBER_HOOK(name) or EMBER_COPY(name, ...); anything else is a comment or blank. */
static void read_hooks(const char *path)
{
	static const char *const forms[] = { "EMBER_HOOK(", "EMBER_COPY(" };
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	char line[512];
	int lineno = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		size_t form = 0;
		while (form < 2 && strncmp(p, forms[form], strlen(forms[form])) != 0)
			form++;
		if (form == 2)
			continue;
		p += strlen(forms[form]);
		size_t n = strcspn(p, form == 0 ? ")" : ",");
		if (p[n] != (form == 0 ? ')' : ','))
			die("%s:%d: expected %sname%s", path, lineno, forms[form], form == 0 ? ")" : ", ...)");
		strvec_push(&hooks, p, n);
		if (!strvec_has(&exports, hooks.items[hooks.len - 1]))
			die("%s:%d: %s is not exported by the stub libcuda; Ember can only rewrite driver exports", path,
			    lineno, hooks.items[hooks.len - 1]);
	}
	fclose(f);
}

static int cmp_row(const void *a, const void *b)
{
	const struct version_row *x = a, *y = b;
	int c = strcmp(x->base, y->base);
	if (c)
		return c;
	c = strcmp(x->suffix, y->suffix);
	if (c)
		return c;
	return (x->version > y->version) - (x->version < y->version);
}

/* Apply the naming rule described at the top of this file. */
static void resolve_rows(void)
{
	qsort(rows, nrows, sizeof *rows, cmp_row);
	size_t w = 0; /* headers repeat some typedefs under #if branches */
	for (size_t r = 0; r < nrows; r++)
		if (w == 0 || cmp_row(&rows[w - 1], &rows[r]) != 0)
			rows[w++] = rows[r];
	nrows = w;

	for (size_t i = 0; i < nrows;) {
		size_t end = i;
		while (end < nrows && !strcmp(rows[end].base, rows[i].base))
			end++;
		/* plain rows sort first ("" < "_ptds"), ascending by version */
		size_t nplain = 0;
		while (i + nplain < end && rows[i + nplain].suffix[0] == 0)
			nplain++;
		for (size_t k = i; k < end; k++) {
			struct version_row *row = &rows[k];
			size_t plain_index = 0; /* newest plain row with version <= this one */
			int have_plain = 0;
			for (size_t j = 0; j < nplain; j++)
				if (rows[i + j].version <= row->version) {
					plain_index = j;
					have_plain = 1;
				}
			char name[600];
			if (!have_plain || plain_index == 0)
				snprintf(name, sizeof name, "%s%s", row->base, row->suffix);
			else
				snprintf(name, sizeof name, "%s_v%zu%s", row->base, plain_index + 1, row->suffix);
			char *s = name;
			char **hit = bsearch(&s, exports.items, exports.len, sizeof *exports.items, cmp_str);
			if (!hit)
				die("%s at version %d%s maps to %s, which the stub does not export",
				    row->base, row->version, row->suffix, name);
			row->export_name = *hit;
		}
		i = end;
	}
}

static FILE *open_out(const char *dir, const char *file)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "w");
	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	/* .S files go through the C preprocessor, so one comment style fits all */
	fputs("/* generated by ember-gen from the CUDA toolkit; do not edit */\n", f);
	return f;
}

static void close_out(FILE *f)
{
	if (ferror(f) || fclose(f) != 0)
		die("write failed: %s", strerror(errno));
}

static void write_exports(const char *dir)
{
	FILE *f = open_out(dir, "ember_exports.def");
	for (size_t i = 0; i < exports.len; i++)
		fprintf(f, "EMBER_EXPORT(%s)\n", exports.items[i]);
	close_out(f);
}

/*
 * x86-64 forwarders. Each export is one indirect jump through its slot in
 * ember_slot_table. A slot starts out pointing at a lazy stub that loads the
 * slot number into %r11 (not an argument register) and enters
 * ember_lazy_common, which saves every argument register, asks the loader
 * for the real function, stores it in the slot and jumps to it with the
 * caller's registers and stack untouched. After that first call the path is
 * a single jmp: no lock, no allocation, no system call.
 */
static void write_forwarders(const char *dir)
{
	FILE *f = open_out(dir, "ember_forwarders.S");
	fputs("#if !defined(__x86_64__)\n"
	      "#error \"Ember's forwarders are written for x86-64 only\"\n"
	      "#endif\n"
	      "\t.section .note.GNU-stack,\"\",@progbits\n"
	      "\t.text\n", f);
	for (size_t i = 0; i < exports.len; i++) {
		const char *n = exports.items[i];
		if (strvec_has(&hooks, n))
			continue; /* Ember defines it in C */
		fprintf(f,
			"\t.globl %s\n\t.type %s, @function\n\t.p2align 4\n%s:\n"
			"\t.cfi_startproc\n\tjmp *ember_slot_table+%zu(%%rip)\n\t.cfi_endproc\n"
			"\t.size %s, .-%s\n",
			n, n, n, 8 * i, n, n);
	}
	for (size_t i = 0; i < exports.len; i++)
		fprintf(f, "\t.p2align 3\n.Llazy_%zu:\n\tmovl $%zu, %%r11d\n\tjmp ember_lazy_common\n", i, i);
	fputs("\t.p2align 4\n"
	      "\t.type ember_lazy_common, @function\n"
	      "ember_lazy_common:\n"
	      "\t.cfi_startproc\n"
	      "\tpushq %rbp\n"
	      "\t.cfi_def_cfa_offset 16\n"
	      "\t.cfi_offset %rbp, -16\n"
	      "\tmovq %rsp, %rbp\n"
	      "\t.cfi_def_cfa_register %rbp\n"
	      "\tsubq $192, %rsp\n"
	      "\tmovq %rdi, 0(%rsp)\n\tmovq %rsi, 8(%rsp)\n\tmovq %rdx, 16(%rsp)\n"
	      "\tmovq %rcx, 24(%rsp)\n\tmovq %r8, 32(%rsp)\n\tmovq %r9, 40(%rsp)\n"
	      "\tmovq %rax, 48(%rsp)\n"
	      "\tmovdqu %xmm0, 64(%rsp)\n\tmovdqu %xmm1, 80(%rsp)\n\tmovdqu %xmm2, 96(%rsp)\n"
	      "\tmovdqu %xmm3, 112(%rsp)\n\tmovdqu %xmm4, 128(%rsp)\n\tmovdqu %xmm5, 144(%rsp)\n"
	      "\tmovdqu %xmm6, 160(%rsp)\n\tmovdqu %xmm7, 176(%rsp)\n"
	      "\tmovl %r11d, %edi\n"
	      "\tcall ember_resolve_slot\n"
	      "\tmovq %rax, %r11\n"
	      "\tmovq 0(%rsp), %rdi\n\tmovq 8(%rsp), %rsi\n\tmovq 16(%rsp), %rdx\n"
	      "\tmovq 24(%rsp), %rcx\n\tmovq 32(%rsp), %r8\n\tmovq 40(%rsp), %r9\n"
	      "\tmovq 48(%rsp), %rax\n"
	      "\tmovdqu 64(%rsp), %xmm0\n\tmovdqu 80(%rsp), %xmm1\n\tmovdqu 96(%rsp), %xmm2\n"
	      "\tmovdqu 112(%rsp), %xmm3\n\tmovdqu 128(%rsp), %xmm4\n\tmovdqu 144(%rsp), %xmm5\n"
	      "\tmovdqu 160(%rsp), %xmm6\n\tmovdqu 176(%rsp), %xmm7\n"
	      "\tleave\n"
	      "\t.cfi_def_cfa %rsp, 8\n"
	      "\tjmp *%r11\n"
	      "\t.cfi_endproc\n"
	      "\t.size ember_lazy_common, .-ember_lazy_common\n", f);
	/* The slot table: writable, one pointer per export, hidden. */
	fputs("\t.section .data.rel.local,\"aw\"\n"
	      "\t.p2align 6\n"
	      "\t.globl ember_slot_table\n"
	      "\t.hidden ember_slot_table\n"
	      "\t.type ember_slot_table, @object\n"
	      "ember_slot_table:\n", f);
	for (size_t i = 0; i < exports.len; i++)
		fprintf(f, "\t.quad .Llazy_%zu\n", i);
	fprintf(f, "\t.size ember_slot_table, %zu\n", 8 * exports.len);
	close_out(f);
}

static void write_versions(const char *dir)
{
	FILE *f = open_out(dir, "ember_versions.c");
	fputs("#include \"api.h\"\n\n"
	      "/* Sorted by (base, per_thread, version): see api_lookup.c. */\n"
	      "const struct ember_api_row ember_api_rows[] = {\n", f);
	for (size_t i = 0; i < nrows; i++)
		fprintf(f, "\t{ \"%s\", %d, %d, EMBER_SLOT_%s },\n", rows[i].base, rows[i].version,
			rows[i].suffix[0] != 0, rows[i].export_name);
	fprintf(f, "};\nconst unsigned ember_api_row_count = %zu;\n", nrows);
	close_out(f);
}

static void usage(void)
{
	fputs("usage: ember-gen --stub libcuda.so --typedefs cudaTypedefs.h [--typedefs ...]\n"
	      "                 --hooks hooks.def [--hooks copies.def ...] --out DIR\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *stub = NULL, *out = NULL;
	struct strvec typedefs = { 0 }, hook_files = { 0 };
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--stub"))
			stub = argv[++i];
		else if (!strcmp(argv[i], "--typedefs"))
			strvec_push(&typedefs, argv[i + 1], strlen(argv[i + 1])), i++;
		else if (!strcmp(argv[i], "--hooks"))
			strvec_push(&hook_files, argv[i + 1], strlen(argv[i + 1])), i++;
		else if (!strcmp(argv[i], "--out"))
			out = argv[++i];
		else
			usage();
	}
	if (!stub || hook_files.len == 0 || !out || typedefs.len == 0)
		usage();

	read_stub_exports(stub);
	for (size_t i = 0; i < hook_files.len; i++)
		read_hooks(hook_files.items[i]);
	qsort(hooks.items, hooks.len, sizeof *hooks.items, cmp_str);
	for (size_t i = 1; i < hooks.len; i++)
		if (!strcmp(hooks.items[i - 1], hooks.items[i]))
			die("%s is hooked twice: Ember defines each export once", hooks.items[i]);
	for (size_t i = 0; i < typedefs.len; i++)
		read_typedefs(typedefs.items[i]);
	resolve_rows();

	write_exports(out);
	write_forwarders(out);
	write_versions(out);
	printf("ember-gen: %zu exports, %zu hooked, %zu versioned entry points\n", exports.len,
	       hooks.len, nrows);
	strvec_free(&typedefs);
	strvec_free(&hook_files);
	return 0;
}
