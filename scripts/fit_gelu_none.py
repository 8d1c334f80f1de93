#!/usr/bin/env python3
"""Coefficients of the AVX-512 GeluBackwardV2 none f32 kernel and of acl_exp8_fast (issue 14).

Needs Debian python3-numpy and python3-mpmath (apt-get install python3-numpy python3-mpmath).
Prints, as C hex literals:
  - GN_P, GN_Q, GN_N0 of impl/src/ops/gelu_backward_v2.c: a (5, 5) rational fit of
    E(t) = (M(t) - t)/(t0 - t) on [0, 8] (M the Mills ratio, t0 its fixed point M(t0) = t0),
    linearised least squares in u = t/4 - 1 with Lawson reweighting, then rewritten in
    d = T0_HI - t and scaled by 1/sqrt(2 pi), in 40 digits;
  - the degree-4 and degree-5 polynomials for e^r on |r| <= ln2/32 and the table 2^(j/16) of
    simd512.h.
With --lean, also the coefficients of the frontier levels (ACLCONFORM_GELU_NONE_LEAN in
gelu_backward_v2.c, measured by scripts/frontier.sh), each checked in double on a dense grid.
Takes a few seconds (--lean: a minute).  The kernel's accuracy is measured, not assumed:
the comment above gelu_none_g8 gives the exhaustive f32 measurement."""
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def mills(t):
    return mp.sqrt(mp.pi / 2) * mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2)


t0 = mp.findroot(lambda t: mills(t) - t, 0.75)


def E(t):
    t = mp.mpf(t)
    if abs(t - t0) < mp.mpf("1e-25"):
        t = t0 + mp.mpf("1e-25")
    return (mills(t) - t) / (t0 - t)


def lawson_rational(xs, ys, m, q, iters=60):
    """min max |P/Q / y - 1| over the nodes, P, Q Chebyshev series in x, Q's constant term 1"""
    Tp = np.polynomial.chebyshev.chebvander(xs, m)
    Tq = np.polynomial.chebyshev.chebvander(xs, q)
    w, lw, best = 1 / np.abs(ys), np.ones_like(ys), None
    for it in range(iters):
        A = np.hstack([Tp, -(ys[:, None]) * Tq[:, 1:]])
        sw = w * np.sqrt(lw)
        sol, *_ = np.linalg.lstsq(A * sw[:, None], ys * sw, rcond=None)
        pc, qc = sol[: m + 1], np.concatenate([[1.0], sol[m + 1:]])
        Q = np.polynomial.chebyshev.chebval(xs, qc)
        err = np.abs(np.polynomial.chebyshev.chebval(xs, pc) / Q / ys - 1)
        w = 1 / np.abs(ys * Q)
        if it > 5:
            lw = lw * err ** 0.5
            lw /= lw.sum()
        if best is None or err.max() < best[0]:
            best = (err.max(), pc, qc)
    return best


def hexs(v):
    return ", ".join(float(x).hex() for x in v)


n = 2000
xs = np.cos(np.pi * (np.arange(n) + 0.5) / n)
ys = np.array([float(E(4 * (x + 1))) for x in xs])
t0hi = mp.mpf(float(t0))
t0lo = t0 - t0hi
a, b = t0hi / 4 - 1, mp.mpf(-1) / 4  # u = a + b d


def in_d(c):
    out = [mp.mpf(0)] * len(c)
    for k, ck in enumerate(c):
        for j in range(k + 1):
            out[j] += ck * mp.binomial(k, j) * a ** (k - j) * b ** j
    return out


def rational_in_d(m, q):
    """the (m, q) fit of E, rewritten in d, scaled by 1/sqrt(2 pi), Q monic: (error, P, Q)"""
    err, pc, qc = lawson_rational(xs, ys, m, q)
    pu = [mp.mpf(float(c)) for c in np.polynomial.chebyshev.cheb2poly(pc)]
    qu = [mp.mpf(float(c)) for c in np.polynomial.chebyshev.cheb2poly(qc)]
    pd, qd = in_d(pu), in_d(qu)
    lead = qd[-1]
    s = 1 / mp.sqrt(2 * mp.pi)
    return err, [x / lead * s for x in pd], [x / lead for x in qd]


