/*
 * The element sizes a kernel's mangled name declares for its pointer
 * arguments (shim/signal/kernel_types.c, linked in alone): signatures as
 * the C++ runtime's demangler writes them.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>

#include "kernel_types.h"

#define EXPECT_SIZES(sig, want_n, ...)                                                                      \
	do {                                                                                                \
		const uint8_t want[] = { __VA_ARGS__ };                                                      \
		uint8_t got[16];                                                                            \
		unsigned n = ember_signature_pointee_sizes(sig, got, NULL, 16);                                  \
		cr_expect_eq(n, want_n, "%s: %u parameters", sig, n);                                       \
		for (unsigned i = 0; i < sizeof want && i < 16; i++)                                        \
			cr_expect_eq(got[i], want[i], "%s: parameter %u points to %u bytes", sig, i, got[i]); \
	} while (0)

Test(kernel_types, a_templated_kernel_s_pointers_and_scalars)
{
	/* llama.cpp's F16 matrix-vector kernel, in the shape the demangler writes it */
	EXPECT_SIZES("void mul_mat_vec<__half, float, 1, 256>(__half const*, float const*, int const*, float*, int, int)",
		     6, 2, 4, 4, 4, 0, 0);
	EXPECT_SIZES("void k(float*, double const*, unsigned long, char*)", 4, 4, 8, 0, 1);
	EXPECT_SIZES("void k(__nv_bfloat16 const* __restrict__, float* restrict, c10::Half*)", 3, 2, 4, 2);
	EXPECT_SIZES("void k(float4 const*, __half2*, unsigned char*, long long*)", 4, 16, 4, 1, 8);
}

Test(kernel_types, what_it_cannot_size_is_zero)
{
	EXPECT_SIZES("void k(block_q4_0 const*, void const*, float**)", 3, 0, 0, 8);
	/* a struct argument with template arguments, commas and parentheses inside: one parameter, no pointer */
	EXPECT_SIZES("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<(lambda)>"
		     "(at::TensorIteratorBase&, (lambda) const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<"
		     "(lambda)>(at::TensorIteratorBase&, (lambda) const&)::{lambda(int)#1})",
		     2, 0, 0);
	EXPECT_SIZES("void (anonymous namespace)::fill(unsigned int*, unsigned int, unsigned long)", 3, 4, 0, 0);
	/* a type whose name ends in a qualifier's letters is not that qualifier */
	EXPECT_SIZES("void k(my_const*)", 1, 0);
}

/* A pointer to const is read, never written through: the bits the scan reads allocations as read-only by. */
Test(kernel_types, pointers_to_const_are_read_only)
{
	uint8_t got[8];
	uint32_t read_only = 0xffffffff;
	cr_expect_eq(ember_signature_pointee_sizes("void mul_mat_vec<__half, float>(__half const*, float const*, "
						   "float*, int const, void const*, block_q4_0 const* __restrict__)",
						   got, &read_only, 8),
		     6);
	cr_expect_eq(read_only, 0x33, "the halves, the floats read, void and struct pointers to const: %#x", read_only);
	cr_expect_eq(ember_signature_pointee_sizes("void k(const float*, float* const*, float const**, float* const)", got,
						   &read_only, 8),
		     4);
	/* a leading const; an array of pointers that is read; one whose pointers are const but not the array; a const pointer */
	cr_expect_eq(read_only, 0x3, "%#x", read_only);
	cr_expect_eq(ember_signature_pointee_sizes("void k(my_const*, int)", got, &read_only, 8), 2);
	cr_expect_eq(read_only, 0, "a type named like the qualifier is not const: %#x", read_only);
	cr_expect_eq(ember_signature_pointee_sizes("void k(float const*, float const*)", got, &read_only, 1), 2);
	cr_expect_eq(read_only, 0x1, "past max: no bit (%#x)", read_only);
	cr_expect_eq(ember_signature_pointee_sizes("t_touch", got, &read_only, 8), 0);
	cr_expect_eq(read_only, 0, "not a signature: cleared");
}

Test(kernel_types, what_is_not_a_signature_has_no_parameters)
{
	uint8_t got[4] = { 9, 9, 9, 9 };
	cr_expect_eq(ember_signature_pointee_sizes("void k()", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes("void k(void)", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes("t_touch", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes("", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes("k)", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes("((((", got, NULL, 4), 0);
	cr_expect_eq(ember_signature_pointee_sizes(NULL, got, NULL, 4), 0);
	cr_expect_eq(got[0] | got[1] | got[2] | got[3], 0, "cleared, whatever the signature");
}

Test(kernel_types, more_parameters_than_room_are_counted_not_written)
{
	uint8_t got[3] = { 0, 0, 7 };
	cr_expect_eq(ember_signature_pointee_sizes("void k(float*, double*, int*)", got, NULL, 2), 3);
	cr_expect_eq(got[0], 4);
	cr_expect_eq(got[1], 8);
	cr_expect_eq(got[2], 7, "past max: untouched");
}

/* A mangled name, demangled by the C++ runtime the program has loaded (here loaded local, as Python's modules are). */
Test(kernel_types, a_mangled_name_through_the_loaded_cxx_runtime)
{
	void *runtime = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(runtime, "a C++ runtime to stand for the program's: %s", dlerror());
	uint8_t got[4];
	/* half_piece(__half const*, unsigned long) */
	uint32_t read_only;
	cr_expect_eq(ember_kernel_pointee_sizes("_Z10half_piecePK6__halfm", got, &read_only, 4), 2);
	cr_expect_eq(got[0], 2);
	cr_expect_eq(got[1], 0);
	cr_expect_eq(read_only, 0x1, "the halves are read only: %#x", read_only);
	/* a C kernel's plain name, and a name the demangler refuses */
	cr_expect_eq(ember_kernel_pointee_sizes("t_touch", got, NULL, 4), 0);
	cr_expect_eq(ember_kernel_pointee_sizes("_Zfoo", got, NULL, 4), 0);
	cr_expect_eq(ember_kernel_pointee_sizes(NULL, got, NULL, 4), 0);
	dlclose(runtime);
}
