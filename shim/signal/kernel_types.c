/* What a kernel's mangled name says its pointer arguments point to (kernel_types.h). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_types.h"

/* The element types kernels take pointers to, as a demangler spells them. */
static const struct {
	const char *name;
	uint8_t bytes;
} known[] = {
	{ "float", 4 },
	{ "double", 8 },
	{ "int", 4 },
	{ "unsigned int", 4 },
	{ "long", 8 },
	{ "unsigned long", 8 },
	{ "long long", 8 },
	{ "unsigned long long", 8 },
	{ "short", 2 },
	{ "unsigned short", 2 },
	{ "char", 1 },
	{ "signed char", 1 },
	{ "unsigned char", 1 },
	{ "bool", 1 },
	{ "__half", 2 },
	{ "half", 2 },
	{ "_Float16", 2 },
	{ "__nv_bfloat16", 2 },
	{ "__bf16", 2 },
	{ "c10::Half", 2 },
	{ "c10::BFloat16", 2 },
	{ "__nv_fp8_e4m3", 1 },
	{ "__nv_fp8_e5m2", 1 },
	{ "__half2", 4 },
	{ "__nv_bfloat162", 4 },
	{ "char4", 4 },
	{ "uchar4", 4 },
	{ "short2", 4 },
	{ "float2", 8 },
	{ "int2", 8 },
	{ "uint2", 8 },
	{ "float3", 12 },
	{ "int3", 12 },
	{ "float4", 16 },
	{ "int4", 16 },
	{ "uint4", 16 },
	{ "double2", 16 },
};

static bool opens(char c) { return c == '(' || c == '<' || c == '['; }
static bool closes(char c) { return c == ')' || c == '>' || c == ']'; }

/* [*b, *e) without spaces at either end. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && **b == ' ')
		(*b)++;
	while (*e > *b && (*e)[-1] == ' ')
		(*e)--;
}

/* Whether [b, e) ends with the word w (after a space or a '*'), and if so drops it. */
static bool drop_last_word(const char *b, const char **e, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(*e - b) < n || memcmp(*e - n, w, n) != 0)
		return false;
	const char *word = *e - n;
	if (word > b && word[-1] != ' ' && word[-1] != '*')
		return false; /* the end of a longer name */
	*e -= n;
	return true;
}

/* [b, e) less the qualifiers a demangler writes after a type; whether `const` was among them. */
static bool drop_qualifiers(const char *b, const char **e)
{
	static const char *const words[] = { "const", "volatile", "restrict", "__restrict", "__restrict__" };
	bool is_const = false;
	for (bool again = true; again;) {
		again = false;
		trim(&b, e);
		for (size_t i = 0; i < sizeof words / sizeof words[0] && !again; i++)
			if ((again = drop_last_word(b, e, words[i])))
				is_const |= i == 0;
	}
	return is_const;
}

/*
 * What parameter [b, e) points to: its bytes (0 when it is no pointer or an
 * unknown type), and whether it is a pointer to const (*read_only), which
 * a kernel reads and never writes through (`float const*`, and `float*
 * const*` too: the array of pointers is read, whatever they point to).
 */
static uint8_t pointee(const char *b, const char *e, bool *read_only)
{
	*read_only = false;
	drop_qualifiers(b, &e);
	trim(&b, &e);
	if (e == b || e[-1] != '*')
		return 0;
	e--;
	*read_only = drop_qualifiers(b, &e);
	trim(&b, &e);
	if (e > b && e[-1] == '*')
		return (uint8_t)sizeof(void *); /* an array of pointers */
	if ((size_t)(e - b) > 6 && !memcmp(b, "const ", 6)) {
		b += 6;
		*read_only = true;
	}
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strlen(known[i].name) == (size_t)(e - b) && !memcmp(known[i].name, b, (size_t)(e - b)))
			return known[i].bytes;
	return 0;
}

unsigned ember_signature_pointee_sizes(const char *demangled, uint8_t *sizes, uint32_t *read_only, unsigned max)
{
	if (max)
		memset(sizes, 0, max);
	if (read_only)
		*read_only = 0;
	if (!demangled)
		return 0;
	const char *b = demangled, *e = demangled + strlen(demangled);
	trim(&b, &e);
	if (e == b || e[-1] != ')')
		return 0;
	/* the parameter list: the last parenthesis, back to its match */
	const char *close = e - 1, *open = NULL;
	int depth = 0;
	for (const char *p = e; p > b;) { /* back from the ')', never before b */
		p--;
		if (closes(*p))
			depth++;
		else if (opens(*p) && --depth == 0) {
			open = p;
			break;
		}
	}
	if (!open || open == b)
		return 0;
	const char *lb = open + 1, *le = close;
	trim(&lb, &le);
	if (le == lb || (le - lb == 4 && !memcmp(lb, "void", 4)))
		return 0;
	unsigned n = 0;
	depth = 0;
	for (const char *p = lb, *start = lb; p <= le; p++) {
		if (p < le && opens(*p))
			depth++;
		else if (p < le && closes(*p))
			depth--;
		else if (p == le || (*p == ',' && depth == 0)) {
			bool to_const;
			uint8_t bytes = pointee(start, p, &to_const);
			if (n < max)
				sizes[n] = bytes;
			if (read_only && to_const && n < max && n < 32)
				*read_only |= 1u << n;
			n++;
			start = p + 1;
		}
	}
	return n;
}

typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/*
 * The C++ runtime's demangler, from a library already loaded: Ember
 * loads nothing into the program. Python loads PyTorch's and llama.cpp's
 * modules with their C++ runtime local to them, out of the global scope,
 * so the runtime is asked for by name first.
 */
static demangle_fn find_demangler(void)
{
	static const char *const runtimes[] = { "libstdc++.so.6", "libc++abi.so.1", "libc++.so.1" };
	for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		void *fn = dlsym(h, "__cxa_demangle");
		dlclose(h); /* NOLOAD took a reference: the library stays, loaded by the program */
		if (fn)
			return (demangle_fn)fn;
	}
	return (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

/* Found once and kept (a C++ runtime is not unloaded); looked for again while none is loaded. */
static demangle_fn demangler(void)
{
	static demangle_fn found;
	demangle_fn fn = __atomic_load_n(&found, __ATOMIC_ACQUIRE);
	if (!fn && (fn = find_demangler()))
		__atomic_store_n(&found, fn, __ATOMIC_RELEASE);
	return fn;
}

void ember_kernel_declared(const char *mangled, struct ember_declared *out)
{
	out->signature = ember_kernel_pointee_sizes(mangled, out->elem_size, &out->read_only, EMBER_DECLARED_PARAMS) > 0;
}

unsigned ember_kernel_pointee_sizes(const char *mangled, uint8_t *sizes, uint32_t *read_only, unsigned max)
{
	if (max)
		memset(sizes, 0, max);
	if (read_only)
		*read_only = 0;
	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return 0;
	demangle_fn demangle = demangler();
	int status = -1;
	char *text = demangle ? demangle(mangled, NULL, NULL, &status) : NULL;
	unsigned n = status == 0 ? ember_signature_pointee_sizes(text, sizes, read_only, max) : 0;
	free(text);
	return n;
}
