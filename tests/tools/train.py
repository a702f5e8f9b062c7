"""A stand-in for the user's train.py (tests/tools/test_wheel.sh): under
ember-run, a Python program that loads libcuda.so.1 as PyTorch or CuPy do
(dlopen by its SONAME) gets Ember, which forwards to the driver ember-run
chose (the simulated one here). It allocates managed memory, touches it from
the host, asks Ember where it is, and prints one line per fact."""
import ctypes
import sys

cuda = ctypes.CDLL("libcuda.so.1")


def check(what, rc):
    if rc != 0:
        sys.exit("train.py: %s failed: CUresult %d" % (what, rc))


if not hasattr(cuda, "ember_version"):
    sys.exit("train.py: libcuda.so.1 is not Ember (no ember_version)")
cuda.ember_version.restype = ctypes.c_char_p
cuda.ember_real_driver.restype = ctypes.c_char_p
print("ember", cuda.ember_version().decode(), "active" if cuda.ember_is_active() else "inactive")
print("driver", cuda.ember_real_driver().decode())

check("cuInit", cuda.cuInit(0))
count = ctypes.c_int()
check("cuDeviceGetCount", cuda.cuDeviceGetCount(ctypes.byref(count)))
dev = ctypes.c_int()
check("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(dev), 0))
name = ctypes.create_string_buffer(256)
check("cuDeviceGetName", cuda.cuDeviceGetName(name, 256, dev))
print("devices", count.value, name.value.decode())
ctx = ctypes.c_void_p()
check("cuDevicePrimaryCtxRetain", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
check("cuCtxSetCurrent", cuda.cuCtxSetCurrent(ctx))

size = 8 << 20
ptr = ctypes.c_uint64()
CU_MEM_ATTACH_GLOBAL = 1
check("cuMemAllocManaged", cuda.cuMemAllocManaged(ctypes.byref(ptr), ctypes.c_size_t(size), CU_MEM_ATTACH_GLOBAL))
buf = (ctypes.c_ubyte * size).from_address(ptr.value)
ctypes.memset(ptr.value, 0x5A, size)
if buf[0] != 0x5A or buf[size - 1] != 0x5A:
    sys.exit("train.py: managed memory did not hold what was written")


class RegionInfo(ctypes.Structure):
    _fields_ = [("state", ctypes.c_int), ("device", ctypes.c_int), ("app_hinted", ctypes.c_int),
                ("demand", ctypes.c_uint), ("score", ctypes.c_float), ("grace_ns", ctypes.c_ulonglong)]


info = RegionInfo()
rc = cuda.ember_region_info(ctypes.c_void_p(ptr.value), ctypes.byref(info))
print("region", "known" if rc == 0 else "unknown (%d)" % rc, "state", info.state)
check("cuMemFree", cuda.cuMemFree_v2(ctypes.c_uint64(ptr.value)))
check("cuDevicePrimaryCtxRelease", cuda.cuDevicePrimaryCtxRelease_v2(dev))
print("train.py: ok")
