"""Whether PyTorch can share a CUDA tensor with another process (CUDA IPC),
and whether the driver exports the tensor's memory as a dma-buf.

Prints one JSON line: shared (whether the storage's IPC handle was made),
error (the first line of PyTorch's error otherwise), is_managed (the
driver's CU_POINTER_ATTRIBUTE_IS_MANAGED for the tensor's memory),
dmabuf_supported (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) and dmabuf (the
CUresult of cuMemGetHandleForAddressRange for the tensor's 4 MiB, the
export NCCL's network path and RDMA NICs use; the descriptor is closed).
Run it without Ember and under EMBER_MANAGE_ALL=1, which converts the
caching allocator's cudaMalloc into managed memory that IPC cannot share.
"""
import ctypes
import json
import os

import torch

CU_POINTER_ATTRIBUTE_IS_MANAGED = 8
CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124
CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1
libcuda = ctypes.CDLL("libcuda.so.1")


def is_managed(ptr):
    flag = ctypes.c_int(-1)
    libcuda.cuPointerGetAttribute(ctypes.byref(flag), CU_POINTER_ATTRIBUTE_IS_MANAGED, ctypes.c_uint64(ptr))
    return flag.value


def dmabuf(ptr, size):
    """The CUresult of exporting [ptr, ptr + size) as a dma-buf; the descriptor made is closed."""
    fd = ctypes.c_int(-1)
    r = libcuda.cuMemGetHandleForAddressRange(ctypes.byref(fd), ctypes.c_uint64(ptr), ctypes.c_size_t(size),
                                              CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ctypes.c_ulonglong(0))
    if fd.value >= 0:
        os.close(fd.value)
    return r


def dmabuf_supported():
    flag = ctypes.c_int(-1)
    libcuda.cuDeviceGetAttribute(ctypes.byref(flag), CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0)
    return flag.value


x = torch.ones(1 << 20, device="cuda")  # 4 MiB, a segment of its own, so page-aligned
record = {"shared": False, "error": None, "is_managed": is_managed(x.data_ptr()),
          "dmabuf_supported": dmabuf_supported(), "dmabuf": dmabuf(x.data_ptr(), x.numel() * x.element_size())}
try:
    x.untyped_storage()._share_cuda_()
    record["shared"] = True
except RuntimeError as e:
    record["error"] = str(e).strip().splitlines()[0]
print(json.dumps(record))
