#!/usr/bin/env python3
"""Issue 11 "a verdict you can trust": crafted case, report and export files that must end in
exit 2 (input error) naming the file and field -- never a ULP failure, a status mismatch, a
file written outside its directory, a hang or a crash.

usage: verdict_attacks.py AClNN_CONFORM DATA_DIR [GROUP...]   (groups: case merge report score)
Each attack prints one line; the exit status is the number of attacks that misbehaved."""
import copy, json, os, shlex, shutil, subprocess, sys, tempfile

B, DATA = sys.argv[1], sys.argv[2]
# a cross build's tool runs under the emulator ctest names (tests/CMakeLists.txt)
EMU = shlex.split(os.environ.get("ACLCONFORM_TEST_EMULATOR", ""))
GROUPS = sys.argv[3:] or ["case", "merge", "report", "score"]
LOGIT = os.path.join(DATA, "examples/logit_grad/8872fe16f3f6a2fe")
SOFTPLUS = os.path.join(DATA, "examples/softplus_backward/5fe457886ceada4b")
tmp = tempfile.mkdtemp(prefix="verdict_attacks_")
bad = 0


with open(B, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()


def limit_memory():
    # bounded address space: a reader that trusts a manifest's size must fail, not take the host
    # (not under AddressSanitizer, whose shadow memory reserves terabytes of address space)
    if not SANITIZED:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def run(args, timeout=60):
    try:
        p = subprocess.run(EMU + [B] + args, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=limit_memory)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def npy_f8_to_f4(src, dst, scale=1.0, dst_f8=None):
    """the expected values of a case (an f8 .npy) written as the f4 .npy an f32 output is read from
    (times scale; dst_f8: the same values as an f8 .npy too)"""
    import ast
    import struct
    with open(src, "rb") as f:
        b = f.read()
    hl = struct.unpack("<H", b[8:10])[0]
    hdr = ast.literal_eval(b[10:10 + hl].decode("latin1"))
    vals = [v * scale for v in struct.unpack("<%dd" % (len(b[10 + hl:]) // 8), b[10 + hl:])]
    if dst_f8:
        with open(dst_f8, "wb") as f:
            f.write(b[:10 + hl] + struct.pack("<%dd" % len(vals), *vals))
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (tuple(hdr["shape"]),)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    with open(dst, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode("latin1") + struct.pack("<%df" % len(vals), *vals))


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


def case_attack(name, template, mutate, want_rc, want, files=None, extra=()):
    d = make_case(name, template, mutate, files)
    rc, out = run(["replay", d] + list(extra))
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
    case_attack("status -1", LOGIT, setp(["expect", "status"], -1), 2, ["expect.status"])
    # issue 57: lenient readers -- a key twice (the first or the last wins, by reader), text after
    # the JSON value, a .npy header with a key of its own or one twice
    def dup_key(d):
        p = os.path.join(d, "case.json")
        with open(p) as f:
            t = f.read()
        with open(p, "w") as f:
            f.write(t.replace('"profile"', '"op": "gelu_backward_v2", "profile"', 1))
    case_attack("case.json with a key twice", LOGIT, None, 2, ["'op'", "given twice"], dup_key)
    def trailing(d):
        with open(os.path.join(d, "case.json"), "a") as f:
            f.write("\n{\"op\": \"gelu_backward_v2\"}")
    case_attack("case.json with text after it", LOGIT, None, 2, ["case.json", "text after the value"], trailing)
    def npy_header(extra):
        def f(d):
            p = os.path.join(d, "x.npy")
            with open(p, "rb") as fh:
                b = fh.read()
            hl = b[8] | b[9] << 8
            h = b[10:10 + hl].decode("latin1").rstrip()
            assert h.endswith("}")
            h = h[:-1] + extra + "}"
            h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
            with open(p, "wb") as fh:
                fh.write(b[:8] + bytes([len(h) & 255, len(h) >> 8]) + h.encode("latin1") + b[10 + hl:])
        return f
    case_attack(".npy header with an unknown key", LOGIT, None, 2, ["x.npy", "'fortran_order_x': unknown"],
                npy_header("'fortran_order_x': True, "))
    case_attack(".npy header with a key twice", LOGIT, None, 2, ["x.npy", "'shape': given twice"],
                npy_header("'shape': (1,), "))
    # a case directory that lost its case.json is named, not skipped
    orph = os.path.join(tmp, "orphan_corpus", "logit_grad")
    os.makedirs(orph)
    shutil.copytree(LOGIT, os.path.join(orph, "good"))
    os.makedirs(os.path.join(orph, "lost"))
    shutil.copy(os.path.join(LOGIT, "x.npy"), os.path.join(orph, "lost", "x.npy"))
    rc, out = run(["replay", os.path.dirname(orph)])
    check("replay: a case directory without case.json", rc, out, 2, ["lost", "without case.json"])
    case_attack("offset 1e300", LOGIT, setp(["tensors", "x", "offset"], 1e300), 2, ["tensors.x.offset"])
    case_attack("origin.index 1e300", LOGIT, setp(["origin", "index"], 1e300), 2, ["origin.index"])
    case_attack("unknown top-level field", LOGIT, setp(["bogus"], 1), 2, ["'bogus'"])
    case_attack("unknown tensor field", LOGIT, setp(["tensors", "x", "stride"], [1]), 2, ["tensors.x.stride"])
    case_attack("unknown param", LOGIT, setp(["params", "epsilon"], 0.1), 2, ["params.epsilon"])
    # issue 57: a missing parameter took a default (eps became -1) and blamed the implementation
    for opdir in sorted(os.listdir(os.path.join(DATA, "examples"))):
        for cid in sorted(os.listdir(os.path.join(DATA, "examples", opdir))):
            src = os.path.join(DATA, "examples", opdir, cid)
            with open(os.path.join(src, "case.json")) as f:
                names = list(json.load(f)["params"])
            for pname in names:
                case_attack("%s without params.%s" % (opdir, pname), src, delp(["params", pname]), 2,
                            ["params.%s" % pname, "missing"])
    case_attack("unknown tensor", LOGIT, lambda j: j["tensors"].update(z=copy.deepcopy(j["tensors"]["out"])), 2, ["tensors.z"])
    case_attack("note is a number", LOGIT, setp(["note"], 5), 2, ["'note'"])
    case_attack("origin.kind is a number", LOGIT, setp(["origin", "kind"], 3), 2, ["origin.kind"])
    case_attack("origin.target.sha256 not hex", LOGIT, setp(["origin", "target"], {"path": "/x.so", "sha256": "zz"}), 2,
                ["origin.target.sha256"])
    # (a recorded target is replay's default: name the built-in one explicitly)
    case_attack("origin.target well formed", LOGIT, setp(["origin", "target"], {"path": "/x.so", "sha256": "ab" * 32}), 0, [],
                extra=["--target", "builtin"])
    case_attack("origin.target null", LOGIT, setp(["origin", "target"], None), 0, [])
    # 3. a case names code to load (issue 57): a library the user did not name is loaded only when
    #    it is the file the case was stored from (its SHA-256); the mark shows whether it was loaded
    CTOR = os.environ.get("ACLCONFORM_CTOR_TARGET")
    if not CTOR or not os.path.isfile(CTOR):
        check("origin.target: the constructor library is built", "missing", CTOR or "", 0)
    else:
        import hashlib
        mark = os.path.join(tmp, "ctor_mark")
        os.environ["ACLCONFORM_TEST_CTOR_MARK"] = mark
        with open(CTOR, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        other = ("0" if sha[0] != "0" else "1") + sha[1:]
        d = case_attack("origin.target a library of another SHA-256", LOGIT,
                        setp(["origin", "target"], {"path": CTOR, "sha256": other}), 2,
                        ["not the library the case was stored from", "--target"])
        check("replay: ... and its constructor did not run", "loaded" if os.path.exists(mark) else 2, "", 2)
        rc, out = run(["shrink", d, "--corpus", os.path.join(tmp, "shrunk_ctor")])
        check("shrink: origin.target a library of another SHA-256", rc, out, 2, ["not the library the case was stored from"])
        check("shrink: ... and its constructor did not run", "loaded" if os.path.exists(mark) else 2, "", 2)
        # the file it was stored from is loaded (it is no aclnn library: a missing symbol, exit 2)
        case_attack("origin.target the library it was stored from", LOGIT,
                    setp(["origin", "target"], {"path": CTOR, "sha256": sha}), 2, ["aclCreateTensor"])
        check("replay: ... which is loaded", 2 if os.path.exists(mark) else "not loaded", "", 2)
        del os.environ["ACLCONFORM_TEST_CTOR_MARK"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(DATA)))
BASE_REPORT = os.path.join(ROOT, "reports", "builtin-spec.json")


def write_json(name, j):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(j, f)
    return path


def real_shard(k, n):
    """shard k/n of one small sweep (the merge attacks start from real shards: a report relabelled
    as another shard is itself an attack merge refuses)"""
    p = os.path.join(tmp, "real_s%d_%d.json" % (k, n))
    if not os.path.exists(p):
        rc, o = run(["sweep", "--op", "logit_grad,softplus_backward", "--cases", "9", "--invalid-cases", "1", "--seed", "0x5eed",
                     "--shard", "%d/%d" % (k, n), "--no-store", "--quiet", "--output", p], timeout=600)
        if rc != 0:
            sys.exit("verdict_attacks: the shard sweep %d/%d failed (%s): %s" % (k, n, rc, o[-300:]))
    return p


def shard_report(name, k, n, mutate=None):
    with open(real_shard(k, n)) as f:
        j = json.load(f)
    if mutate:
        j = mutate(j) or j
    return write_json(name, j)


def load(path):
    with open(path) as f:
        return json.load(f)


if "merge" in GROUPS:
    s0, s1, s2 = (shard_report("s%d.json" % k, k, 3) for k in range(3))
    out = os.path.join(tmp, "merged.json")
    # duplicates: the same shard twice would count its cases twice
    rc, o = run(["merge", s0, s0, s0, "-o", out])
    check("merge s0 s0 s0 (duplicate shard)", rc, o, 2, ["duplicate shard 0/3", "s0.json"])
    check("  ... nothing written", "written" if os.path.exists(out) else 2, "", 2)
    rc, o = run(["merge", s0, s1, s2, s1, "-o", out, "--partial"])
    check("merge duplicate with --partial still refused", rc, o, 2, ["duplicate shard 1/3"])
    # missing shards
    rc, o = run(["merge", s0, s2, "-o", out])
    check("merge s0 s2 of 3 (missing shard)", rc, o, 2, ["missing 1 of 3 shards", "1/3", "--partial"])
    check("  ... nothing written", "written" if os.path.exists(out) else 2, "", 2)
    rc, o = run(["merge", s0, s2, "-o", out, "--partial"])
    j = load(out) if os.path.exists(out) else {}
    r0, r1, r2 = load(s0), load(s1), load(s2)
    ok = j.get("partial") is True and j.get("missing_shards") == "1/3" and j["run"]["cases"] == r0["run"]["cases"] + r2["run"]["cases"]
    check("merge s0 s2 --partial: marked partial", rc if ok else "unmarked", o, rc, ["PARTIAL"])
    # the partial merge completed by its missing shard is whole again
    part = os.path.join(tmp, "part.json")
    shutil.copy(out, part)
    os.remove(out)
    rc, o = run(["merge", part, s1, "-o", out])
    j = load(out) if os.path.exists(out) else {}
    ncases = r0["run"]["cases"] + r1["run"]["cases"] + r2["run"]["cases"]
    ok = j.get("partial") is False and j["run"]["shard"] == "0/3,1/3,2/3" and j["run"]["cases"] == ncases
    check("merge partial + its missing shard: complete", rc if ok else "wrong", o, rc, [])
    rc2, o = run(["merge", s0, s1, s2, "-o", out])
    j = load(out) if os.path.exists(out) else {}
    ok = j.get("partial") is False and j["results"][0]["cases"] == sum(r["results"][0]["cases"] for r in (r0, r1, r2))
    check("merge s0 s1 s2: exact sums, not partial", rc2 if ok else "wrong", o, rc, [])
    # shards of different runs
    other = shard_report("seed.json", 1, 3, lambda j: j["run"].update(seed="0x1234"))
    rc, o = run(["merge", s0, other, s2, "-o", out])
    check("merge shards of different seeds", rc, o, 2, ["run.seed", "0x1234"])
    other = shard_report("target.json", 1, 3, lambda j: j["run"].update(target="/x/libvendor.so"))
    rc, o = run(["merge", s0, other, s2, "-o", out])
    check("merge shards of different targets", rc, o, 2, ["run.target"])
    other = shard_report("n.json", 1, 4)
    rc, o = run(["merge", s0, other, "-o", out])
    check("merge 0/3 with 1/4", rc, o, 2, ["run.shard"])
    # counts that are not counts
    for v in [1e300, -5, "5", 2.5]:
        bad_r = shard_report("count.json", 1, 3, lambda j: j["results"][0].update(cases=v))
        rc, o = run(["merge", s0, bad_r, s2, "-o", out])
        check("merge results[0].cases = %s" % json.dumps(v), rc, o, 2, ["results[0].cases"])
    bad_r = shard_report("hist.json", 1, 3, lambda j: j["results"][0]["histogram"]["counts"].__setitem__(2, -1))
    rc, o = run(["merge", s0, bad_r, s2, "-o", out])
    check("merge histogram count -1", rc, o, 2, ["results[0].histogram.counts[2]"])
    bad_r = shard_report("sc.json", 1, 3, lambda j: j["status_checks"][0].update(mismatches=1e300))
    rc, o = run(["merge", s0, bad_r, s2, "-o", out])
    check("merge status_checks mismatches 1e300", rc, o, 2, ["status_checks[0].mismatches"])
    # issue 57: what merge used to add up silently
    def interrupt(j):
        j["run"]["interrupted"] = True
    bad_r = shard_report("intr.json", 1, 3, interrupt)
    rc, o = run(["merge", s0, bad_r, s2, "-o", out])
    check("merge an interrupted shard", rc, o, 2, ["run.interrupted", "--partial"])
    rc, o = run(["merge", s0, bad_r, s2, "-o", out, "--partial"])
    j = load(out) if os.path.exists(out) else {}
    ok = j.get("run", {}).get("interrupted") is True and j.get("partial") is True
    check("  ... with --partial: carried (run.interrupted, partial)", rc if ok else "dropped", o, rc, ["PARTIAL"])
    rc, o = run(["report", out, "--format", "md"])
    check("  ... and its report does not say it conforms", rc if "Verdict: conforms" not in o else "conforms", o, rc,
          ["not established: the run was interrupted"])
    os.remove(out)
    for what, mutate, field in [
            ("another target_sha256", lambda j: j["run"].update(target_sha256="ab" * 32), "run.target_sha256"),
            ("another tool version", lambda j: j["tool"].update(version="9.9.9"), "tool.version"),
            ("a score report", lambda j: j["run"].update(command="score"), "run.command"),
            ("a row twice", lambda j: j["results"].append(copy.deepcopy(j["results"][0])), "again"),
            ("no result rows", lambda j: j.update(results=[]), "'results'")]:
        bad_r = shard_report("x.json", 1, 3, mutate)
        rc, o = run(["merge", s0, bad_r, s2, "-o", out])
        check("merge a shard with %s" % what, rc, o, 2, [field])
        check("  ... nothing written", "written" if os.path.exists(out) else 2, "", 2)
    # a copy of shard 0 relabelled 1/3: the same run.id; and with a new run.id, its cases
    copy0 = shard_report("copy0.json", 0, 3, lambda j: j["run"].update(shard="1/3"))
    rc, o = run(["merge", s0, copy0, s2, "-o", out])
    check("merge a copy of shard 0 relabelled 1/3", rc, o, 2, ["run.id"])
    copy0 = shard_report("copy0b.json", 0, 3, lambda j: j["run"].update(shard="1/3", id=j["run"]["id"] + "-b"))
    rc, o = run(["merge", s0, copy0, s2, "-o", out])
    check("merge ... with a new run.id too", rc, o, 2, ["which shard 0/3 runs"])
    for sh in ["0/99999999999", "3/3", "-1/3", "1/0", "x", "0/3,"]:
        bad_r = shard_report("shard.json", 0, 3, lambda j: j["run"].update(shard=sh))
        rc, o = run(["merge", bad_r, "-o", out])
        check("merge run.shard %r" % sh, rc, o, 2, ["run.shard"])

if "report" in GROUPS or "merge" in GROUPS:
    # issue 57: an output that is also an input replaced it silently
    rp = write_json("same_io.json", load(real_shard(0, 1)))
    before = open(rp, "rb").read()
    rc, o = run(["report", rp, "--format", "md", "-o", rp])
    check("report R.json -o R.json", rc if open(rp, "rb").read() == before else "replaced", o, 2, ["is also the input"])
    rc, o = run(["merge", rp, "-o", rp])
    check("merge A -o A", rc if open(rp, "rb").read() == before else "replaced", o, 2, ["is also the input"])
    rc, o = run(["sweep", "--op", "logit_grad", "--cases", "1", "--no-store", "-o", os.path.join(tmp, "j.xml"),
                 "--junit", os.path.join(tmp, "j.xml")])
    check("sweep -o X --junit X", rc, o, 2, ["--junit"])

if "report" in GROUPS:
    evil = '<img src=x onerror=alert(1)>'

    def inject(j):
        r = j["results"][0]
        r["variant"] = evil
        r["worst"]["got"] = "<script>alert(2)</script>"
        r["worst"]["case"] = "corpus/\"><svg onload=alert(3)>"
        r["worst"]["element"] = ["<u>", "'x'"]
        r["worst"]["inputs"] = {"<i>": "&amp;"}
        j["run"]["target"] = "</title><script>alert(4)</script>"
        j["status_checks"][0]["rule"] = "<iframe src=javascript:alert(5)>"
    rep = shard_report("evil.json", 0, 1, inject)
    rc, o = run(["report", rep, "--format", "html"])
    low = o.lower()
    leaked = [t for t in ["<img", "<script", "<svg onload", "<iframe", "<u>", "<i>"] if t in low]
    check("report html: every string escaped", rc if not leaked else "leaked %s" % leaked, o, 0, ["&lt;img src=x onerror=alert(1)&gt;", "&lt;script&gt;"])

    def md_inject(j):
        j["results"][0]["variant"] = "a|b\nc <img src=x> [x](javascript:alert(1))"
        j["results"][0]["worst"]["got"] = "0x`|`"
        j["status_checks"][0]["rule"] = "r|u\nle"
    rep = shard_report("md.json", 0, 1, md_inject)
    rc, o = run(["report", rep, "--format", "md"])
    import re
    # every table row has as many cells as its table's header (the line above the |--- line)
    lines, broken, ntables, nrows = o.splitlines(), [], 0, 0
    for i, l in enumerate(lines):
        if i == 0 or not l.startswith("|---"):
            continue
        ntables += 1
        want = len(re.split(r"(?<!\\)\|", lines[i - 1]))
        for r in lines[i + 1:]:
            if not r.startswith("|"):
                break
            nrows += 1
            if len(re.split(r"(?<!\\)\|", r)) != want:
                broken.append(r[:80])
    ok = ntables >= 4 and nrows > 0 and not broken and not re.search(r"(?<!\\)<img", o) and not re.search(r"(?<!\\)\]\(javascript", o)
    cells, want = broken, ntables
    check("report md: cells escaped, tables intact", rc if ok else "broken %s want %s" % (cells, want), o, 0, [])

if "score" in GROUPS:
    # a directory of cases but no result.json: nothing scorable is exit 2, never "N passed"
    d = os.path.join(tmp, "score_none")
    # (score takes case directories named by their case id, as export writes them)
    LA, SB = "logit_grad/" + os.path.basename(LOGIT), "softplus_backward/" + os.path.basename(SOFTPLUS)
    shutil.copytree(LOGIT, os.path.join(d, LA))
    shutil.copytree(SOFTPLUS, os.path.join(d, SB))
    rc, o = run(["score", d, "--out", d])
    check("score: no result.json anywhere", rc, o if "passed" not in o else o + " [printed 'passed']",
          2 if "passed" not in o else "passed", ["no output was computed"])
    # every case unsupported: still nothing scored
    for sub in [LA, SB]:
        with open(os.path.join(d, sub, "result.json"), "w") as f:
            f.write('{"status": null, "error": "unsupported: test"}')
    rc, o = run(["score", d, "--out", d])
    check("score: every case unsupported", rc, o, 2, ["no output was computed", "2 unsupported"])
    # a status that is not an int32
    with open(os.path.join(d, LA, "result.json"), "w") as f:
        f.write('{"status": 4294967296, "error": null}')
    rc, o = run(["score", d, "--out", d])
    check("score: result.json status 2^32", rc, o, 2, ["'status'"])
    # issue 57: a program that answers only the invalid-input cases (every valid one null) computed
    # nothing: exit 2, no report, never "passed"
    d2 = os.path.join(tmp, "score_one")
    inv = os.path.join(DATA, "examples/scaled_masked_softmax_backward/f527a19e06f1f2c4")
    X = "scaled_masked_softmax_backward/" + os.path.basename(inv)
    shutil.copytree(inv, os.path.join(d2, X))
    with open(os.path.join(d2, X, "result.json"), "w") as f:
        f.write('{"status": 161001, "error": null}')
    shutil.copytree(LOGIT, os.path.join(d2, LA))
    for null in ['{"status": null, "error": null}', '{"status": null, "error": "unsupported: all of it"}']:
        with open(os.path.join(d2, LA, "result.json"), "w") as f:
            f.write(null)
        rc, o = run(["score", d2, "--out", d2])
        check("score: only the invalid case answered (%s)" % null[20:40], rc, o, 2,
              ["no output was computed", "1 invalid-input cases scored"])
    reps = [f for f in os.listdir(d2) if f.startswith("score-") and f.endswith(".json")]
    check("  ... and no report was written", 2 if not reps else "reports %s" % reps, "", 2)
    # positive control: the valid case computed (its exact outputs) is scored beside the invalid one
    with open(os.path.join(d2, LA, "result.json"), "w") as f:
        f.write('{"status": 0, "error": null}')
    npy_f8_to_f4(os.path.join(d2, LA, "expected.out.npy"), os.path.join(d2, LA, "got.out.npy"))
    rc, o = run(["score", d2, "--out", d2])
    check("score: a computed valid case and the invalid one pass", rc, o, 0, ["2 passed, 0 failed"])
    reps = [f for f in os.listdir(d2) if f.startswith("score-") and f.endswith(".json")]
    tg = [load(os.path.join(d2, f)).get("run", {}).get("target", "") for f in reps]
    check("  ... the report names an external program", rc if tg and all(t.startswith("external program") for t in tg)
          else "targets %s" % tg, o, 0, [])
    # the expected values score uses are the oracle's, not a file beside the case
    shutil.copy(os.path.join(d2, LA, "got.out.npy"), os.path.join(tmp, "got_ok.npy"))
    npy_f8_to_f4(os.path.join(d2, LA, "expected.out.npy"), os.path.join(d2, LA, "got.out.npy"), 2.0,
                 os.path.join(d2, LA, "expected.out.npy"))
    rc, o = run(["score", d2, "--out", d2])
    check("score: an expected.out.npy rewritten to match a wrong got", rc, o, 1, ["1 passed, 1 failed"])
    shutil.copy(os.path.join(tmp, "got_ok.npy"), os.path.join(d2, LA, "got.out.npy"))
    # one scorable and one without result: exit 2, the unscorable one is not counted as passed
    shutil.copytree(SOFTPLUS, os.path.join(d2, SB))
    rc, o = run(["score", d2, "--out", d2])
    check("score: scored + one without result", rc, o, 2, ["2 passed, 0 failed, 1 could not be scored"])
    reps = [f for f in os.listdir(d2) if f.startswith("score-") and f.endswith(".json")]
    unsc = [load(os.path.join(d2, f)).get("unscorable") for f in reps]
    check("  ... the report says 1 unscorable", rc if 1 in unsc else "unscorable %s" % unsc, o, 2, [])
    # export writes no answer key beside the inputs (issue 57: copying expected.*.npy to got.*.npy
    # passed 19/19)
    ex = os.path.join(tmp, "export")
    rc, o = run(["export", "--op", "logit_grad,gelu_backward_v2", "--cases", "2", "--invalid-cases", "1", "--out", ex])
    keys = [f for _, _, fs in os.walk(ex) for f in fs if f.split(".")[0] in ("expected", "magnitude", "alt", "expected_lo")]
    check("export: no expected values beside the inputs", rc if not keys else "files %s" % keys[:3], o, 0, ["exported"])
    # an exported input changed before scoring: that case is not scored
    valid = [r for r, _, fs in os.walk(os.path.join(ex, "logit_grad")) if "x.npy" in fs and
             load(os.path.join(r, "case.json"))["expect"]["status"] == 0][0]
    for r, _, fs in os.walk(ex):
        if "case.json" in fs:
            with open(os.path.join(r, "result.json"), "w") as f:
                f.write('{"status": null, "error": "unsupported"}')
    with open(os.path.join(valid, "result.json"), "w") as f:
        f.write('{"status": 0, "error": null}')
    with open(os.path.join(valid, "x.npy"), "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    rc, o = run(["score", ex, "--out", ex])
    check("score: an exported case whose input changed", rc, o, 2, ["not those exported"])

shutil.rmtree(tmp, ignore_errors=True)
print("%d attack(s) misbehaved" % bad)
sys.exit(min(bad, 100))
