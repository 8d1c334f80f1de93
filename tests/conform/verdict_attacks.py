#!/usr/bin/env python3
"""Issue 11 "a verdict you can trust": crafted case, report and export files that must end in
exit 2 (input error) naming the file and field -- never a ULP failure, a status mismatch, a
file written outside its directory, a hang or a crash.

usage: verdict_attacks.py AClNN_CONFORM DATA_DIR [GROUP...]   (groups: case merge report score)
Each attack prints one line; the exit status is the number of attacks that misbehaved."""
import copy, json, os, shutil, subprocess, sys, tempfile

B, DATA = sys.argv[1], sys.argv[2]
GROUPS = sys.argv[3:] or ["case", "merge", "report", "score"]
LOGIT = os.path.join(DATA, "examples/logit_grad/8872fe16f3f6a2fe")
SOFTPLUS = os.path.join(DATA, "examples/softplus_backward/5fe457886ceada4b")
tmp = tempfile.mkdtemp(prefix="verdict_attacks_")
bad = 0


def run(args, timeout=60):
    # bounded address space: a reader that trusts a manifest's size must fail, not take the host
    try:
        p = subprocess.run([B] + args, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=lambda: __import__("resource").setrlimit(
                               __import__("resource").RLIMIT_AS, (8 << 30, 8 << 30)))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def check(name, rc, out, want_rc, want=()):
    global bad
    ok = rc == want_rc and all(w in out for w in want)
    if not ok:
        bad += 1
    last = [l for l in out.splitlines() if l.strip()]
    print("%-4s %-44s exit %s (want %s%s) %s" % ("ok" if ok else "BAD", name, rc, want_rc,
          "".join(", '%s'" % w for w in want), (last[0] if last else "")[:150]))


def make_case(name, template, mutate=None, files=None):
    d = os.path.join(tmp, "cases", name)
    shutil.copytree(template, d)
    with open(os.path.join(d, "case.json")) as f:
        j = json.load(f)
    if mutate:
        j = mutate(j) or j
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(j, f)
    if files:
        files(d)
    return d


def case_attack(name, template, mutate, want_rc, want, files=None):
    d = make_case(name, template, mutate, files)
    rc, out = run(["replay", d])
    check("replay: " + name, rc, out, want_rc, want)
    return d


def setp(path, value):
    def m(j):
        o = j
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return m


def delp(path):
    def m(j):
        o = j
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]
    return m


