#!/usr/bin/env python3
"""The multiply/FMA-pipe floor of a kernel's inner loop (issue 14's "measurement that proves the
limit"): its instructions, disassembled from the built library, counted by class and weighted by
what bench/bench_ports measured each class to cost in 512-bit FMA issue slots.  A kernel whose
name ends in _avx2 is weighed with the AVX2 classes (ymm instructions, 256-bit FMA slots; the
ports table then comes from bench_ports on a CPU without AVX-512, or `bench_ports --avx2`), and
its floor is also given in ns per element and in ms for 16 Mi elements on 2 cores, at the clock
bench_ports estimated (its slots_per_cycle and ghz rows).

--mca CPU (round 29) also runs the hot loop's hot-path instructions (the rare paths and the jumps
left out) through llvm-mca -mcpu=CPU (`native`: this machine's), LLVM's model of the CPU's
schedulers, pipes and dependencies, and prints its cycles per element, the busiest resources, and
the time at bench_ports' clock.  The FMA-slot figures above count what competes with the FMAs;
llvm-mca adds the other pipes' limits and the latency chains, and on the Zen 3 of round 29 its
figures came within 15 % of the kernels' measured in-cache times (the slot estimate 25-45 % under).
Read its pipe counts with care: LLVM 14's znver3 model issues one FMA per cycle (128- or 256-bit)
where bench_ports measures Zen 3 issuing two, so its "FP0/FP1 busy" counts every FMA twice and its
match with measured times is partly compensation (round 30).

    scripts/kernel_mix.py [--lib build/impl/libaclnn_impl.so] [--ports FILE] [--elems 8] FUNCTION[:ELEMS[:RANK]]...

FUNCTION is a kernel's symbol (e.g. gelu_none_block_avx512); its hot loop is the backward jump
(within the function, no return inside) whose body holds the most 512-bit instructions.  Loops
nested in it (the per-lane scalar redo of rare lanes) and code that only the lanes of a mask reach
("if (mask) ...": a forward je on the flags of a kortest skips it, however many vector
instructions are scheduled between the two; or a rotated loop's last jne on such flags goes back to
it) are the rare paths: counted apart, not in the floor.  --ports is the output of
`bench_ports --tsv` (run when not given: build/bench/bench_ports).  --elems is the number of
elements one pass of the loop computes (8 for the f32 kernels: one 512-bit vector of doubles;
FUNCTION:ELEMS overrides it for one kernel, e.g. softplus_block_f32_avx512:16).  FUNCTION:ELEMS:RANK
weighs the loop of that rank instead (2: the one with the second most such instructions, not
nested in the first; softplus_block_f64_avx2:16:2 is its plain form, the default threshold's).
Prints the classes, their counts and slots, and two figures per element, in FMA slots (= cycles
at one 512-bit FMA per cycle): the strict floor, the FMAs and multiplies alone (they cannot issue
faster than one per cycle, whatever else overlaps), and the estimate, every class at its measured
cost added up (the costs overlap in part, so a kernel can run a little below it).  Instructions
of no measured class (loads, stores, register moves, broadcasts, mask and scalar ops) are listed
but not counted.  Needs objdump (binutils)."""
import argparse
import re
import subprocess
import sys

CLASSES = [  # (class, regex on "mnemonic operands"), first match wins
    ("masksub", r"^v(add|sub)pd .*zmm.*\{%k[1-7]\}"),
    ("fma", r"^vf(n?)m(add|sub)(132|213|231)pd .*zmm"),
    ("mul", r"^vmulpd .*zmm"),
    ("add", r"^v(add|sub)pd .*zmm"),
    ("div", r"^vdivpd .*zmm"),
    ("rcp14", r"^vrcp14pd .*zmm"),
    ("range", r"^vrangepd .*zmm"),
    ("shift", r"^vps[lr][la]q .*zmm"),
    ("paddq", r"^vp(add|sub)q .*zmm"),
    ("perm2", r"^vperm[it]2(q|pd) .*zmm"),
    ("perm", r"^vperm(q|pd) .*zmm"),
    ("cvtps2pd", r"^vcvtps2pd .*zmm"),
    ("cvtpd2ps", r"^vcvtpd2ps .*zmm"),
    ("cmppd", r"^vcmp\w*pd .*zmm.*%k"),
    ("cmpps16", r"^vcmp\w*ps .*zmm.*%k"),
    ("cmpps8", r"^vcmp\w*ps .*ymm.*%k"),
    ("fpclass8", r"^vfpclassps .*ymm"),
    ("scalef", r"^vscalefpd .*zmm"),
    ("max", r"^v(max|min)pd .*zmm"),
    ("logic", r"^v(or|and|andn|xor)pd .*zmm"),
    ("blend", r"^vblendmpd .*zmm"),
]


