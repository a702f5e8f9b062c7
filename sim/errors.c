/* cuGetErrorName / cuGetErrorString: one row per result code the sim can say. */
#include "sim.h"

#define ROW(code, text) { code, #code, text }

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	ROW(CUDA_SUCCESS, "no error"),
	ROW(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	ROW(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	ROW(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	ROW(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	ROW(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool"),
	ROW(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
	ROW(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
	ROW(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	ROW(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	ROW(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license"),
	ROW(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	ROW(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	ROW(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
	ROW(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
	ROW(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
	ROW(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
	ROW(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
	ROW(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired"),
	ROW(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
	ROW(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered"),
	ROW(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture"),
	ROW(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "exclusive-thread device already in use by a different thread"),
	ROW(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"),
	ROW(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
	ROW(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain."),
	ROW(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	ROW(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	ROW(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
	ROW(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
	ROW(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
	ROW(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	ROW(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
	ROW(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	ROW(CUDA_ERROR_NOT_READY, "device not ready"),
	ROW(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	ROW(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
	ROW(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
	ROW(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
	ROW(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
	ROW(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process"),
	ROW(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
	ROW(CUDA_ERROR_ASSERT, "device-side assert triggered"),
	ROW(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	ROW(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"),
	ROW(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	ROW(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	ROW(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
	ROW(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
	ROW(CUDA_ERROR_UNKNOWN, "unknown error"),
};

static int find(CUresult code)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

/* Unknown codes: CUDA_ERROR_INVALID_VALUE and a NULL string, as the driver answers. */
SIM_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	int i = find(error);
	*pStr = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

SIM_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	int i = find(error);
	*pStr = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