err, pd, qd = rational_in_d(5, 5)
print("/* E on [0, 8]: max relative error 2^%.2f at the nodes */" % np.log2(err))
print("T0_HI %s, T0_LO %s" % (float(t0hi).hex(), float(t0lo).hex()))
print("GN_P = {%s};" % hexs(pd))
print("GN_Q = {%s}; /* and 1·d^5 */" % hexs(qd[:-1]))
print("GN_N0 = %s;" % float(t0lo * pd[0]).hex())

# e^r ≈ 1 + r + c2 r² + ... + c_deg r^deg on |r| ≤ ln2/32, relative, Lawson-weighted: degree 4
# (ACL_EXP16_C2..C4 of simd512.h, used by every fast exp since round 24) and degree 5 (Gelu tanh
# f32's logistic in rounds 21-23)
def lawson_exp(h, nodes, deg, first, iters):
    """e^r ≈ 1 (+ r when first = 2) + c_first·r^first + ... + c_deg·r^deg on |r| ≤ h, relative,
    Lawson-weighted: (max relative error at the nodes, [c_first .. c_deg])"""
    xr = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes) * h
    yr = np.array([float(mp.exp(x)) for x in xr])
    V = np.vstack([xr ** k for k in range(first, deg + 1)]).T
    rhs = yr - 1 - (xr if first == 2 else 0)
    lw, best = np.ones(len(xr)), None
    for it in range(iters):
        sw = np.sqrt(lw) / yr
        c, *_ = np.linalg.lstsq(V * sw[:, None], rhs * sw, rcond=None)
        e = np.array([abs(float(((1 + mp.mpf(x) if first == 2 else 1)
                                 + sum(c[k - first] * mp.mpf(x) ** k for k in range(first, deg + 1)))
                                / mp.exp(x) - 1)) for x in xr])
        if best is None or e.max() < best[0]:
            best = (e.max(), c.copy())
        lw = lw * e ** 0.5
        lw /= lw.sum()
    return best


for deg in (4, 5):
    err, c = lawson_exp(float(mp.log(2) / 32) * 1.0001, 400, deg, 2, 80)
    print("/* e^r, degree %d: max relative error 2^%.2f */ c2..c%d = %s" % (deg, np.log2(err), deg, hexs(c)))
print("2^(j/16) = {%s}" % hexs(mp.power(2, mp.mpf(j) / 16) for j in range(16)))

# acl_exp8_fast_nhalf (round 23): its polynomial e^{-s/2} = 1 - s/2 + C2/4 s² - C3/8 s³ + C4/16 s⁴,
# from the double ACL_EXP16_C2..C4 of simd512.h (exactly as the code holds them), written as
# c·(s⁴ + a3 s³ + a2 s² + a1 s + a0), c = C4/16, and the monic quartic in Knuth's adapted form
# (TAOCP vol. 2, 4.6.4): y = (s + A0)·s + A1, u = (y + s + A2)·y + A3.  Matching coefficients:
# A0 = (a3 - 1)/2, then with B = a2 - A0(A0 + 1): A1 = a1 - A0·B, A2 = B - 2·A1, A3 = a0 - A1·(B - A1)
# (always solvable).  c is folded into the table: c·2^(j/16), rounded once, minus j<<48.
import os
import re
import struct
hdr = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "impl", "src", "runtime", "simd512.h")).read()
C = {k: mp.mpf(float.fromhex(re.search(r"#define ACL_EXP16_%s (\S+)" % k, hdr).group(1))) for k in ("C2", "C3", "C4")}
c = C["C4"] / 16
a3, a2, a1, a0 = (-C["C3"] / 8) / c, (C["C2"] / 4) / c, mp.mpf(-0.5) / c, 1 / c
A0 = (a3 - 1) / 2
B = a2 - A0 * (A0 + 1)
A1 = a1 - A0 * B
A2 = B - 2 * A1
A3 = a0 - A1 * (B - A1)
print("ACL_EXPNH_A = {%s};" % hexs([A0, A1, A2, A3]))
print("acl_exp8_fast_nhalf's table, c·2^(j/16) minus j<<48 = {%s}" % ", ".join(
    "0x%016xu" % (struct.unpack("<Q", struct.pack("<d", float(c * mp.power(2, mp.mpf(j) / 16))))[0] - (j << 48))
    for j in range(16)))

