#!/usr/bin/env python3
"""Coefficients of the 16-bit SoftplusBackward kernel's e^r (impl/src/ops/softplus_backward.c,
SP16_C2..SP16_C5; issue 14, round 12).

Needs Debian python3-numpy and python3-mpmath (apt-get install python3-numpy python3-mpmath).
P(r) = 1 + r + C2 r^2 + C3 r^3 + C4 r^4 + C5 r^5 on |r| <= 0.347 (the reduced argument of
e^u, |r| <= ln2/2 plus the low part), P(0) = 1 exactly: C2..C5 minimise max |P(r)/e^r - 1|
(least squares on 4001 Chebyshev points with Lawson reweighting, e^r in 40 digits), then are
rounded to f32.  Prints them as C hex literals with two measured errors on 100001 points:
the polynomial with the rounded coefficients, and its f32 Horner evaluation in the kernel's
order (each FMA rounded once to f32)."""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
A = 0.347
xs = np.cos(np.linspace(0, np.pi, 4001)) * A
ex = np.array([float(mp.e ** mp.mpf(x)) for x in xs])

cols = np.stack([xs ** k / ex for k in range(2, 6)], 1)
rhs = 1 - (1 + xs) / ex
w = np.ones_like(xs)
for _ in range(400):
    sw = np.sqrt(w)
    c, *_ = np.linalg.lstsq(cols * sw[:, None], rhs * sw, rcond=None)
    w = w * np.abs(cols @ c - rhs)
    w /= w.sum()
coef = [1.0, 1.0] + [float(np.float32(v)) for v in c]

rs = np.linspace(-A, A, 100001).astype(np.float32).astype(np.float64)
exact = np.exp(rs)
poly = np.polyval(np.array(coef)[::-1], rs)


def horner_f32(r):
    p = np.float32(coef[-1])
    for k in range(len(coef) - 2, -1, -1):
        p = np.float32(float(p) * r + coef[k])  # p*r exact in double, then (nearly) one f32 rounding
    return float(p)


h = np.array([horner_f32(r) for r in rs])
def c_hex(v):
    m, e = float(v).hex().split("p")
    return "%sp%sf" % (m.rstrip("0").rstrip("."), e)


for k in range(2, 6):
    print("#define SP16_C%d %s" % (k, c_hex(coef[k])))
print("polynomial: max |P/e^r - 1| = 2^%.2f" % np.log2(np.max(np.abs(poly / exact - 1))))
print("f32 Horner: max |P/e^r - 1| = 2^%.2f" % np.log2(np.max(np.abs(h / exact - 1))))
