"""Whether PyTorch can share a CUDA tensor with another process (CUDA IPC).

Prints one JSON line: shared (whether the storage's IPC handle was made),
error (the first line of PyTorch's error otherwise) and is_managed (the
driver's CU_POINTER_ATTRIBUTE_IS_MANAGED for the tensor's memory). Run it
without Ember and under EMBER_MANAGE_ALL=1, which converts the caching
allocator's cudaMalloc into managed memory that IPC cannot share.
"""
import ctypes
import json

import torch

CU_POINTER_ATTRIBUTE_IS_MANAGED = 8


def is_managed(ptr):
    flag = ctypes.c_int(-1)
    libcuda = ctypes.CDLL("libcuda.so.1")
    libcuda.cuPointerGetAttribute(ctypes.byref(flag), CU_POINTER_ATTRIBUTE_IS_MANAGED, ctypes.c_uint64(ptr))
    return flag.value


x = torch.ones(1 << 20, device="cuda")
record = {"shared": False, "error": None, "is_managed": is_managed(x.data_ptr())}
try:
    x.untyped_storage()._share_cuda_()
    record["shared"] = True
except RuntimeError as e:
    record["error"] = str(e).strip().splitlines()[0]
print(json.dumps(record))