# --lean (round 36): the coefficients of the frontier levels of ACLCONFORM_GELU_NONE_LEAN
# (gelu_backward_v2.c) and ACLCONFORM_SOFTPLUS_LEAN (softplus_backward.c; scripts/frontier.sh),
# each checked as the kernel evaluates it (Horner in double) on a dense grid against the 40-digit
# function:
#   - the (5, 4) and (4, 4) rationals, in d as GN_P / GN_Q (Q monic) with their N0;
#   - e^(-r/2) on |r| <= ln2 without a table, degrees 6, 7 and 8: c0 = 1, c1..c_deg a
#     Lawson-weighted relative fit of e^u on |u| <= ln2/2, then c_k·(-1/2)^k (exact).
if "--lean" in sys.argv[1:]:
    grid = np.linspace(0, 8, 20001)
    for m, q in ((5, 4), (4, 4)):
        err, pd, qd = rational_in_d(m, q)
        P, Q, N0 = [float(x) for x in pd], [float(x) for x in qd[:-1]], float(t0lo * pd[0])
        worst = 0.0
        for t in grid:
            d = float(t0hi) - t
            p = P[m]
            for k in range(m - 1, -1, -1):
                p = p * d + P[k]
            qq = d + Q[q - 1]
            for k in range(q - 2, -1, -1):
                qq = qq * d + Q[k]
            p = p * d + N0
            tm = mp.mpf(t)
            exact = E(tm) * (t0 - tm) / mp.sqrt(2 * mp.pi)
            worst = max(worst, abs(float(mp.mpf(p) / mp.mpf(qq) / exact - 1)))
        print("/* (%d, %d): fit 2^%.2f at the nodes, 2^%.2f in double on the grid */" % (m, q, np.log2(err), np.log2(worst)))
        print("GNL_P = {%s};" % hexs(P))
        print("GNL_Q = {%s};" % hexs(Q))
        print("GNL_N0 = %s;" % N0.hex())
    for deg in (6, 7, 8):
        err, c = lawson_exp(float(mp.log(2) / 2) * 1.0001, 600, deg, 1, 100)
        cr = [1.0] + [float(c[k - 1]) * (-0.5) ** k for k in range(1, deg + 1)]
        worst = 0.0
        for r in np.linspace(-float(mp.log(2)), float(mp.log(2)), 40001):
            p = cr[deg]
            for k in range(deg - 1, -1, -1):
                p = p * r + cr[k]
            worst = max(worst, abs(float(mp.mpf(p) / mp.exp(-mp.mpf(r) / 2) - 1)))
        print("/* e^(-r/2), degree %d: fit 2^%.2f, 2^%.2f in double on the grid */ GNL_E = {%s};"
              % (deg, np.log2(err), np.log2(worst), hexs(cr)))
        # the same polynomial in u = -r/2 (SoftplusBackward f32's levels, ACLCONFORM_SOFTPLUS_LEAN)
        print("/* e^u on |u| <= ln2/2, degree %d */ SPL_E = {%s};" % (deg, hexs([1.0] + [float(x) for x in c])))
