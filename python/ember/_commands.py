"""The console scripts: each replaces this Python process with the carried
command (os.execv), so signals, the exit status and /proc/self/exe are the
command's own; ember-run then finds ../lib/ember/libember.so beside itself."""
import os
import sys

from . import bin_dir


def _exec(name, interpreter=False):
    path = os.path.join(bin_dir(), name)
    if not os.path.exists(path):
        sys.stderr.write("%s: not in this wheel (%s is missing)\n" % (name, path))
        sys.exit(127)
    argv = [name] + sys.argv[1:]
    try:
        if interpreter:  # a Python script: run it with this venv's interpreter
            os.execv(sys.executable, [sys.executable, path] + sys.argv[1:])
        os.execv(path, argv)
    except OSError as e:
        sys.stderr.write("%s: cannot run %s: %s\n" % (name, path, e.strerror))
        sys.exit(127)


def ember_run():
    _exec("ember-run")


def ember_stat():
    _exec("ember-stat", interpreter=True)


def ember_top():
    # links ncurses: the system's (libncurses6), or the copy a manylinux wheel carries (ember.libs/)
    _exec("ember-top")


def ember_sim():
    _exec("ember-sim")
