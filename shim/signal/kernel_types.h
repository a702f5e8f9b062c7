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

#include <stdint.h>

/*
 * From a demangled signature ("void k<__half>(__half const*, float*, int)"):
 * sizes[i] = the bytes of what parameter i points to, for a pointer to a
 * scalar or vector type the table knows, else 0, for the first max
 * parameters. Returns how many parameters the signature has (0 when it
 * is not one).
 */
unsigned ember_signature_pointee_sizes(const char *demangled, uint8_t *sizes, unsigned max);

/*
 * The same from a mangled name ("_Z..."), demangled by the process's own
 * C++ runtime where one is loaded (a CUDA program's host code is C++); 0
 * for a C kernel's plain name, or when there is none to demangle with.
 */
unsigned ember_kernel_pointee_sizes(const char *mangled, uint8_t *sizes, unsigned max);

#endif
