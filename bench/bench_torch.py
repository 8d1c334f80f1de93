#!/usr/bin/python3
"""PyTorch's time for the rows of bench/bench_speed.c (the peer column of scripts/bench.sh).

Same element counts, shapes, value ranges and attributes as bench_speed, the same thread count
(torch.set_num_threads), outputs preallocated (out= / in-place forms), best of --reps runs after
a warm-up.  Rows PyTorch has no CPU kernel for in that dtype run in float32 with the conversions
inside the timed region (what a user of PyTorch would do), and say so.
Prints one tab-separated line per row: op, variant, dtype, n, torch_ms, note.

With --ours LIB (a library with the CANN ABI, e.g. build/impl/libaclnn_impl.so) the same row is
also run through that library on the same input tensors, alternating with PyTorch rep by rep in
this one process, and a seventh column gives its time.  --ours may be given more than once (two
builds of a library, before and after a change): each library gets a column, in the order given,
all of them alternating rep by rep with PyTorch and each other.  Two processes timed minutes
apart on a shared machine see memory bandwidths up to 1.6x apart (measured here: a triad at 35
and at 56 GB/s), so only times taken side by side make a trustworthy ratio; bench_speed --peer
prints xtorch from the seventh column when it is there.

    /usr/bin/python3 bench/bench_torch.py [--n N] [--reps R] [--threads T] [--op NAME] [--dtype D]
                                          [--ours LIB [--ours LIB2 ...]]
"""
import argparse
import ctypes
import time

import torch

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
ROWS = [("gelu_backward_v2", "none", ["f32", "f16", "bf16"]),
        ("gelu_backward_v2", "tanh", ["f32", "f16", "bf16"]),
        ("softplus_backward", "-", ["f32", "f16", "bf16", "f64"]),
        ("logit_grad", "-", ["f32", "f16", "bf16"]),
        ("scaled_masked_softmax_backward", "S2=1024", ["f32", "f16", "bf16"]),
        ("nsa_compress_grad", "TND", ["f16", "bf16"])]


# bench_speed's layout rows: the elementwise rows (the first four of ROWS, as there) with their
# inputs as views, the output contiguous (strided: x[::2]; transp: x.t() of [n/1024, 1024]; bcast:
# Gelu's x [n/1024] broadcast against [1024, n/1024]); the variant column is the layout
# (",layout" after a variant)
ROWS_ELEMENTWISE = 4
LAYOUTS = ["strided", "transp", "bcast"]
LAY_ROWS = 1024


def uni(shape, lo, hi, dt, gen):
    return (torch.rand(shape, generator=gen, dtype=torch.float32) * (hi - lo) + lo).to(dt)


def inputs2(lo0, hi0, lo1, hi1, dt, n, gen, layout):
    """The two inputs of an elementwise row as views in this layout, and its contiguous output."""
    rows, cols = LAY_ROWS, n // LAY_ROWS
    if layout == "strided":
        return uni([2 * n], lo0, hi0, dt, gen)[::2], uni([2 * n], lo1, hi1, dt, gen)[::2], torch.empty(n, dtype=dt)
    if layout == "transp":
        return (uni([cols, rows], lo0, hi0, dt, gen).t(), uni([cols, rows], lo1, hi1, dt, gen).t(),
                torch.empty([rows, cols], dtype=dt))
    if layout == "bcast":
        return uni([rows, cols], lo0, hi0, dt, gen), uni([cols], lo1, hi1, dt, gen), torch.empty([rows, cols], dtype=dt)
    return uni([n], lo0, hi0, dt, gen), uni([n], lo1, hi1, dt, gen), torch.empty(n, dtype=dt)


