/* The in-memory form of one constraints/<op>.json (constraints/SCHEMA.md), shared by the
 * loader (constraints.c), the generator (gen.c) and the coverage classifier.  Internal to
 * fuzz/: the public API is fuzz.h.  Everything here is filled from the file; nothing is a
 * default copied from ops.md. */
#ifndef ACLCONFORM_FUZZ_CONSTRAINTS_H
#define ACLCONFORM_FUZZ_CONSTRAINTS_H

#include "fuzz.h"

#define CZ_MAX_DOMAIN 10
#define CZ_MAX_VALUES 8
#define CZ_MAX_VALID 8
#define CZ_MAX_DISTS 8
#define CZ_MAX_EDGES 32
#define CZ_MAX_RULES 24
#define CZ_MAX_TOL 8
#define CZ_MAX_PROFILES 4
#define CZ_MAX_VARIANTS 4
#define CZ_MAX_SPECIAL 8
#define CZ_MAX_FORMATS 8
#define CZ_MAX_EXH 8
#define CZ_STR 48

typedef unsigned cz_dtset; /* bit (1u << cf_dtype) */

typedef enum { CZ_REL_NONE, CZ_REL_EQUAL, CZ_REL_PROMOTE } cz_rel;

typedef struct {
    char name[CF_NAME_LEN];
    bool output;
    cz_dtset dtypes;
    int rank_min, rank_max;
    cz_rel rel;
    int rel_a, rel_b; /* tensor indices */
    int ndims;        /* per-dim limits ("dims") */
    int dim_idx[4];
    int64_t dim_max[4];
} cz_tensor;

/* One part of an attribute domain: a list of values or a (log-)uniform range. */
typedef struct {
    char label[24];
    double weight;
    bool is_range, log;
    double lo, hi;
    int nvalues;
    double values[CZ_MAX_VALUES];
} cz_domain_part;

typedef struct {
    char name[CF_NAME_LEN];
    cf_param_kind kind;
    bool nullable;
    bool derived; /* set by the shape model (NsaCompressGrad's l, d, actSeqLen) */
    int ndomain;
    cz_domain_part domain[CZ_MAX_DOMAIN];
    cz_dtset scalar_dtypes;
    int nvalid; /* "valid": strings (string), 0/1 (bool), integers (int) */
    char valid_str[CZ_MAX_VALID][CZ_STR];
    int64_t valid_int[CZ_MAX_VALID];
} cz_param;

typedef enum { CZ_DIST_NORMAL, CZ_DIST_UNIFORM, CZ_DIST_LOGUNIFORM } cz_dist_kind;
typedef struct {
    cz_dist_kind kind;
    double a, b; /* normal: a = scale; uniform: [a,b]; loguniform: magnitude in [a,b], random sign */
    double weight;
    bool positive; /* loguniform: no negative values */
    cz_dtset dtypes; /* "dtypes": only for tensors of these dtypes (0: every dtype) */
} cz_dist;

typedef enum {
    CZ_EDGE_LITERAL,   /* a number (a boundary: gets ULP neighbours) or "0" "-0" "inf" "-inf" "nan" */
    CZ_EDGE_CLASS,     /* min_subnormal, max_subnormal, min_normal, max_finite (optionally "-") */
    CZ_EDGE_PARAM,     /* {"param": p} or {"param": p, "one_minus": true} */
    CZ_EDGE_DIV        /* {"div": [p, q]} = p / q */
} cz_edge_kind;
typedef enum { CZ_CLS_MIN_SUB, CZ_CLS_MAX_SUB, CZ_CLS_MIN_NORMAL, CZ_CLS_MAX_FINITE } cz_cls;
typedef struct {
    cz_edge_kind kind;
    double v;
    cz_cls cls;
    bool neg;
    bool one_minus;
    bool boundary; /* numbers and param expressions: branch boundaries (ULP neighbours) */
    int pa, pb;    /* param indices */
} cz_edge;

