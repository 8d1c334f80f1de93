/* What a shape model of the generator plugs into (models.def: one file fuzz/model_<id>.c per
 * model).  A model loads its fields of a constraint file's "shape_model", draws the shapes of a
 * case (and the attributes that follow from them), may fill data it owns, breaks the rules that
 * are about its shapes, and classifies the coverage of a case; everything else (dtypes,
 * attributes, views, values, the generic rules) is gen.c's.  Internal to fuzz/. */
#ifndef ACLCONFORM_FUZZ_MODEL_H
#define ACLCONFORM_FUZZ_MODEL_H

#include <cjson/cJSON.h>
#include <math.h>

#include "constraints.h"

/* ---------------------------------------------------------------- randomness ---- */
/* xoshiro256** seeded by splitmix64: every case draws from its own stream. */
typedef struct {
    uint64_t s[4];
} rng;

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rnext(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static inline double runif(rng *r) { return (double)(rnext(r) >> 11) * 0x1p-53; }
static inline bool rbern(rng *r, double p) { return runif(r) < p; }
static inline int64_t rrange(rng *r, int64_t lo, int64_t hi) /* inclusive */
{
    if (hi <= lo) return lo;
    return lo + (int64_t)(rnext(r) % (uint64_t)(hi - lo + 1));
}
/* Marsaglia's polar method: no trigonometry, and fz_log rather than the C library's log, so
 * the draws do not depend on the platform's libm (sqrt is correctly rounded by IEEE 754). */
static inline double rnormal(rng *r)
{
    for (;;) {
        double u = 2 * runif(r) - 1, v = 2 * runif(r) - 1, s = u * u + v * v;
        if (s > 0 && s < 1) return u * sqrt(-2 * fz_log(s) / s);
    }
}

/* ---------------------------------------------------------------- the case being built ---- */
/* Element budgets of the size tiers (gen.c, "shapes"). */
#define FZ_SMALL_BUDGET 4096
#define FZ_MEDIUM_BUDGET 65536
#define FZ_LARGE_ELEMS ((int64_t)1 << 20)

typedef struct {
    const cz_constraints *cz;
    const cz_profile *pf;
    rng r;
    cf_case *c;
    const fz_stream *s;
    int rule; /* -1: valid */
    double edge_rate;
    int64_t k;     /* case index */
    uint64_t seed; /* the seed this build started from */
    bool large;    /* the large structural tier (> 2^20 elements) */
    bool table;    /* the table tier (2^18 elements, attribute domain parts in turn) */
    bool no_zero_stride[CF_MAX_TENSORS]; /* views the model needs dense (its fill reads them whole) */
    char note[40];                       /* what the model adds to a valid case's note */
    void *mstate; /* the model's state of this case (allocated by its draw, freed with the case) */
    char target[CF_NAME_LEN]; /* what an invalid case broke (for the note) */
} fz_gen;

/* Shape helpers of gen.c: a size in [lo, hi] from the tiers; a multiple of m in [lo, hi]; dims
 * shrunk (largest first) until their product fits budget; a rank in [rlo, rhi] and its dims;
 * a tensor's shape. */
int64_t fz_tier_size(fz_gen *g, int64_t lo, int64_t hi);
int64_t fz_tier_multiple(fz_gen *g, int64_t lo, int64_t hi, int64_t m);
void fz_fit_budget(int64_t *dims, int n, int64_t budget);
void fz_draw_shape(fz_gen *g, int rlo, int rhi, int64_t *dims, int *rank);
void fz_set_shape(cf_tensor *t, int rank, const int64_t *dims);
/* Invalid cases k = 0 and 1 take a rule's two canonical edge forms; later k draw the form. */
bool fz_edge_k(const fz_gen *g);

/* ---------------------------------------------------------------- the loader ---- */
/* The constraint loader's JSON helpers (constraints.c): each failure names the file and the JSON
 * path of the field, and says what was expected. */
typedef struct cz_ld cz_ld;
#define CZ_PATHLEN 160
#define TRY(x)                                                                                     \
    do {                                                                                           \
        fz_status s_ = (x);                                                                        \
        if (s_ != FZ_OK) return s_;                                                                \
    } while (0)
fz_status cz_failf(cz_ld *L, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cz_sub(char *out, const char *path, const char *key); /* "path.key" (CZ_PATHLEN) */
void cz_idx(char *out, const char *path, int i);           /* "path[i]" */
fz_status cz_member(cz_ld *L, const cJSON *obj, const char *path, const char *key, bool required, const cJSON **out);
fz_status cz_as_array(cz_ld *L, const cJSON *it, const char *p, int maxn, int *n);
fz_status cz_as_int(cz_ld *L, const cJSON *it, const char *p, int64_t lo, int64_t hi, int64_t *v);
fz_status cz_get_num(cz_ld *L, const cJSON *obj, const char *path, const char *key, bool required, double *v);
fz_status cz_get_range(cz_ld *L, const cJSON *obj, const char *path, const char *key, int64_t lo, int64_t hi, int64_t out[2]);
fz_status cz_tensor_ref(cz_ld *L, const cz_constraints *cz, const cJSON *it, const char *p, int *out);
fz_status cz_param_ref(cz_ld *L, const cz_constraints *cz, const cJSON *it, const char *p, int *out);
fz_status cz_tensor_member(cz_ld *L, const cz_constraints *cz, const cJSON *obj, const char *path, const char *key, int *out);
/* obj.key: the names of two tensors, into out[0] and out[1]. */
fz_status cz_tensor_pair(cz_ld *L, const cz_constraints *cz, const cJSON *obj, const char *path, const char *key, int out[2]);
/* obj.key: a list of dims 0..3 as a bit mask (bit d). */
fz_status cz_dims_mask(cz_ld *L, const cJSON *obj, const char *path, const char *key, unsigned *mask);
/* "tensors": the names of the tensors a model shapes, into cz->model.tensors (non-empty). */
fz_status cz_model_tensors(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p);

/* ---------------------------------------------------------------- coverage bins ---- */
/* A bin holds the values lo <= v <= hi (BK_RANGE), a vector-width neighbour (BK_VEC), a power of
 * two +-1 from 64 on (BK_POW2), NaN (BK_NAN), or lo <= |v| < hi (BK_ABS). */
typedef enum { BK_RANGE, BK_VEC, BK_POW2, BK_NAN, BK_ABS } fz_bin_kind;

/* What a group of bins measures; G_MODEL groups are the shape model's (its mark). */
typedef enum {
    G_RANK,    /* rank of the reference tensor */
    G_NUMEL,   /* elements of the largest tensor */
    G_DIM,     /* a dim of the reference tensor: arg = position from the right (1, 2), 3 = any further out */
    G_MODEL,   /* the model's: arg is its own */
    G_PARAM,   /* value of param arg */
    G_PRODUCT, /* per element: param pb * tensor t (z = beta * self) */
    G_BRANCH,  /* per element: z > param pa (lo = 1) or z <= pa (lo = 0) */
    G_BIGINT   /* an element of integer tensor t with |x| >= 2^31 */
} fz_group_kind;

typedef struct {
    fz_group_kind kind;
    int arg, t, pa, pb;
    int first, n; /* bins [first, first + n) */
} fz_bin_group;

fz_bin_group *fz_bins_new_group(fz_bins *b, fz_group_kind k, int arg);
void fz_bins_add_bin(fz_bins *b, fz_bin_group *g, const char *gname, const char *name, fz_bin_kind k, double lo, double hi);
void fz_bins_add_range(fz_bins *b, fz_bin_group *g, const char *gname, double lo, double hi);
/* lo, below pivot, pivot, above it, hi (in steps; the middle three only when hi passes pivot) */
void fz_bins_add_pivot_band(fz_bins *b, fz_bin_group *g, const char *gname, double lo, double step, double pivot, double hi);
/* a G_NUMEL group: {0 when empty_ok} and the tiers [t[i][0], t[i][1]] */
void fz_bins_add_numel(fz_bins *b, const double (*t)[2], int n, bool empty_ok);
/* the element-wise bins (same, broadcast): element counts around the driver's blocks and
 * grains, and the size tiers of the reference tensor's last three dims */
void fz_bins_elementwise(fz_bins *b, const cz_constraints *cz, bool empty_ok);
const cz_constraints *fz_bins_cz(const fz_bins *b);
/* seen[i] for every bin i of group g that holds v */
void fz_bins_mark(const fz_bins *b, const fz_bin_group *g, double v, bool *seen);

/* ---------------------------------------------------------------- the interface ---- */
typedef bool (*fz_breaker)(fz_gen *g, const cz_rule *ru, int tgt);

typedef struct {
    /* the model's fields of the "shape_model" object m at JSON path p: sets cz->model's tensors,
     * ref, self_filled and priv (kind is set, self_filled is -1 and priv NULL on entry) */
    fz_status (*load)(cz_ld *L, cz_constraints *cz, const cJSON *m, const char *p);
    /* the shapes of a valid case, and the attributes that follow from them */
    fz_status (*draw)(fz_gen *g);
    /* after gen.c's values: the data the model owns (NULL: none) */
    void (*fill)(fz_gen *g);
    /* how the model breaks a rule kind (its own rules; a generic rule it breaks its own way);
     * NULL entries are gen.c's */
    fz_breaker brk[CZ_RULE_KIND_COUNT];
    /* the model's coverage bins (after the rank bins), and their marks for a valid case */
    void (*bins)(fz_bins *b, const cz_constraints *cz, bool empty_ok);
    void (*mark)(const fz_bins *b, const fz_bin_group *g, const cf_case *c, bool *seen);
    /* the model's coverage classes of a case (fz_coverage.def; NULL: none) */
    void (*cover)(const cz_model *m, const cf_case *c, bool *seen);
} fz_model;

#define FZ_MODEL(ID, id, kind) extern const fz_model fz_model_##id;
#include "models.def"
#undef FZ_MODEL

const fz_model *fz_model_of(cz_model_kind k);
/* The kind's name in a constraint file ("same", ...). */
const char *fz_model_name(cz_model_kind k);
/* Whether gen.c breaks rule kind k for any model (else only the models whose brk has it). */
bool fz_rule_generic(cz_rule_kind k);
/* The kind named in a constraint file; CZ_MODEL_COUNT when there is none of that name. */
cz_model_kind fz_model_find(const char *kind);
/* "same, broadcast, ..." (for messages): the first *len characters of the result */
const char *fz_model_kinds(int *len);

#endif