# the AVX2 kernels (round 29): ymm instructions, priced by bench_ports' AVX2 table
CLASSES_AVX2 = [
    ("fma", r"^vf(n?)m(add|sub)(132|213|231)p[sd] .*ymm"),
    ("mul", r"^vmulp[sd] .*ymm"),
    ("add", r"^v(add|sub)p[sd] .*ymm"),
    ("divps", r"^vdivps .*ymm"),
    ("div", r"^vdivpd .*ymm"),
    ("shift", r"^vps[lr][la][dq] .*ymm"),
    ("paddq", r"^vp(add|sub)[dq] .*ymm"),
    ("permd", r"^vperm(d|ps) .*ymm"),
    ("shuf", r"^v(shufp[sd]|unpck[lh]p[sd]|punpck[lh]\w+|pshufd|permilp[sd]) .*ymm"),
    ("blendv", r"^v(p?blendv\w*|blendp[sd]|pblendd) .*ymm"),
    ("cvtps2pd", r"^vcvtps2pd .*ymm"),
    ("cvtpd2ps", r"^vcvtpd2psy? .*ymm"),
    ("extract", r"^vextract[fi]128 "),
    ("insert", r"^vinsert[fi]128 "),
    ("pmovsx", r"^vpmov[sz]x\w+ .*ymm"),
    ("cmppd", r"^vcmp\w*pd .*ymm"),
    ("cmpps", r"^vcmp\w*ps .*ymm"),
    ("max", r"^v(max|min)p[sd] .*ymm"),
    ("logic", r"^v(p?(or|and|andn|xor)(p[sd])?) .*ymm"),
    ("round", r"^vroundp[sd] .*ymm"),
]


def disasm(out, lib, func):
    """func's instructions (address, mnemonic, operands) in objdump's output `out` of lib"""
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(func), out, re.S | re.M)
    if not m:
        sys.exit("kernel_mix: no function %s in %s" % (func, lib))
    insns = []
    for line in m.group(1).splitlines():
        p = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if p:
            insns.append((int(p.group(1), 16), p.group(2), p.group(3).split("#")[0].strip()))
    return insns


def jump_target(mn, ops):
    """the address a direct jump goes to, or None"""
    t = re.match(r"([0-9a-f]+)\s", ops + " ")
    return int(t.group(1), 16) if mn.startswith("j") and t else None


# Mnemonics that leave the flags alone: vector arithmetic (but its compares into flags), moves,
# mask register operations other than the tests, prefetches.
FLAGS_KEPT = re.compile(r"^(v(?!u?comis|ptest|testp)|kmov|kand|kor(?!test)|kxor|knot|kshift|kunpck|kadd|"
                        r"mov|lea|prefetch|nop)")


def flags_setter(body, i):
    """The instruction whose flags the conditional jump body[i] reads: the nearest one before it
    that writes them (None if the loop body starts first)."""
    for j in range(i - 1, -1, -1):
        mn = body[j][1]
        if not FLAGS_KEPT.match(mn):
            return body[j]
    return None


def mask_skipped(insns, body, start, end, tests=("kortest", "ktest")):
    """Addresses in the loop body [start, end] of code that only lanes of a mask reach ("if (mask)
    ..."): a forward je/jz taken on the flags of a kortest/ktest (`tests`) skips it, however many vector
    instructions the compiler scheduled between the test and the jump (they do not touch the
    flags); or, in a rotated loop, the loop's last jne/jnz on such flags goes back to it (the block
    at the loop head) while the fall-through path jumps to the join after it."""
    rare = set()
    for i in range(1, len(body)):
        mn, addr = body[i][1], body[i][0]
        target = jump_target(mn, body[i][2])
        if target is None or mn not in ("je", "jz", "jne", "jnz"):
            continue
        setter = flags_setter(body, i)
        if setter is None or not setter[1].startswith(tests):
            continue
        if mn in ("je", "jz") and addr < target <= end:
            rare.update(x[0] for x in body if addr < x[0] < target)
        elif mn in ("jne", "jnz") and start <= target < addr:
            after = [x for x in insns if x[0] > addr][:4]
            join = next((jump_target(x[1], x[2]) for x in after if x[1] == "jmp"), None)
            if join is not None and target < join <= addr:
                rare.update(x[0] for x in body if target <= x[0] < join)
    return rare


