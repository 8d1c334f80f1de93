/* aclconform_fuzz: the constraint files (constraints/<op>.json, spec formats.md) and the seeded
 * case generator driven by them.
 *
 * Everything the generator knows about an operator -- tensors, dtypes, ranks, shape model,
 * attribute domains, edge values, invalid-input rules and their statuses, tolerances, stream
 * variants, the `cann-kernel` overrides -- is read from the constraint file.  No C file repeats
 * it.  fuzz/ never calls impl/ or the oracle.
 *
 * Errors are values: every fallible function returns an fz_status; loaders also write a
 * one-line message "FILE: FIELD: expected ..." (FIELD is a JSON path such as
 * `tensors[2].dtypes[1]`) into a caller buffer.  Nothing here exits or aborts.
 *
 * Ownership: a cz_constraints is created by cz_load()/cz_load_dir() and released by cz_free().
 * Every cf_case filled here owns its tensor data and int arrays; release it with cf_case_free()
 * (common/case.h).  The generator functions zero *out first and leave it zeroed on failure.
 *
 * Determinism: a case depends only on (constraint file, profile, stream or rule, run_seed, k).
 * Its own seed is fz_case_seed(run_seed, op, dtype, variant, k) -- splitmix64 over an FNV-1a
 * hash of the names -- stored in out->seed; out->index = k.  Shards take case indices
 * k = K, K+N, K+2N, ... of each stream (spec cli.md); any single case can be regenerated alone.
 * Sampling uses only IEEE basic operations (own exp/log, no libm transcendental calls), so
 * the same seed gives the same bytes on any platform that evaluates doubles as IEEE binary64
 * (FLT_EVAL_METHOD 0, no FMA contraction: the default for -std=c11 on x86-64 and AArch64).
 * Threads: the loaded constraints are read-only after loading, so generator calls may run
 * concurrently on one cz_constraints. */
#ifndef ACLCONFORM_FUZZ_H
#define ACLCONFORM_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "case.h"

typedef enum {
    FZ_OK = 0,
    FZ_ERR_IO,     /* file or directory could not be read */
    FZ_ERR_PARSE,  /* not JSON */
    FZ_ERR_SCHEMA, /* JSON that breaks constraints/SCHEMA.md */
    FZ_ERR_ARG,    /* bad argument: unknown profile, stream, rule index, k out of range */
    FZ_ERR_NOMEM,
    FZ_ERR_GENERATE /* could not build a case satisfying the request (should not happen) */
} fz_status;

const char *fz_status_name(fz_status s);

/* ---------------------------------------------------------------- constraints ---- */
typedef struct cz_constraints cz_constraints; /* opaque, read-only after loading */

/* "report": how the published report shows the operator (its error plot and the words for a
 * row that passes by the scaled bound); descriptions only, never used to judge. */
#define CZ_MAX_MARKS 6
typedef struct {
    char x[32];     /* an input tensor, or "cancellation" (m/|exact|); "" = no plot */
    char scale[32]; /* a scalar or f64 attribute multiplied in */
    char label[48];
    int nmarks;
    double mark_at[CZ_MAX_MARKS];
    char mark_label[CZ_MAX_MARKS][48];
    char scaled_reason[160];
} cz_report;

const cz_report *cz_report_of(const cz_constraints *cz);

/* Reads and validates one constraint file.  On success *out is a new object (cz_free()).
 * On failure *out is NULL and err holds "PATH: FIELD: expected ...". */
fz_status cz_load(const char *path, cz_constraints **out, char *err, size_t errlen);
/* Loads DIR/<op>.json for every operator of common/ops.def into out[op].  All or nothing:
 * on failure every out[i] is NULL. */
fz_status cz_load_dir(const char *dir, cz_constraints *out[CF_OP_COUNT], char *err, size_t errlen);
void cz_free(cz_constraints *cz);

cf_op cz_op(const cz_constraints *cz);
const char *cz_path(const cz_constraints *cz);
const char *cz_op_class(const cz_constraints *cz); /* "elementwise" or "reduction" */

/* Profiles named by the file ("spec" always first).  NULL profile means "spec". */
int cz_profile_count(const cz_constraints *cz);
const char *cz_profile_name(const cz_constraints *cz, int i);
bool cz_has_profile(const cz_constraints *cz, const char *profile);

/* Tolerance of (profile, output dtype, variant) -- spec numerics.md §4, §7.  variant may be
 * NULL or "" for the dtype's default; a profile override wins over the base entry.
 * FZ_ERR_ARG when the file states no tolerance for that dtype. */
fz_status cz_tolerance(const cz_constraints *cz, const char *profile, cf_dtype out_dtype,
                       const char *variant, double *max_ulp, double *max_scaled_ulp);

