#!/usr/bin/env python3
"""Corrupt stored cases and reports at random and run aclnn-conform on them: every run must end
with exit 0, 1 or 2 and no sanitizer report (run it against the sanitizer build to see leaks and
undefined behaviour).  Standard library only.

    tests/file_fuzz.py TOOL CORPUS_DIR [TRIALS]
"""
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def mutate(b, is_json):
    op = random.randrange(4)
    if op == 0 and b:
        return b[:random.randrange(len(b))]                          # truncated
    if op == 1 and b:
        b = bytearray(b)
        for _ in range(random.randint(1, 8)):
            b[random.randrange(len(b))] = random.randrange(256)     # flipped bytes
        return bytes(b)
    if op == 2 and is_json:
        t = b.decode("latin1")
        nums = [m.start() for m in re.finditer(r"\d+", t)]
        if nums:
            i = random.choice(nums)
            t = t[:i] + random.choice(["-1", "99999999999", "4294967296", "1e300", "null,", '"']) + t[i:]
        return t.encode("latin1")
    return b + bytes(random.randrange(256) for _ in range(random.randint(1, 64)))  # trailing garbage


def run(tool, args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1")
    emu = shlex.split(os.environ.get("ACLCONFORM_TEST_EMULATOR", ""))  # a cross build's qemu-user
    r = subprocess.run(emu + [tool] + args, capture_output=True, env=env, timeout=300)
    err = r.stderr.decode(errors="replace")
    ok = r.returncode in (0, 1, 2) and "Sanitizer" not in err and "runtime error" not in err
    return ok, r.returncode, err


def main():
    tool, corpus = sys.argv[1], sys.argv[2]
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    random.seed(7)
    cases = sorted(os.path.join(corpus, op, c) for op in os.listdir(corpus)
                   if os.path.isdir(os.path.join(corpus, op)) for c in os.listdir(os.path.join(corpus, op)))
    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "base.json")
        run(tool, ["sweep", "--cases", "2", "--seed", "5", "--no-store", "--output", report])
        base = open(report, "rb").read()
        for t in range(trials):
            d = os.path.join(tmp, "case")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(random.choice(cases), d)
            f = os.path.join(d, random.choice(os.listdir(d)))
            data = open(f, "rb").read()
            open(f, "wb").write(mutate(data, f.endswith(".json")))
            bad = os.path.join(tmp, "bad.json")
            open(bad, "wb").write(mutate(base, True))
            for args in (["replay", d, "--quiet"], ["report", bad, "--format", "html", "-o", os.path.join(tmp, "r.html")],
                         ["merge", bad, report, "-o", os.path.join(tmp, "m.json")]):
                ok, rc, err = run(tool, args)
                if not ok:
                    problems += 1
                    print("trial %d: %s exited %d\n%s" % (t, args[0], rc, err[:800]))
    print("file_fuzz: %d passed, %d failed" % (3 * trials - problems, problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