def hot_loop(insns, reg="zmm", rank=1):
    """the loop with the most vector instructions on `reg` (zmm, ymm), and the loops nested in it;
    rank 2, 3, ..: the loop with the second, third .. most of those not nested in a higher one (a
    kernel with two forms, e.g. SoftplusBackward f64 on AVX2 since round 31)"""
    loops = []
    start = insns[0][0] if insns else 0
    for addr, mn, ops in insns:
        target = jump_target(mn, ops)
        if target is not None:
            if start <= target <= addr:
                body = [x for x in insns if target <= x[0] <= addr]
                # not a tail's exit path, and not a stretch cut out of a larger loop: a conditional
                # back edge inside it that goes to before its head belongs to that loop (GCC's
                # layout of round 29's Softplus f32 AVX2 loop: a jmp back into the loop's middle
                # from the tail blocks after it)
                crossing = any(x[1].startswith("j") and x[1] != "jmp" and x[0] < addr and
                               (jump_target(x[1], x[2]) or target) < target for x in body)
                if not any(x[1].startswith("ret") for x in body) and not crossing:
                    loops.append((target, addr, body))
    if not loops:
        return None, []
    order = sorted(loops, key=lambda lp: (sum(reg in x[2] for x in lp[2]), -len(lp[2])), reverse=True)
    top = []
    for lp in order:
        if not any(o[0] <= lp[0] and lp[1] <= o[1] for o in top):
            top.append(lp)
    if rank > len(top):
        return None, []
    best = top[rank - 1]
    # a back edge to best's own head is best's loop again (a rotated loop has several), not a
    # nested one: nested loops start inside it
    nested = [o for o in loops if best[0] < o[0] and o[1] < best[1]]
    return best, nested


