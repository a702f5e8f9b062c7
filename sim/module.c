/*
 * Modules. The sim runs no GPU code: a module is the list of kernel names
 * its PTX declares (".entry NAME", optionally ".visible"), each bound at
 * cuModuleGetFunction time to the host function registered under that
 * name. The image "ember-sim:" stands for every registered kernel.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define EVERY_KERNEL_IMAGE "ember-sim:"
/* Larger PTX files than this are not something the sim is for. */
#define MAX_IMAGE_FILE (64u << 20)

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static bool add_entry(struct sim_module *m, const char *name, size_t len)
{
	char **grown = realloc(m->entries, (m->nentries + 1) * sizeof *grown);
	if (!grown)
		return false;
	m->entries = grown;
	if (!(m->entries[m->nentries] = strndup(name, len)))
		return false;
	m->nentries++;
	return true;
}

/* Skips a comment at p, if there is one. */
static const char *skip_comment(const char *p)
{
	if (p[0] == '/' && p[1] == '/')
		return p + strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		const char *end = strstr(p + 2, "*/");
		return end ? end + 2 : p + strlen(p);
	}
	return p;
}

/* Collects the name after each ".entry" directive, outside comments. */
static CUresult parse_ptx(struct sim_module *m, const char *ptx)
{
	static const char directive[] = ".entry";
	const size_t dlen = sizeof directive - 1;
	bool at_token_start = true;
	for (const char *p = ptx; *p;) {
		const char *after = skip_comment(p);
		if (after != p) {
			p = after;
			at_token_start = true;
			continue;
		}
		if (at_token_start && !strncmp(p, directive, dlen) && isspace((unsigned char)p[dlen])) {
			const char *name = p + dlen;
			while (isspace((unsigned char)*name))
				name++;
			const char *end = name;
			while (ident_char(*end))
				end++;
			if (end == name)
				return CUDA_ERROR_INVALID_PTX;
			if (!add_entry(m, name, (size_t)(end - name)))
				return CUDA_ERROR_OUT_OF_MEMORY;
			p = end;
			continue;
		}
		at_token_start = isspace((unsigned char)*p);
		p++;
	}
	return CUDA_SUCCESS;
}

/* Binary images (ELF cubins, fatbins) hold GPU code the sim cannot run. */
static bool binary_image(const unsigned char *b)
{
	static const unsigned char elf[] = { 0x7f, 'E', 'L', 'F' };
	static const unsigned char fatbin[] = { 0x50, 0xed, 0x55, 0xba };
	static const unsigned char fatbin_wrapper[] = { 0xb1, 0x43, 0x62, 0x46 };
	return !memcmp(b, elf, 4) || !memcmp(b, fatbin, 4) || !memcmp(b, fatbin_wrapper, 4);
}

CUresult sim_module_load(struct sim_module **out, const void *image, struct sim_ctx *ctx)
{
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	const char *text = image;
	/* read the first bytes one at a time: a short text image may end within four */
	bool short_text = !text[0] || !text[1] || !text[2] || !text[3];
	if (!short_text && binary_image(image))
		return CUDA_ERROR_INVALID_IMAGE;
	struct sim_module *m = calloc(1, sizeof *m);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->ctx = ctx;
	CUresult r = CUDA_SUCCESS;
	if (!strcmp(text, EVERY_KERNEL_IMAGE))
		m->every_kernel = true;
	else if (!strstr(text, ".version") && !strstr(text, ".entry"))
		r = CUDA_ERROR_INVALID_IMAGE; /* not PTX */
	else
		r = parse_ptx(m, text);
	if (r != CUDA_SUCCESS) {
		sim_module_destroy(m);
		return r;
	}
	*out = m;
	return CUDA_SUCCESS;
}

/* The whole file as a NUL-terminated string. */
static CUresult read_file(const char *path, char **out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	CUresult r = CUDA_SUCCESS;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *grown = cap <= MAX_IMAGE_FILE ? realloc(buf, cap) : NULL;
			if (!grown) {
				r = cap > MAX_IMAGE_FILE ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_OUT_OF_MEMORY;
				break;
			}
			buf = grown;
		}
		size_t n = fread(buf + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	if (r == CUDA_SUCCESS && ferror(f))
		r = CUDA_ERROR_FILE_NOT_FOUND;
	fclose(f);
	if (r != CUDA_SUCCESS) {
		free(buf);
		return r;
	}
	buf[len] = 0;
	*out = buf;
	return CUDA_SUCCESS;
}

CUresult sim_module_load_file(struct sim_module **out, const char *path, struct sim_ctx *ctx)
{
	if (!out || !path)
		return CUDA_ERROR_INVALID_VALUE;
	char *image;
	CUresult r = read_file(path, &image);
	if (r != CUDA_SUCCESS)
		return r;
	r = sim_module_load(out, image, ctx);
	free(image);
	return r;
}