/* Special-value behaviour flags of a profile (for the oracle/scorer), e.g.
 * "x_nan_with_nonneg_eps_gives_zero".  False for an unknown flag or profile. */
bool cz_special(const cz_constraints *cz, const char *profile, const char *flag);
int cz_special_count(const cz_constraints *cz, const char *profile);
const char *cz_special_name(const cz_constraints *cz, const char *profile, int i);

/* ---------------------------------------------------------------- streams ---- */
/* One stream per report row: (op, output dtype, variant).  NsaCompressGrad's dtype is its
 * (common) input dtype; mixed-dtype cases belong to their output dtype's stream.  variant is
 * the report's string ("approximate=tanh"), "" for operators with one variant. */
#define FZ_VARIANT_LEN 48
typedef struct {
    cf_op op;
    cf_dtype dtype;
    char variant[FZ_VARIANT_LEN];
} fz_stream;

/* The most streams one operator can have: a stream per (output dtype, variant), and the loader
 * refuses a file with more variants than it holds (constraints.c asserts the bound). */
#define FZ_MAX_STREAMS_PER_OP 64

/* Writes up to max streams into out (out may be NULL when max is 0) and returns how many
 * the profile has (so a first call with max 0 sizes the array).  Negative on bad arguments. */
int fz_streams(const cz_constraints *cz, const char *profile, fz_stream *out, int max);

uint64_t fz_case_seed(uint64_t run_seed, cf_op op, cf_dtype dtype, const char *variant, int64_t k);

/* Case k (k >= 0) of stream s: a valid case (expect_status 0, rule ""), origin_kind "fuzz" or
 * "edge" (the latter when it is built around planted edge values); `note` says which stream
 * and what kind of values (for people, not parsed).  Shapes, views, dtypes,
 * params and values are drawn as described in SCHEMA.md. */
fz_status fz_generate(const cz_constraints *cz, const char *profile, const fz_stream *s,
                      uint64_t run_seed, int64_t k, cf_case *out);

/* The structural tiers (sizes, ranks) are drawn per case, except the large tier (more than
 * 2^20 elements, the multi-chunk partitioning of every kernel), which is scheduled: valid case
 * k of every stream is large exactly when fz_case_is_large(k) (k % 1024 == 700).  Invalid
 * cases are never large. */
bool fz_case_is_large(int64_t k);
/* Valid case k of every stream is in the table tier (2^18 - 1 .. 2^18 + 1024 elements for
 * element-wise shapes, attribute domain parts in turn) exactly when k % 512 == 300. */
bool fz_case_is_table(int64_t k);

/* ---------------------------------------------------------------- invalid inputs ---- */
/* The rules enabled in a profile (disabled ones -- behaviour the profile leaves undefined or
 * accepts -- are not listed), in file order; i in [0, fz_rule_count). */
int fz_rule_count(const cz_constraints *cz, const char *profile);
const char *fz_rule_name(const cz_constraints *cz, const char *profile, int i);   /* NULL if bad i */
int32_t fz_rule_status(const cz_constraints *cz, const char *profile, int i);     /* -1 if bad i */
int fz_rule_find(const cz_constraints *cz, const char *profile, const char *name); /* -1 if none */

/* Case k of rule i: a case that breaks exactly that rule and nothing else, expect_status =
 * the rule's status in this profile, rule = its name, origin_kind "invalid", note naming the
 * broken tensor or parameter.  The base valid case comes from a stream picked by the seed.  Its seed is
 * fz_case_seed(run_seed, op, CF_DTYPE_COUNT, rule name, k). */
fz_status fz_generate_invalid(const cz_constraints *cz, const char *profile, int rule_i,
                              uint64_t run_seed, int64_t k, cf_case *out);

/* ---------------------------------------------------------------- exhaustive ---- */
/* --exhaustive (spec cli.md): for elementwise operators and 16-bit stream dtypes, every bit
 * pattern of the swept input (the file's "exhaustive.x", e.g. self) paired with each of a
 * fixed set of gradients ("exhaustive.gradients"), chunked into cases of "exhaustive.chunk"
 * patterns.  Each case is x [G, chunk] (0-stride rows over one chunk of patterns) and the
 * gradient [G, chunk] (0-stride columns over the G gradients).  For an f32 stream only when
 * all_f32 (all 2^32 patterns).  Returns the number of cases; 0 when the stream has none. */
int64_t fz_exhaustive_count(const cz_constraints *cz, const fz_stream *s, bool all_f32);
fz_status fz_exhaustive_case(const cz_constraints *cz, const char *profile, const fz_stream *s,
                             uint64_t run_seed, int64_t k, cf_case *out);

/* ---------------------------------------------------------------- coverage ---- */
/* Coverage classes a case exercises, found by inspecting the case (not by trusting the
 * generator's intent).  fz_coverage_add() increments counts[class] once per case that shows it. */
