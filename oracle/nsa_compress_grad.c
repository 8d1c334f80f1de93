/* NsaCompressGrad oracle (ops.md §3), layout TND:
 *
 *   batches: tokens [a[b−1], a[b]), a[−1] = 0 (actSeqLen cumulative; NULL: one batch of T tokens)
 *   nblk(S) = S ≥ l ? (S − l)/d + 1 : 0;  window i of batch b starts at a[b−1] + i·d, covers l tokens;
 *   blocks c are numbered in batch order (outputGrad rows)
 *   weightGrad[r,n]  = Σ_c Σ_k outputGrad[c,n,k]·input[start(c)+r, n, k]
 *   inputGrad[t,n,k] = Σ_{(c,r): start(c)+r = t} weight[r,n]·outputGrad[c,n,k]   (0 if uncovered)
 *   m = Σ |terms| of the same sums
 *
 * Inputs are f16/bf16, so every product is exact in double; each sum is compensated (internal.h)
 * and err is its bound.  Non-finite terms propagate by IEEE rules (plain sum, m = err = 0).
 * The windows covering token t (local position p in its batch) are i in
 * [max(0, ⌈(p − l + 1)/d⌉), min(nblk − 1, ⌊p/d⌋)], at r = p − i·d.
 * A sum that cancels (err a visible share of the output's ULP) is summed again exactly in MPFR
 * (nsa_mpfr, refine.c). */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

static double at3(const orc_tensor *t, int64_t a, int64_t b, int64_t c)
{
    int64_t off = t->offset + a * t->strides[0] + b * t->strides[1] + c * t->strides[2];
    return orc_widen(t->dtype, (const unsigned char *)t->data + off * orc_dtype_size(t->dtype));
}

static double at2(const orc_tensor *t, int64_t a, int64_t b)
{
    int64_t off = t->offset + a * t->strides[0] + b * t->strides[1];
    return orc_widen(t->dtype, (const unsigned char *)t->data + off * orc_dtype_size(t->dtype));
}

static int64_t nblk(int64_t S, int64_t l, int64_t d) { return S >= l ? (S - l) / d + 1 : 0; }

/* The refinement (refine.c) of one sum: its products again, added exactly (NSA_EXACT_PREC bits
 * hold any sum of ≤ 2^40 products of two f16/bf16/f32 values: exponents in [−298, 256], 48
 * significant bits), rounded once to P: E = 2^(1−P)·|R| (0 when exact). */
#define NSA_EXACT_PREC 1024
typedef struct {
    const orc_tensor *a, *b;  /* the factors' tensors: weightGrad og × input, inputGrad weight × og */
    bool weight_grad;
    int64_t n, k, r;          /* head, channel (inputGrad), window row (weightGrad) */
    int64_t nb, l, d, D, p, ilo, ihi, cf;
    const int64_t *beg, *end, *cfirst;
} nsa_ctx;

static int nsa_mpfr(const void *ctx, mpfr_prec_t P, mpfr_ptr R, mpfr_ptr E)
{
    const nsa_ctx *c = ctx;
    mpfr_t S, t;
    mpfr_init2(S, NSA_EXACT_PREC);
    mpfr_init2(t, 128);
    mpfr_set_zero(S, 1);
    if (c->weight_grad) {
        for (int64_t b = 0; b < c->nb; b++)
            for (int64_t i = 0, k_n = nblk(c->end[b] - c->beg[b], c->l, c->d); i < k_n; i++)
                for (int64_t k = 0; k < c->D; k++) {
                    mpfr_set_d(t, at3(c->a, c->cfirst[b] + i, c->n, k), MPFR_RNDN);
                    mpfr_mul_d(t, t, at3(c->b, c->beg[b] + i * c->d + c->r, c->n, k), MPFR_RNDN); /* exact */
                    mpfr_add(S, S, t, MPFR_RNDN);                                                 /* exact */
                }
    } else {
        for (int64_t i = c->ilo; i <= c->ihi; i++) {
            mpfr_set_d(t, at2(c->a, c->p - i * c->d, c->n), MPFR_RNDN);
            mpfr_mul_d(t, t, at3(c->b, c->cf + i, c->n, c->k), MPFR_RNDN);
            mpfr_add(S, S, t, MPFR_RNDN);
        }
    }
    mpfr_set_zero(E, 1);
    if (mpfr_set(R, S, MPFR_RNDN) != 0) orc_err_add(E, R, 2.0, P);
    mpfr_clears(S, t, (mpfr_ptr)0);
    return mpfr_number_p(R) ? ORC_OK : ORC_EINVAL;
}