static bool declares(const struct sim_module *m, const char *name)
{
	if (m->every_kernel)
		return true;
	for (size_t i = 0; i < m->nentries; i++)
		if (!strcmp(m->entries[i], name))
			return true;
	return false;
}

static struct sim_func *cached(const struct sim_module *m, const char *name)
{
	for (size_t i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i]->kernel->name, name))
			return m->funcs[i];
	return NULL;
}

/* The same handle every time for the same name, as the driver gives. */
CUresult sim_module_get_function(struct sim_func **out, struct sim_module *m, const char *name)
{
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	const struct sim_kernel *k = declares(m, name) ? sim_kernel_find(name) : NULL;
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&sim_code_lock);
	struct sim_func *f = cached(m, name);
	if (!f) {
		struct sim_func **grown = realloc(m->funcs, (m->nfuncs + 1) * sizeof *grown);
		f = grown ? malloc(sizeof *f) : NULL;
		if (grown)
			m->funcs = grown;
		if (f) {
			*f = (struct sim_func){ .mod = m, .kernel = k };
			m->funcs[m->nfuncs++] = f;
			sim_handle_add(SIM_H_FUNC, f, NULL);
		} else {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&sim_code_lock);
	if (r == CUDA_SUCCESS)
		*out = f;
	return r;
}

unsigned sim_module_function_count(const struct sim_module *m)
{
	return m->every_kernel ? sim_kernel_count() : (unsigned)m->nentries;
}

/* Frees a module that is no longer registered, with its functions. */
void sim_module_destroy(void *p)
{
	struct sim_module *m = p;
	for (size_t i = 0; i < m->nfuncs; i++) {
		sim_handle_remove(SIM_H_FUNC, m->funcs[i]);
		free(m->funcs[i]);
	}
	for (size_t i = 0; i < m->nentries; i++)
		free(m->entries[i]);
	free(m->funcs);
	free(m->entries);
	free(m);
}

void sim_modules_release_ctx(struct sim_ctx *ctx)
{
	sim_handles_drain(SIM_H_MODULE, ctx, sim_module_destroy);
}

/* ---- the cuModule API ---- */

static CUresult check(CUmodule h, struct sim_module **out)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_valid(SIM_H_MODULE, h))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_module *)h;
	return CUDA_SUCCESS;
}

static CUresult publish(CUmodule *module, struct sim_module *m)
{
	sim_handle_add(SIM_H_MODULE, m, m->ctx);
	*module = (CUmodule)m;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	SIM_INJECT("cuModuleLoadData");
	struct sim_ctx *ctx;
	struct sim_module *m;
	CUresult r = sim_current_ctx(&ctx);
	if (r == CUDA_SUCCESS)
		r = module ? sim_module_load(&m, image, ctx) : CUDA_ERROR_INVALID_VALUE;
	return r != CUDA_SUCCESS ? r : publish(module, m);
}

/*
 * JIT options change nothing here; log buffers the caller passes are
 * answered with empty logs, as a successful JIT would leave them.
 */
static void empty_jit_logs(unsigned n, const CUjit_option *options, void **values)
{
	for (unsigned i = 0; options && values && i < n; i++) {
		bool log = options[i] == CU_JIT_INFO_LOG_BUFFER || options[i] == CU_JIT_ERROR_LOG_BUFFER;
		bool size = options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
			    options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
		if (log && values[i])
			*(char *)values[i] = 0;
		else if (size)
			values[i] = NULL;
	}
}

SIM_EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
					       CUjit_option *options, void **optionValues)
{
	if (numOptions && (!options || !optionValues))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = cuModuleLoadData(module, image);
	if (r == CUDA_SUCCESS)
		empty_jit_logs(numOptions, options, optionValues);
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	struct sim_ctx *ctx;
	struct sim_module *m;
	CUresult r = sim_current_ctx(&ctx);
	if (r == CUDA_SUCCESS)
		r = module ? sim_module_load_file(&m, fname, ctx) : CUDA_ERROR_INVALID_VALUE;
	return r != CUDA_SUCCESS ? r : publish(module, m);
}

SIM_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	SIM_REQUIRE_INIT();
	if (!sim_handle_remove(SIM_H_MODULE, hmod))
		return CUDA_ERROR_INVALID_HANDLE;
	sim_module_destroy(hmod);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	struct sim_module *m;
	struct sim_func *f;
	CUresult r = check(hmod, &m);
	if (r == CUDA_SUCCESS)
		r = hfunc ? sim_module_get_function(&f, m, name) : CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*hfunc = (CUfunction)f;
	return r;
}

SIM_EXPORT CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	struct sim_module *m;
	CUresult r = check(mod, &m);
	if (r == CUDA_SUCCESS && !count)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*count = sim_module_function_count(m);
	return r;
}