def setup(op, variant, dt, n, gen, layout=None):
    """A closure running the row once, and a note."""
    if op in ("gelu_backward_v2", "softplus_backward"):
        g, x, out = inputs2(-3, 3, -6, 6, dt, n, gen, layout)
        if op == "gelu_backward_v2":
            f = torch.ops.aten.gelu_backward.grad_input
            return lambda gg, xx, oo: f(gg, xx, approximate=variant, grad_input=oo), (g, x, out)
        f = torch.ops.aten.softplus_backward.grad_input
        return lambda gg, xx, oo: f(gg, xx, 1.0, 20.0, grad_input=oo), (g, x, out)
    if op == "logit_grad":
        x, g, out = inputs2(0, 1, -3, 3, dt, n, gen, layout)
        f = torch.ops.aten.logit_backward.grad_input
        return lambda gg, xx, oo: f(gg, xx, 1e-6, grad_input=oo), (g, x, out)
    if op == "scaled_masked_softmax_backward":
        s2 = 1024
        rows = n // s2
        shape, mshape = [1, 8, rows // 8, s2], [1, 1, rows // 8, s2]
        g, y = uni(shape, -1, 1, dt, gen), uni(shape, 0, 2.0 / s2, dt, gen)
        mask = torch.rand(mshape, generator=gen) < 0.2
        out = torch.empty(shape, dtype=dt)
        f = torch.ops.aten._softmax_backward_data.out

        def run(gg, yy, oo):
            f(gg, yy, -1, gg.dtype, grad_input=oo)
            oo.mul_(0.125)
            oo.masked_fill_(mask, 0.0)
        run.mask = mask  # for --ours
        return run, (g, y, out)
    # nsa_compress_grad, TND: N = 4, D = 128, l = 32, d = 16, one sequence of T = n / 512 tokens;
    # PyTorch has no such operator: the reference of tools/torch_target.py (gather + einsum for
    # weightGrad, index_add_ for inputGrad)
    T = n // 512
    C = (T - 32) // 16 + 1
    og, x, w = uni([C, 4, 128], -1, 1, dt, gen), uni([T, 4, 128], -1, 1, dt, gen), uni([32, 4], -1, 1, dt, gen)
    idx = (torch.arange(C) * 16)[:, None] + torch.arange(32)[None, :]
    flat = idx.reshape(-1)

    def nsa(ogt, xt, wt):
        ogf, xf, wf = ogt.float(), xt.float(), wt.float()
        wgrad = torch.einsum("cnk,clnk->ln", ogf, xf[idx])
        contrib = (wf[None, :, :, None] * ogf[:, None, :, :]).reshape(-1, *xf.shape[1:])
        igrad = torch.zeros_like(xf).index_add_(0, flat, contrib)
        return igrad.to(xt.dtype), wgrad.to(xt.dtype)
    return (lambda a, b, c: nsa(a, b, c)), (og, x, w)


def f32_fallback(run, args):
    """The same row computed in float32, conversions included (no CPU kernel in the dtype).  The
    f32 buffers are allocated once: page faults on fresh buffers cost more than the row itself
    on this VM and would measure the allocator, not PyTorch's kernels."""
    bufs = [torch.empty(a.shape, dtype=torch.float32) if a.is_floating_point() else a for a in args]

    def r(*a):
        for src, dst in zip(a, bufs):
            if dst is not src:
                dst.copy_(src)
        run(*bufs)
        if len(a) == 3 and a[2].is_floating_point() and a[2].dtype != torch.float32:
            a[2].copy_(bufs[2])
    return r, args


def contiguous_fallback(run):
    """The same row with its inputs first made contiguous at the output's shape, inside the timed
    region (what a user of PyTorch does when a kernel refuses a view)."""
    def r(*a):
        run(*[t.expand(a[-1].shape).contiguous() for t in a[:-1]], a[-1])
    return r


def fallback(run, args, layout, err):
    """run as a user of PyTorch would once it raised err: in float32 when PyTorch has no kernel
    in the dtype, with contiguous inputs when it refuses a view (a layout row), or both; and the
    note saying so.  Raises when neither helps."""
    notes, tried = [], set()
    while True:
        msg = str(err).splitlines()[0]
        if "not implemented" in msg and "f32" not in tried:
            tried.add("f32")
            notes.append("f32 fallback: " + msg)
        elif layout and "contig" not in tried:
            tried.add("contig")
            notes.append("contiguous fallback: " + msg)
        else:
            raise err
        # the contiguous copies inside (of the f32 copies, when both)
        cur = contiguous_fallback(run) if "contig" in tried else run
        if "f32" in tried:
            cur = f32_fallback(cur, args)[0]
        try:
            cur(*args)
            return cur, "; ".join(notes)
        except RuntimeError as e:
            err = e


ACL_DT = {torch.float32: 0, torch.float16: 1, torch.float64: 11, torch.bool: 12, torch.bfloat16: 27}


class Ours:
    """The rows of setup() through a library with the CANN ABI (ctypes), on the same tensors."""

    def __init__(self, path, threads):
        self.lib = ctypes.CDLL(path)
        L, vp, i64, u64 = self.lib, ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64
        L.aclCreateTensor.restype = vp
        L.aclCreateTensor.argtypes = [ctypes.POINTER(i64), u64, ctypes.c_int, ctypes.POINTER(i64), i64,
                                      ctypes.c_int, ctypes.POINTER(i64), u64, vp]
        L.aclCreateScalar.restype = vp
        L.aclCreateScalar.argtypes = [vp, ctypes.c_int]
        L.aclDestroyTensor.argtypes = [vp]
        L.aclDestroyScalar.argtypes = [vp]
        for name in ("aclnnGeluBackwardV2", "aclnnSoftplusBackward", "aclnnLogitGrad",
                     "aclnnScaledMaskedSoftmaxBackward", "aclnnNsaCompressGrad"):
            getattr(L, name).argtypes = [vp, u64, vp, vp]
            getattr(L, name).restype = ctypes.c_int
        L.aclnnGeluBackwardV2GetWorkspaceSize.argtypes = [vp, vp, ctypes.c_char_p, vp, ctypes.POINTER(u64),
                                                          ctypes.POINTER(vp)]
        L.aclnnSoftplusBackwardGetWorkspaceSize.argtypes = [vp, vp, vp, vp, vp, ctypes.POINTER(u64),
                                                            ctypes.POINTER(vp)]
        L.aclnnLogitGradGetWorkspaceSize.argtypes = [vp, vp, ctypes.c_double, vp, ctypes.POINTER(u64),
                                                     ctypes.POINTER(vp)]
        L.aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize.argtypes = [vp, vp, vp, ctypes.c_double, ctypes.c_bool,
                                                                       vp, ctypes.POINTER(u64), ctypes.POINTER(vp)]
        L.aclnnNsaCompressGradGetWorkspaceSize.argtypes = [vp, vp, vp, vp, i64, i64, i64, ctypes.c_char_p, vp, vp,
                                                           ctypes.POINTER(u64), ctypes.POINTER(vp)]
        if hasattr(L, "aclconformSetNumThreads"):
            L.aclconformSetNumThreads(threads)
        self.handles = []  # (destroy function, handle) of the current row

    def release(self):
        """Destroy the aclTensors and aclScalars of the current row."""
        for destroy, h in self.handles:
            destroy(h)
        self.handles = []

    def tensor(self, t):
        """An aclTensor viewing the torch tensor t, a view with t's strides into a storage that
        ends at t's last element (t kept alive by the caller)."""
        nd = t.dim()
        dims = (ctypes.c_int64 * max(nd, 1))(*t.shape)
        strides = (ctypes.c_int64 * max(nd, 1))(*t.stride())
        extent = (1 + sum((d - 1) * s for d, s in zip(t.shape, t.stride()))) if t.numel() else 0
        storage = (ctypes.c_int64 * 1)(extent)
        h = self.lib.aclCreateTensor(dims, nd, ACL_DT[t.dtype], strides, 0, 2, storage, 1, t.data_ptr())
        self.handles.append((self.lib.aclDestroyTensor, h))
        return h

    def _run(self, name, prepare):
        ws, ex = ctypes.c_uint64(0), ctypes.c_void_p()
        st = prepare(ctypes.byref(ws), ctypes.byref(ex))
        buf = None
        if st == 0 and ws.value:
            buf = ctypes.create_string_buffer(ws.value)
        if st == 0:
            st = getattr(self.lib, name)(ctypes.cast(buf, ctypes.c_void_p) if buf is not None else None,
                                         ws.value, ex, None)
        if st != 0:
            raise RuntimeError("%s failed: status %d" % (name, st))

    def row(self, op, variant, args):
        """A closure running the row of setup(op, variant, ...) with these inputs into own outputs."""
        L = self.lib
        if op in ("gelu_backward_v2", "softplus_backward", "logit_grad"):
            a, b = args[0], args[1]
            out = torch.zeros_like(args[2])
            ta, tb, to = self.tensor(a), self.tensor(b), self.tensor(out)
            keep = [a, b, out]
            if op == "gelu_backward_v2":
                mode = variant.encode()
                return lambda: self._run("aclnnGeluBackwardV2", lambda w, e: L.aclnnGeluBackwardV2GetWorkspaceSize(
                    ta, tb, mode, to, w, e)), keep
            if op == "softplus_backward":
                beta, thr = ctypes.c_float(1.0), ctypes.c_float(20.0)
                sb, st = L.aclCreateScalar(ctypes.byref(beta), 0), L.aclCreateScalar(ctypes.byref(thr), 0)
                self.handles += [(L.aclDestroyScalar, sb), (L.aclDestroyScalar, st)]
                keep += [beta, thr]
                return lambda: self._run("aclnnSoftplusBackward", lambda w, e: L.aclnnSoftplusBackwardGetWorkspaceSize(
                    ta, tb, sb, st, to, w, e)), keep
            # logit_grad: setup() passes (dy, x); the ABI takes (x, dy)
            return lambda: self._run("aclnnLogitGrad", lambda w, e: L.aclnnLogitGradGetWorkspaceSize(
                tb, ta, 1e-6, to, w, e)), keep
        if op == "scaled_masked_softmax_backward":
            g, y, mask = args[0], args[1], args[3]
            out = torch.zeros_like(g)
            tg, ty, tm, to = self.tensor(g), self.tensor(y), self.tensor(mask), self.tensor(out)
            return lambda: self._run("aclnnScaledMaskedSoftmaxBackward",
                                     lambda w, e: L.aclnnScaledMaskedSoftmaxBackwardGetWorkspaceSize(
                                         tg, ty, tm, 0.125, False, to, w, e)), [g, y, mask, out]
        og, x, w_ = args
        ig, wg = torch.zeros_like(x), torch.zeros_like(w_)
        t = [self.tensor(v) for v in (og, x, w_, ig, wg)]
        return lambda: self._run("aclnnNsaCompressGrad", lambda w, e: L.aclnnNsaCompressGradGetWorkspaceSize(
            t[0], t[1], t[2], None, 32, 16, 0, b"TND", t[3], t[4], w, e)), [og, x, w_, ig, wg]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--op")
    ap.add_argument("--dtype")
    ap.add_argument("--ours", action="append", default=[],
                    help="also time this CANN-ABI library, alternating with PyTorch (repeatable)")
    ap.add_argument("--no-layouts", action="store_true", help="only the contiguous rows (bench_speed's main table)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ours = [Ours(path, a.threads) for path in a.ours]
    gen = torch.Generator().manual_seed(12345)
    rows = [(op, variant, dts, None) for op, variant, dts in ROWS]
    if a.n % LAY_ROWS == 0 and not a.no_layouts:
        rows += [(op, variant, dts, lay) for op, variant, dts in ROWS[:ROWS_ELEMENTWISE] for lay in LAYOUTS
                 if lay != "bcast" or op == "gelu_backward_v2"]
    with torch.no_grad():
        for op, variant, dts, layout in rows:
            if a.op and a.op != op:
                continue
            for d in dts:
                if a.dtype and a.dtype != d:
                    continue
                run, args = setup(op, variant, DT[d], a.n, gen, layout)
                note = "native" if op != "nsa_compress_grad" else "reference in f32"
                mine, keep = [], []
                if ours:
                    # the row's own inputs, before f32_fallback replaces them
                    inputs = list(args)
                    if op == "scaled_masked_softmax_backward":
                        inputs.append(run.mask)
                    for o in ours:
                        fn, kept = o.row(op, variant, inputs)
                        fn()
                        mine.append(fn)
                        keep.append(kept)
                try:
                    run(*args)
                except RuntimeError as e:
                    run, note = fallback(run, args, layout, e)
                # every rep runs PyTorch and each library once, the order rotated rep by rep: the
                # run right after PyTorch's is slower (round 31: the same library as both --ours,
                # 1 Mi bf16 Gelu, 1 thread, was 1-12 % slower in the first slot; 16 Mi, 2 threads,
                # up to 30 %), so a fixed order handed that cost to the first library every time
                fns = [lambda: run(*args)] + mine
                best_all = [float("inf")] * len(fns)
                for r in range(a.reps):
                    for i in range(len(fns)):
                        k = (r + i) % len(fns)
                        t0 = time.perf_counter()
                        fns[k]()
                        best_all[k] = min(best_all[k], time.perf_counter() - t0)
                best, best_ours = best_all[0], best_all[1:]
                for o in ours:
                    o.release()
                extra = "".join("\t%.3f" % (b * 1e3) for b in best_ours)
                name = variant if not layout else layout if variant == "-" else variant + "," + layout
                print("%s\t%s\t%s\t%d\t%.3f\t%s%s" % (op, name, d, a.n, best * 1e3, note, extra), flush=True)


if __name__ == "__main__":
    main()