typedef struct {
    int tensor;
    int ndists;
    cz_dist dists[CZ_MAX_DISTS];
    int nedges;
    cz_edge edges[CZ_MAX_EDGES];
    int ulp_neighbours;
    double edge_rate; /* per element; <0: not given */
} cz_values;

typedef enum {
    CZ_RULE_NULL_TENSOR,
    CZ_RULE_NULL_PARAM,
    CZ_RULE_DTYPE_NOT_ALLOWED,
    CZ_RULE_DTYPE_RELATION,
    CZ_RULE_RANK_OUT_OF_RANGE,
    CZ_RULE_SHAPE_EQUAL,
    CZ_RULE_NOT_BROADCASTABLE,
    CZ_RULE_OUTPUT_SHAPE,
    CZ_RULE_SHAPE_BROADCAST_DIMS,
    CZ_RULE_DIM_OUT_OF_RANGE,
    CZ_RULE_PARAM_INVALID,
    CZ_RULE_OUTPUT_OVERLAP,
    CZ_RULE_FORMAT_NOT_ACCEPTED,
    CZ_RULE_EMPTY_TENSOR,
    CZ_RULE_NSA_BLOCK_MULTIPLE,
    CZ_RULE_NSA_L_GT_D,
    CZ_RULE_NSA_D_MULTIPLE,
    CZ_RULE_NSA_ACTSEQLEN,
    CZ_RULE_NSA_C,
    CZ_RULE_NSA_DIMS,
    CZ_RULE_NULL_DATA, /* a non-empty target tensor whose data pointer is NULL (checked last) */
    CZ_RULE_KIND_COUNT
} cz_rule_kind;

typedef struct {
    char name[CZ_STR];
    cz_rule_kind kind;
    int32_t status;
    int ntargets;
    int targets[CF_MAX_TENSORS]; /* tensor indices, or param indices for *_PARAM* kinds */
    int to;                      /* shape_equal / shape_broadcast_dims: tensor index */
    int bcast[2];                /* output_shape: broadcast_of; */
    unsigned bdims;              /* shape_broadcast_dims: bit per dim */
    /* break values ("values"): dtypes for dtype_not_allowed, strings/ints/bools for param_invalid */
    int nvalues;
    cz_dtset value_dtypes;
    char value_str[CZ_MAX_VALID][CZ_STR];
    int64_t value_int[CZ_MAX_VALID];
} cz_rule;

typedef struct {
    cf_dtype dtype;
    char variant[FZ_VARIANT_LEN]; /* "" = any variant */
    double max_ulp, max_scaled_ulp;
} cz_tol;

typedef struct {
    char name[FZ_VARIANT_LEN];
    int nset;
    int param[CF_MAX_PARAMS];
    char str[CF_MAX_PARAMS][CZ_STR];
} cz_variant;

/* A profile as resolved rules: rule i's status and enabled flag, its break values. */
typedef struct {
    char name[16];
    bool disabled[CZ_MAX_RULES];
    int32_t status[CZ_MAX_RULES];
    bool has_values[CZ_MAX_RULES];
    cz_rule values[CZ_MAX_RULES]; /* only the value fields are used */
    int ntol;
    cz_tol tol[CZ_MAX_TOL];
    int nspecial;
    char special[CZ_MAX_SPECIAL][CZ_STR];
} cz_profile;

typedef enum {
#define FZ_MODEL(ID, id, kind) CZ_MODEL_##ID,
#include "models.def"
#undef FZ_MODEL
    CZ_MODEL_COUNT
} cz_model_kind;

/* The file's shape model: what every model has; the rest of its fields are its own
 * (fuzz/model_<id>.c, behind priv). */