def mca(body, rare, cpu, elems, ghz):
    """llvm-mca's cycles per pass of the hot path of `body` (rare addresses left out) on `cpu`,
    printed as cycles and ns per element with the busiest resources; an unknown CPU or a missing
    llvm-mca ends the script with a message and a non-zero exit."""
    lines = []
    for addr, mn, ops in body:
        if addr in rare or mn.startswith(("j", "call", "nop", "cs", "data16", "ret")):
            continue
        lines.append("%s %s" % (mn, re.sub(r"<[^>]*>", "", ops).strip()))
    try:
        r = subprocess.run(["llvm-mca", "-mcpu=" + cpu, "-iterations=200"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True)
    except OSError as e:
        sys.exit("kernel_mix: --mca %s: llvm-mca: %s (Debian package llvm)" % (cpu, e.strerror))
    m = re.search(r"^Total Cycles:\s+(\d+)", r.stdout, re.M)
    if r.returncode != 0 or not m:
        sys.exit("kernel_mix: --mca %s: llvm-mca: %s" % (cpu, (r.stderr.strip().splitlines() or ["no output"])[0]))
    cycles = int(m.group(1)) / 200.0
    # the resources' names and their cycles per iteration
    names = re.findall(r"^\[([0-9.]+)\]\s+- (\S+)", r.stdout, re.M)
    press = re.search(r"Resource pressure per iteration:\n.*\n(.*)\n", r.stdout)
    busiest = ""
    if names and press:
        vals = [0.0 if v == "-" else float(v) for v in press.group(1).split()]
        pairs = sorted(zip(vals, [n for _, n in names]), reverse=True)[:3]
        busiest = ", busiest " + ", ".join("%s %.0f" % (n, v) for v, n in pairs)
    line = "  llvm-mca -mcpu=%s: %.1f cycles per pass = %.3f cycles per element%s" % (cpu, cycles, cycles / elems, busiest)
    if ghz:
        ns = cycles / elems / ghz
        line += "; at %.2f GHz %.3f ns per element, 16 Mi elements on 2 cores %.2f ms" % (ghz, ns, ns * (1 << 24) / 2 / 1e6)
    print(line)
    return cycles


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default="build/impl/libaclnn_impl.so")
    ap.add_argument("--ports", help="bench_ports --tsv output (default: run build/bench/bench_ports)")
    ap.add_argument("--elems", type=int, default=8)
    ap.add_argument("--mca", metavar="CPU", help="also llvm-mca's cycles for the hot path on CPU (e.g. native, znver3)")
    ap.add_argument("func", nargs="+")
    a = ap.parse_args()
    if a.elems < 1:
        ap.error("--elems must be at least 1")
    if a.ports:
        try:
            text = open(a.ports).read()
        except OSError as e:
            sys.exit("kernel_mix: --ports %s: %s" % (a.ports, e.strerror))
    else:
        text = subprocess.run(["build/bench/bench_ports", "--tsv"], check=True, capture_output=True,
                              text=True).stdout
    cost = {}
    for n, line in enumerate(text.splitlines()[1:], 2):
        f = line.split("\t")
        try:
            cost[f[0]] = float(f[2])
        except (IndexError, ValueError):
            sys.exit("kernel_mix: %s line %d: expected class<TAB>insn<TAB>fma_eq" % (a.ports or "bench_ports", n))
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", a.lib], check=True,
                             capture_output=True, text=True).stdout
    for spec in a.func:
        func, _, el = spec.partition(":")
        el, _, rk = el.partition(":")
        try:
            elems = int(el) if el else a.elems
            rank = int(rk) if rk else 1
        except ValueError:
            sys.exit("kernel_mix: %s: ELEMS and RANK must be integers" % spec)
        if rank < 1:
            sys.exit("kernel_mix: %s: RANK must be at least 1" % spec)
        if elems < 1:
            sys.exit("kernel_mix: %s: ELEMS must be at least 1" % spec)
        avx2 = func.endswith("_avx2")
        classes = CLASSES_AVX2 if avx2 else CLASSES
        insns = disasm(listing, a.lib, func)
        lp, nested = hot_loop(insns, "ymm" if avx2 else "zmm", rank)
        if lp is None:
            print("%s: no loop found" % func if rank == 1 else "%s: no loop of rank %d" % (func, rank))
            continue
        counts, other = {}, {}
        # AVX2: a lane mask is a vector, tested by VTESTPS / VPTEST or a TEST of its MOVMSK bits
        tests = ("kortest", "ktest", "test", "vtestp", "vptest") if avx2 else ("kortest", "ktest")
        rare = {x[0] for o in nested for x in o[2]} | mask_skipped(insns, lp[2], lp[0], lp[1], tests)
        body = lp[2]
        for addr, mn, ops in body:
            if addr in rare:
                continue
            s = "%s %s" % (mn, ops)
            cls = next((c for c, rx in classes if re.search(rx, s)), None)
            if cls is None:
                other[mn] = other.get(mn, 0) + 1
            else:
                counts[cls] = counts.get(cls, 0) + 1
        total = 0.0
        print("%s: hot loop %x-%x, %d instructions (%d on rare-lane paths, not counted), "
              "%d elements per pass" % (func, lp[0], lp[1], len(body), len(rare), elems))
        for cls, _ in classes:
            if cls in counts:
                c = cost.get(cls)
                if c is None:
                    sys.exit("kernel_mix: no cost for class %s in the ports table" % cls)
                c = c if c > 0 else 0.0  # a class that runs beside the FMAs costs them nothing
                total += counts[cls] * c
                print("  %-9s %3d x %5.2f = %6.2f" % (cls, counts[cls], c, counts[cls] * c))
        print("  not counted: %s" % ", ".join("%s %d" % kv for kv in sorted(other.items())))
        strict = counts.get("fma", 0) + counts.get("mul", 0)
        per_cycle = cost.get("slots_per_cycle", 1.0) if avx2 else 1.0
        if per_cycle <= 0:
            sys.exit("kernel_mix: slots_per_cycle must be positive in the ports table")
        print("  strict floor (FMA + MUL): %d slots per pass = %.3f cycles per element" % (strict, strict / elems / per_cycle))
        print("  estimate (all classes):  %.2f slots per pass = %.3f cycles per element" % (total, total / elems / per_cycle))
        ghz = cost.get("ghz")
        if avx2 and ghz:
            ns = total / elems / per_cycle / ghz
            print("  at %.2f GHz: %.3f ns per element; 16 Mi elements on 2 cores: %.2f ms (the strict floor %.2f ms)"
                  % (ghz, ns, ns * (1 << 24) / 2 / 1e6, strict / elems / per_cycle / ghz * (1 << 24) / 2 / 1e6))
        if a.mca:
            mca(body, rare, a.mca, elems, ghz)


if __name__ == "__main__":
    main()
