"""hf-rounds: hf_generate.py's generation in many processes, variants interleaved.

Token generation at 0.5x is launch-bound, and one process's generations
agree within a few percent while two processes of the same variant can
differ by half (0.11 against 0.18 s per 8 tokens, ab-21): one process per
variant cannot tell a 5% difference. This runs ROUNDS rounds; each round
forks one child per variant, in turn, from a parent that has imported
torch and transformers but never touched CUDA. So a child costs its model's
load and generation, not the 15 s of imports, and the comparison is many
processes against many.

A child is an ordinary process from its first CUDA call on: it sets its
variant's EMBER_* variables, then loads Ember's library (whose name is
libcuda.so.1, so the CUDA runtime's own dlopen of the driver finds it, as
LD_PRELOAD would have), or nothing for `resident`, and runs hf_generate's
build and generation.

    python3 hf_rounds.py ARCH SIZE NEW_TOKENS RUNS ROUNDS LIBEMBER VARIANT...

VARIANT is NAME or NAME:VAR=VALUE,VAR=VALUE: `resident` loads nothing,
any other name loads LIBEMBER with its variables (EMBER_STATS may name
{round} to keep each child's statistics). One JSON line a child: its
hf-generate record with variant, round and ember_active added.
"""
import ctypes
import json
import os
import sys

import hf_generate


def parse_variant(spec):
    name, _, assigns = spec.partition(":")
    env = dict(a.split("=", 1) for a in assigns.split(",") if a)
    return name, env


def child(arch, size, new_tokens, runs, lib, name, env, rnd):
    if name != "resident":
        for k, v in env.items():
            os.environ[k] = v.replace("{round}", str(rnd))
        ctypes.CDLL(lib, mode=os.RTLD_NOW | os.RTLD_GLOBAL)  # before the runtime's dlopen("libcuda.so.1")
    rec = hf_generate.measure(arch, size, new_tokens, runs)
    try:
        active = bool(ctypes.CDLL(None).ember_is_active())
    except AttributeError:
        active = False
    rec.update(variant=name, round=rnd, ember_active=active)
    print(json.dumps(rec), flush=True)


def main():
    arch, size = sys.argv[1], sys.argv[2]
    new_tokens, runs, rounds = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    lib = os.path.abspath(sys.argv[6])
    variants = [parse_variant(s) for s in sys.argv[7:]]
    failed = 0
    for rnd in range(rounds):
        # the order turns each round, so no variant always follows the same one
        for name, env in variants[rnd % len(variants):] + variants[:rnd % len(variants)]:
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    child(arch, size, new_tokens, runs, lib, name, env, rnd)
                except BaseException as e:  # a child's failure is its record, not the parent's
                    print(json.dumps({"variant": name, "round": rnd, "error": repr(e)}), flush=True)
                    code = 1
                sys.stdout.flush()
                sys.exit(code)  # exit, not _exit: Ember's statistics are written at exit
            _, status = os.waitpid(pid, 0)
            failed += os.waitstatus_to_exitcode(status) != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
