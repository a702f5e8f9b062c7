"""Ember, carried by a wheel: the drop-in libcuda.so.1, the simulated driver
and the commands (ember-run, ember-stat, ember-top), laid out as an installed
tree inside this package:

    ember/bin/ember-run, ember-stat, ember-top
    ember/lib/ember/libcuda.so.1, libcuda.so, libember.so, libember-sim.so

The console scripts pip puts on the PATH run those (ember._commands).
Nothing here is imported by Ember itself: it is C, loaded by ember-run.
"""
import os

__all__ = ["bin_dir", "lib_dir", "shim_path", "sim_path", "__version__"]

_here = os.path.dirname(os.path.abspath(__file__))

try:
    from importlib.metadata import version as _version

    __version__ = _version("ember")
except Exception:  # not installed as a distribution (a source tree)
    __version__ = "unknown"


def bin_dir():
    """The folder of the carried commands."""
    return os.path.join(_here, "bin")


def lib_dir():
    """The override directory: libcuda.so.1 (Ember), libember-sim.so."""
    return os.path.join(_here, "lib", "ember")


def shim_path():
    """Ember's library, for LD_PRELOAD without ember-run."""
    return os.path.join(lib_dir(), "libcuda.so.1")


def sim_path():
    """The simulated driver (ember-run --driver sim; EMBER_REAL_LIBCUDA)."""
    return os.path.join(lib_dir(), "libember-sim.so")
