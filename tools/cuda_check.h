// CHECK(call): a CUDA runtime call that must succeed. When it does not, the
// program names itself, the place and the call, and exits 1. The one copy
// for the tools' CUDA programs (tools/bench, tools/ember-sim).
#pragma once

#include <cerrno> // program_invocation_short_name (glibc)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifdef __FILE_NAME__
#define CHECK_FILE __FILE_NAME__
#else
#define CHECK_FILE __FILE__
#endif

#define CHECK(call)                                                                                           \
	do {                                                                                                  \
		cudaError_t e_ = (call);                                                                      \
		if (e_ != cudaSuccess) {                                                                      \
			fprintf(stderr, "%s: %s:%d: %s: %s\n", program_invocation_short_name, CHECK_FILE, __LINE__, \
				#call, cudaGetErrorString(e_));                                               \
			exit(1);                                                                              \
		}                                                                                             \
	} while (0)
