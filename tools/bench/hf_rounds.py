"""hf-rounds: hf_generate.py's measurement in several processes forked from one.

Token generation at 0.5x is launch-bound, and one process's generations
agree within a few percent while two processes of the same variant can
differ by half (0.11 against 0.18 s per 8 tokens, ab-21): one process per
variant cannot tell a 5% difference. This process imports torch and
transformers once (some 10 s) and then forks CHILDREN processes one after
another, each of which builds the model and generates as hf_generate.py
does. Run it under ember-run, or without, as any program: importing torch
loads the driver (Ember's libcuda.so.1 under ember-run), but no child
inherits a CUDA context, since the parent makes none. A caller interleaves
variants by running one such process per variant in turn (see
results/suite/ab-22).

    python3 hf_rounds.py VARIANT ROUND CHILDREN ARCH SIZE NEW_TOKENS RUNS

One JSON line a child: its hf-generate record with variant, round, child,
whether Ember was active and the drivers mapped in the process.
"""
import json
import os
import sys

import ember_hooks
import hf_generate


def drivers_loaded():
    """The libcuda objects (Ember's is libember.so) mapped into this process."""
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if "libcuda.so" in line or "libember" in line})


def main():
    variant, rnd, children = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    arch, size, new_tokens, runs = sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
    failed = 0
    for child in range(children):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                rec = hf_generate.measure(arch, size, new_tokens, runs)
                rec.update(variant=variant, round=rnd, child=child, ember_active=ember_hooks.active(),
                           drivers=drivers_loaded())
            except BaseException as e:  # a child's failure is its record, not the parent's
                rec, code = {"variant": variant, "round": rnd, "child": child, "error": repr(e)}, 1
            print(json.dumps(rec), flush=True)
            sys.exit(code)  # exit, not _exit: Ember writes its statistics at exit
        _, status = os.waitpid(pid, 0)
        failed += os.waitstatus_to_exitcode(status) != 0
    # _exit: the parent made no CUDA work, and its statistics would overwrite the last child's
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