if "case" in GROUPS:
    # 1. names are data, not paths
    def rename_x(j):
        t = j["tensors"]
        t["../../../../../outside/Z"] = t.pop("x")
    d = case_attack("tensor name with ../", LOGIT, rename_x, 2, ["tensors", "../../../../../outside/Z"])
    rc, out = run(["shrink", d, "--corpus", os.path.join(tmp, "shrunk")])
    escaped = any(f.endswith(".npy") for _, _, fs in os.walk(os.path.join(tmp, "outside")) for f in fs) \
        if os.path.isdir(os.path.join(tmp, "outside")) else False
    check("shrink: tensor name with ../ (nothing written)", "escaped" if escaped else rc, out, 2, ["tensors"])
    case_attack("file field not <name>.npy", LOGIT, setp(["tensors", "dy", "file"], "x.npy"), 2, ["tensors.dy.file"])
    case_attack("file field ../dy.npy", LOGIT, setp(["tensors", "dy", "file"], "../dy.npy"), 2, ["tensors.dy.file"])

    def outside_link(d):
        shutil.copy(os.path.join(d, "dy.npy"), os.path.join(tmp, "outside_dy.npy"))
        os.remove(os.path.join(d, "dy.npy"))
        os.symlink(os.path.join(tmp, "outside_dy.npy"), os.path.join(d, "dy.npy"))
    case_attack(".npy symlink out of the case dir", LOGIT, None, 2, ["dy.npy", "outside"], outside_link)

    def zero_link(d):
        os.remove(os.path.join(d, "dy.npy"))
        os.symlink("/dev/zero", os.path.join(d, "dy.npy"))
    case_attack(".npy symlink to /dev/zero", LOGIT, None, 2, ["dy.npy"], zero_link)

    def json_zero(d):
        os.remove(os.path.join(d, "case.json"))
        os.symlink("/dev/zero", os.path.join(d, "case.json"))
    case_attack("case.json symlink to /dev/zero", LOGIT, None, 2, ["case.json"], json_zero)
    case_attack("output storage_shape [2^33]", LOGIT, setp(["tensors", "out", "storage_shape"], [1 << 33]), 2,
                ["tensors.out.storage_shape"])
    d = make_case("storage over --max-bytes", LOGIT, setp(["tensors", "out", "storage_shape"], [1 << 20]))
    rc, out = run(["replay", d, "--max-bytes", "65536"])
    check("replay: output storage over --max-bytes", rc, out, 2, ["tensors.out.storage_shape", "max-bytes"])
    # 2. strict manifests
    for v in ["hello", [1, 2, 3], True]:
        case_attack("eps = %s" % json.dumps(v), LOGIT, setp(["params", "eps"], v), 2, ["params.eps"])
    case_attack("bits longer than the dtype", SOFTPLUS, setp(["params", "threshold", "bits"], "0x00004d00"), 2,
                ["params.threshold.bits"])
    case_attack("bits with a sign", SOFTPLUS, setp(["params", "threshold", "bits"], "0x-1"), 2, ["params.threshold.bits"])
    case_attack("view outside its storage", LOGIT, setp(["tensors", "x", "offset"], 3), 2, ["tensors.x"])
    case_attack("missing output tensor", LOGIT, delp(["tensors", "out"]), 2, ["tensors.out"])
    case_attack("output storage smaller than view", LOGIT, setp(["tensors", "out", "storage_shape"], [2]), 2, ["tensors.out"])
    case_attack("schema 1.9", LOGIT, setp(["schema"], 1.9), 2, ["'schema'"])
    case_attack("status 0.5", LOGIT, setp(["expect", "status"], 0.5), 2, ["expect.status"])
    case_attack("status 4294967296", LOGIT, setp(["expect", "status"], 4294967296), 2, ["expect.status"])
    case_attack("offset 1e300", LOGIT, setp(["tensors", "x", "offset"], 1e300), 2, ["tensors.x.offset"])
    case_attack("origin.index 1e300", LOGIT, setp(["origin", "index"], 1e300), 2, ["origin.index"])
    case_attack("unknown top-level field", LOGIT, setp(["bogus"], 1), 2, ["'bogus'"])
    case_attack("unknown tensor field", LOGIT, setp(["tensors", "x", "stride"], [1]), 2, ["tensors.x.stride"])
    case_attack("unknown param", LOGIT, setp(["params", "epsilon"], 0.1), 2, ["params.epsilon"])
    case_attack("unknown tensor", LOGIT, lambda j: j["tensors"].update(z=copy.deepcopy(j["tensors"]["out"])), 2, ["tensors.z"])
    case_attack("note is a number", LOGIT, setp(["note"], 5), 2, ["'note'"])
    case_attack("origin.kind is a number", LOGIT, setp(["origin", "kind"], 3), 2, ["origin.kind"])
    case_attack("origin.target.sha256 not hex", LOGIT, setp(["origin", "target"], {"path": "/x.so", "sha256": "zz"}), 2,
                ["origin.target.sha256"])
    case_attack("origin.target well formed", LOGIT, setp(["origin", "target"], {"path": "/x.so", "sha256": "ab" * 32}), 0, [])
    case_attack("origin.target null", LOGIT, setp(["origin", "target"], None), 0, [])

shutil.rmtree(tmp, ignore_errors=True)
print("%d attack(s) misbehaved" % bad)
sys.exit(min(bad, 100))