typedef struct {
    cz_model_kind kind;
    int ntensors;
    int tensors[CF_MAX_TENSORS]; /* the tensors whose shapes the model draws (tensors[0] first) */
    int ref;                     /* the tensor of the rank and dim coverage bins */
    int self_filled;             /* an input whose values the model fills itself (no values entry), -1: none */
    void *priv;                  /* the model's own fields, allocated by its load (cz_free releases them) */
} cz_model;

typedef struct {
    int x, grad; /* tensors */
    int64_t chunk;
    int ngrad;
    double gradients[CZ_MAX_EXH];
    int nsets;
    /* per set: a value for each param (NAN-free), with scalar dtype and string forms */
    struct {
        int n;
        int param[CF_MAX_PARAMS];
        double v[CF_MAX_PARAMS];
        cf_dtype dt[CF_MAX_PARAMS];
    } sets[CZ_MAX_EXH];
} cz_exhaustive;

struct cz_constraints {
    char path[512];
    cf_op op;
    bool reduction;
    int ntensors;
    cz_tensor tensors[CF_MAX_TENSORS];
    int nparams;
    cz_param params[CF_MAX_PARAMS];
    bool has_promotion;
    int8_t promotion[CF_DTYPE_COUNT][CF_DTYPE_COUNT]; /* -1: not given */
    cz_model model;
    int nformats, nformats_rejected;
    char formats[CZ_MAX_FORMATS][16];
    int format_rank[CZ_MAX_FORMATS]; /* 0 = any rank */
    char formats_rejected[CZ_MAX_FORMATS][16];
    int nvalues;
    cz_values values[CF_MAX_TENSORS];
    int nrules;
    cz_rule rules[CZ_MAX_RULES];
    int stream_tensor;
    cz_dtset stream_dtypes;
    int nvariants;
    cz_variant variants[CZ_MAX_VARIANTS];
    int ntol;
    cz_tol tol[CZ_MAX_TOL];
    bool has_exhaustive;
    cz_exhaustive exh;
    int nprofiles; /* profiles[0] is "spec" (no overrides) */
    cz_profile profiles[CZ_MAX_PROFILES];
    cz_report report;
};

const cz_profile *cz_profile_get(const cz_constraints *cz, const char *profile);
int cz_tensor_index(const cz_constraints *cz, const char *name);
int cz_param_index(const cz_constraints *cz, const char *name);
/* promote(a, b) by the file's table (symmetric); -1 when the table has no entry. */
int cz_promote(const cz_constraints *cz, cf_dtype a, cf_dtype b);

/* ---- floating-point helpers (fp.c): bits of a dtype value, RNE from double ---- */
uint64_t fz_bits_from_double(cf_dtype dt, double v); /* RNE for floats; ints: round, saturate */
double fz_double_from_bits(cf_dtype dt, uint64_t bits);
uint64_t fz_load_bits(cf_dtype dt, const void *data, int64_t i);
void fz_store_bits(cf_dtype dt, void *data, int64_t i, uint64_t bits);
/* Edge class values of a float dtype. */
double fz_class_value(cf_dtype dt, cz_cls cls);
/* exp and log from basic IEEE operations only: identical on every C library. */
double fz_exp(double x);
double fz_log(double x);
/* Next representable value up (+1) / down (-1) from bits; floats only. */
uint64_t fz_bits_step(cf_dtype dt, uint64_t bits, int dir);

#endif

/* ---- shared by gen.c and coverage.c ---- */
/* Storage index (elements) of the view element with row-major linear index i. */
int64_t fz_view_index(const cf_tensor *t, int64_t i);
/* Resolves an edge value of a values entry for dtype dt, with the case's params (param edges).
 * False when the edge does not apply (non-finite for an integer dtype, a NULL param, ...). */
bool fz_edge_bits(const cz_constraints *cz, const cf_case *c, const cz_edge *e, cf_dtype dt, uint64_t *bits);
/* Numeric value of an f64 or scalar param of a case (NAN when NULL). */
double fz_param_value(const cf_param *p);
