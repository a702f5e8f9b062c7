/*
 * What a kernel's own name says its pointer arguments point to. A C++
 * kernel's symbol is mangled with its parameter types: `__half const*` is
 * two bytes an element, `float*` four. Without them the launch scan takes a
 * count as four-byte elements, and llama.cpp's F16 weights, one buffer of
 * tensors back to back, were each credited twice their bytes, over the next
 * tensor (results/suite/diag's llama.cpp trace from the H200: 104,857,600
 * bytes for each 5120 x 5120 tensor of 52,428,800).
 */
#ifndef EMBER_KERNEL_TYPES_H
#define EMBER_KERNEL_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "cat_inputs.h"
#include "tensor_lists.h"

enum { EMBER_DECLARED_PARAMS = 32 };

/* What a kernel's name declares of its first EMBER_DECLARED_PARAMS parameters. */
struct ember_declared {
	uint8_t elem_size[EMBER_DECLARED_PARAMS]; /* the bytes each points to (0: no pointer, or a type not known) */
	uint32_t read_only;                       /* bit per parameter: a pointer to const, only read through */
	bool signature;                           /* the name declares the parameters: a C++ kernel's mangled name */
	struct ember_tensor_lists lists;          /* PyTorch's tensor-list argument, where it takes one */
	struct ember_cat_inputs cat;              /* torch.cat's inputs, where it is one of its kernels */
};

/*
 * From a demangled signature ("void k<__half>(__half const*, float*, int)"):
 * sizes[i] = the bytes of what parameter i points to, for a pointer to a
 * scalar or vector type the table knows, else 0, for the first max
 * parameters; and unless read_only is NULL, its bit i set when parameter i
 * (of the first max, and of the first 32) is a pointer to const, which the
 * kernel only reads through. Returns how many parameters the signature
 * has (0 when it is not one).
 */
unsigned ember_signature_pointee_sizes(const char *demangled, uint8_t *sizes, uint32_t *read_only, unsigned max);

/*
 * The same from a mangled name ("_Z..."), demangled by the process's own
 * C++ runtime where one is loaded (a CUDA program's host code is C++); 0
 * for a C kernel's plain name, or when there is none to demangle with.
 */
unsigned ember_kernel_pointee_sizes(const char *mangled, uint8_t *sizes, uint32_t *read_only, unsigned max);

/* Both, for a kernel's mangled name, into *out (cleared when it declares nothing). */
void ember_kernel_declared(const char *mangled, struct ember_declared *out);

#endif