int orc_nsa_compress_grad(const orc_tensor *outputGrad, const orc_tensor *input,
                          const orc_tensor *weight, const int64_t *actSeqLen, int64_t nActSeqLen,
                          int64_t compressBlockSize, int64_t compressStride, cf_dtype out_dtype,
                          orc_profile profile, orc_out *inputGrad, orc_out *weightGrad)
{
    orc_init();
    (void)profile; /* cann-kernel changes only status rules */
    if (!outputGrad || !input || !weight || !inputGrad || !weightGrad || !inputGrad->r || !weightGrad->r)
        return ORC_EINVAL;
    if (orc_check_tensor(outputGrad) || orc_check_tensor(input) || orc_check_tensor(weight)) return ORC_EINVAL;
    if (outputGrad->ndim != 3 || input->ndim != 3 || weight->ndim != 2) return ORC_EINVAL;
    int64_t l = compressBlockSize, d = compressStride;
    int64_t T = input->shape[0], N = input->shape[1], D = input->shape[2], C = outputGrad->shape[0];
    if (l <= 0 || d <= 0 || weight->shape[0] != l || weight->shape[1] != N ||
        outputGrad->shape[1] != N || outputGrad->shape[2] != D)
        return ORC_EINVAL;

    /* batches as [begin, end) token ranges and their first block index */
    int64_t nb = actSeqLen ? nActSeqLen : 1;
    if (nb <= 0 || nb > (INT64_MAX / 3) / (int64_t)sizeof(int64_t)) return ORC_EINVAL;
    int64_t *beg = malloc((size_t)nb * 3 * sizeof *beg);
    if (!beg) return ORC_ENOMEM;
    int64_t *end = beg + nb, *cfirst = beg + 2 * nb;
    int64_t prev = 0, cc = 0;
    int status = ORC_OK;
    for (int64_t b = 0; b < nb; b++) {
        int64_t e = actSeqLen ? actSeqLen[b] : T;
        if (e < prev || e > T) { status = ORC_EINVAL; goto done; }
        beg[b] = prev;
        end[b] = e;
        cfirst[b] = cc;
        cc += nblk(e - prev, l, d);
        prev = e;
    }
    if (cc != C || prev != T) { status = ORC_EINVAL; goto done; }

    /* weightGrad[r,n] */
    for (int64_t r = 0; r < l; r++)
        for (int64_t n = 0; n < N; n++) {
            orc_sum acc;
            orc_sum_init(&acc);
            for (int64_t b = 0; b < nb; b++) {
                int64_t k_n = nblk(end[b] - beg[b], l, d);
                for (int64_t i = 0; i < k_n; i++) {
                    int64_t c = cfirst[b] + i, tok = beg[b] + i * d + r;
                    for (int64_t k = 0; k < D; k++)
                        orc_sum_add(&acc, at3(outputGrad, c, n, k) * at3(input, tok, n, k));
                }
            }
            double err, A, v = orc_sum_result(&acc, &err, &A);
            orc_put(weightGrad, r * N + n, v, A, err);
            nsa_ctx c = {outputGrad, input, true, n, 0, r, nb, l, d, D, 0, 0, 0, 0, beg, end, cfirst};
            orc_refine_put(weightGrad, r * N + n, out_dtype, nsa_mpfr, &c);
        }

    /* inputGrad[t,n,k] */
    int64_t o = 0;
    for (int64_t b = 0; b < nb; b++) {
        int64_t k_n = nblk(end[b] - beg[b], l, d);
        for (int64_t t = beg[b]; t < end[b]; t++) {
            int64_t p = t - beg[b];
            int64_t ilo = p - l + 1 > 0 ? (p - l + 1 + d - 1) / d : 0;
            int64_t ihi = p / d < k_n - 1 ? p / d : k_n - 1;
            for (int64_t n = 0; n < N; n++)
                for (int64_t k = 0; k < D; k++, o++) {
                    orc_sum acc;
                    orc_sum_init(&acc);
                    for (int64_t i = ilo; i <= ihi; i++)
                        orc_sum_add(&acc, at2(weight, p - i * d, n) * at3(outputGrad, cfirst[b] + i, n, k));
                    double err, A, v = orc_sum_result(&acc, &err, &A);
                    orc_put(inputGrad, o, v, A, err);
                    nsa_ctx c = {weight, outputGrad, false, n, k, 0, nb, l, d, D, p, ilo, ihi, cfirst[b], beg, end, cfirst};
                    orc_refine_put(inputGrad, o, out_dtype, nsa_mpfr, &c);
                }
        }
    }
done:
    free(beg);
    return status;
}