typedef enum {
#define FZ_COV(id, text) FZ_COV_##id,
#include "fz_coverage.def"
#undef FZ_COV
    FZ_COV_COUNT
} fz_cov_class;

typedef struct {
    int64_t cases;
    int64_t counts[FZ_COV_COUNT];
} fz_coverage;

const char *fz_cov_name(fz_cov_class c);
void fz_coverage_add(const cz_constraints *cz, const cf_case *c, fz_coverage *cov);

/* ---------------------------------------------------------------- coverage bins ---- */
/* Structural coverage of one operator: where in each documented range its valid cases fell.
 * The bin set is derived from the constraint file alone and holds only bins a generator
 * following the file reaches, so a bin with 0 hits is a gap.  Groups (bin names are
 * "GROUP:BIN", e.g. "rank:3", "numel:1023-1025", "S2:513-4092", "eps:|x|<f32min_normal"):
 *   rank          rank of the reference tensor (broadcast: the output; NSA: input; else the
 *                 shape model's first tensor), one bin per rank of its documented range
 *   numel         elements of the case's largest tensor, in tiers around the built-in
 *                 implementation's chunks (element-wise: blocks of 1024 and parallel grains of
 *                 16384, +-1) up to the large tier ">= 1048577"
 *   dim[-1], dim[-2], dim[outer]   (element-wise) size tiers of the reference tensor's last,
 *                 second-to-last and any further dims: 0, 1, 2-6, vec+-1 (7 8 9 15 16 17 31
 *                 32 33), pow2+-1 (2^k-1..2^k+1, k >= 6), 7-1025
 *   B, N, S1, S2  (softmax) tiers; S2 over 1-64, 65-512, 513-4092, 4093-4095, 4096, vec+-1,
 *                 pow2+-1 and the documented maximum
 *   D, l, d, N, batches   (NsaCompressGrad) D at its minimum, up to 256 - 16, 256 (the
 *                 implementation's row chunk), above it, its maximum; l likewise around 128;
 *                 d smallest, l - 16, between; N 1, 2-4, >= 5; batches 1, 2-6, 7-64, >= 65
 *   <param>       every real attribute or scalar (scale, eps, beta, threshold): magnitude
 *                 bands (|x| < FLT_MIN, then 1e-30, 1e-22, 1e-14, 1e-7, decades ... 1e8), 0,
 *                 < 0, nan, inf -- only those its domain reaches
 *   Q*X, branch   for a branch boundary edge {"div": [P, Q]} on tensor X (Softplus:
 *                 beta*self): magnitude bands of z = Q*x over the viewed elements, 0, < 0,
 *                 nan, inf; and both sides of the branch (z > P, z <= P)
 *   X:int         an integer element of X with |x| >= 2^31 (when a dist of integer dtypes
 *                 reaches that far)
 * A case counts once in each bin it shows (hits = number of such cases).  Invalid cases
 * (expect_status != 0) and cases of another operator are counted in fz_bins_invalid() only.
 * A thread-count bin is the harness's (it is not a property of the case).  Not thread-safe:
 * one fz_bins per thread, then fz_bins_merge(). */
typedef struct fz_bins fz_bins;
fz_bins *fz_bins_new(const cz_constraints *cz); /* NULL on bad argument or out of memory */
void fz_bins_free(fz_bins *b);
void fz_bins_add(fz_bins *b, const cf_case *c);
int fz_bins_count(const fz_bins *b);                 /* number of bins */
const char *fz_bins_name(const fz_bins *b, int i);   /* "S2:513-4092"; NULL for a bad i */
const char *fz_bins_group(const fz_bins *b, int i);  /* "S2" */
int64_t fz_bins_hits(const fz_bins *b, int i);       /* cases in bin i; -1 for a bad i */
int fz_bins_find(const fz_bins *b, const char *name); /* index or -1 */
int64_t fz_bins_cases(const fz_bins *b);             /* valid cases added */
int64_t fz_bins_invalid(const fz_bins *b);           /* cases ignored (invalid, other op) */
int fz_bins_missing(const fz_bins *b);               /* bins with 0 hits */
cf_op fz_bins_op(const fz_bins *b);
/* Adds src's counts to dst (same operator, same constraint file); FZ_ERR_ARG otherwise. */
fz_status fz_bins_merge(fz_bins *dst, const fz_bins *src);
/* JSON: {"op": "...", "cases": n, "invalid_cases": n, "bins": [{"group", "name", "hits"}...],
 * "missing": ["name"...]} -- as a cJSON tree (caller cJSON_Delete()s it) or as text (caller
 * free()s it).  NULL on out of memory. */
struct cJSON *fz_bins_to_cjson(const fz_bins *b);
char *fz_bins_json(const fz_bins *b);

#endif
