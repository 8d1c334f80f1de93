/* report RUN.json --format md|html|csv: the published form of a run, rendered from the report
 * JSON only.  Written for a reader deciding "is this library conformant?": the verdict and the
 * failing rows first (one reason each), a table of contents, then per operator the rows with
 * their ULP and msprobe metrics, a histogram and an error-vs-input plot per row, the failing
 * cases with their FAIL line and rerun command, the worst elements and the invalid-input rules.
 * Every string from the report is data: escaped for HTML, code-spanned or escaped for Markdown,
 * quoted for CSV. */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "report.h"

typedef enum { F_MD, F_HTML, F_CSV } fmt_t;

typedef struct {
    FILE *f;
    fmt_t fmt;
    char base[PATH_MAX]; /* the output file's directory (resolved): links are relative to it */
    bool have_base;
    const char *rerun; /* "replay" (a sweep's cases run on a target) or "score" (exported cases) */
    const char *seed, *profile, *shard; /* of the run */
    /* Markdown written to a file: the figures go beside it as SVG files, in plot_dir (a path
     * derived from the output file, "<page without .md>/plots") linked as plot_rel */
    char plot_dir[PATH_MAX], plot_rel[PATH_MAX];
    cf_status st; /* the first failure to write a figure */
    cf_err e;
} doc;

/* ---- escaping ---- */

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '<') fputs("&lt;", f);
        else if (ch == '>') fputs("&gt;", f);
        else if (ch == '&') fputs("&amp;", f);
        else if (ch == '"') fputs("&quot;", f);
        else if (ch == '\'') fputs("&#39;", f);
        else if (ch < 0x20 || ch == 0x7f) fputc(' ', f);
        else fputc(ch, f);
    }
}

static void md_text(FILE *f, const char *s)
{
    if (!*s) fputc('-', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f) fputc(' ', f);
        else {
            /* "](" / "][" would make a link: escaping that ']' is enough (a plain [0,3] stays) */
            if (strchr("\\`<>|&*", ch) || (ch == ']' && (s[1] == '(' || s[1] == '['))) fputc('\\', f);
            fputc(ch, f);
        }
    }
}

/* A code span with a fence longer than any run of backticks in s (CommonMark), '|' escaped for
 * GFM tables (the one escape a table cell honours inside code), control characters as spaces. */
static void md_code(FILE *f, const char *s)
{
    int run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    for (int k = 0; k <= longest; k++) fputc('`', f);
    if (longest) fputc(' ', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f) fputc(' ', f);
        else if (ch == '|') fputs("\\|", f);
        else fputc(ch, f);
    }
    if (longest) fputc(' ', f);
    for (int k = 0; k <= longest; k++) fputc('`', f);
}

/* RFC 4180: quoted when it holds a comma, quote or line break */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\r' || *s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void text(doc *d, const char *s)
{
    if (d->fmt == F_HTML) html_escape(d->f, s);
    else md_text(d->f, s);
}

static void code(doc *d, const char *s)
{
    if (d->fmt == F_HTML) {
        fputs("<code>", d->f);
        html_escape(d->f, s);
        fputs("</code>", d->f);
    } else md_code(d->f, s);
}

/* ---- numbers: 4 significant digits, counts as integers with thousands separators ---- */

static const char *num4(char *b, size_t n, double v)
{
    if (isnan(v)) snprintf(b, n, "-");
    else if (isinf(v)) snprintf(b, n, "%sinf", v < 0 ? "-" : "");
    else if (v == 0) snprintf(b, n, "0");
    else snprintf(b, n, "%.4g", v);
    return b;
}

static const char *count(char *b, size_t n, int64_t v)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRId64, v);
    size_t len = strlen(t), k = 0;
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        if (i && (len - i) % 3 == 0 && t[0] != '-') b[k++] = ',';
        b[k++] = t[i];
    }
    b[k] = '\0';
    return b;
}

/* ---- links: a case path of the report, relative to the page, only when it exists ---- */

static bool link_target(const doc *d, const char *path, char *out, size_t n)
{
    char abs[PATH_MAX];
    if (!path[0] || !realpath(path, abs)) return false;
    if (!d->have_base) {
        snprintf(out, n, "%s", path);
        return true;
    }
    /* common prefix by path components, then ../ per remaining base component */
    size_t i = 0, last = 0;
    while (d->base[i] && abs[i] && d->base[i] == abs[i]) {
        if (abs[i] == '/') last = i;
        i++;
    }
    if (!d->base[i] && (abs[i] == '/' || !abs[i])) last = i;
    size_t k = 0;
    out[0] = '\0';
    for (const char *p = d->base + last; *p; p++)
        if (*p == '/' && k + 4 < n) k += (size_t)snprintf(out + k, n - k, "../");
    snprintf(out + k, n - k, "%s", abs[last] == '/' ? abs + last + 1 : abs + last);
    if (!out[0]) snprintf(out, n, ".");
    return true;
}

/* A stored case: a link (HTML: <a>, Markdown: [`path`](rel)); a path that does not exist is shown
 * as text and said so, never linked. */
static void case_link(doc *d, const char *path)
{
    char rel[PATH_MAX + 64];
    if (!link_target(d, path, rel, sizeof rel)) {
        code(d, path);
        text(d, " (not found)");
        return;
    }
    if (d->fmt == F_HTML) {
        fputs("<a class=\"case\" href=\"", d->f);
        html_escape(d->f, rel);
        fputs("\">", d->f);
        code(d, path);
        fputs("</a>", d->f);
    } else {
        fputc('[', d->f);
        md_code(d->f, path);
        fputs("](", d->f);
        for (const char *p = rel; *p; p++) { /* a URL: spaces and parentheses percent-encoded */
            if (*p == ' ') fputs("%20", d->f);
            else if (*p == '(') fputs("%28", d->f);
            else if (*p == ')') fputs("%29", d->f);
            else if ((unsigned char)*p >= 0x20) fputc(*p, d->f);
        }
        fputc(')', d->f);
    }
}

/* ---- tables ---- */

typedef struct {
    const char *head, *tip; /* tip: the column's legend (HTML title) */
    char align;             /* 'l' or 'r' */
} col_t;

static void table_open(doc *d, const col_t *cols, int n, const char *cls)
{
    if (d->fmt == F_HTML) {
        fprintf(d->f, "<div class=\"scroll\"><table class=\"%s\"><tr>", cls);
        for (int i = 0; i < n; i++) {
            fputs(cols[i].align == 'l' ? "<th class=\"l\"" : "<th", d->f);
            if (cols[i].tip) {
                fputs(" title=\"", d->f);
                html_escape(d->f, cols[i].tip);
                fputs("\"", d->f);
            }
            fputs(">", d->f);
            html_escape(d->f, cols[i].head);
            fputs(cols[i].tip ? "<sup>?</sup></th>" : "</th>", d->f);
        }
        fputs("</tr>\n", d->f);
    } else {
        fputs("|", d->f);
        for (int i = 0; i < n; i++) fprintf(d->f, " %s |", cols[i].head);
        fputs("\n|", d->f);
        for (int i = 0; i < n; i++) fputs(cols[i].align == 'r' ? "---:|" : "---|", d->f);
        fputs("\n", d->f);
    }
}

static void row_open(doc *d, const char *cls)
{
    if (d->fmt == F_HTML) fprintf(d->f, "<tr%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    else fputs("|", d->f);
}
static void cell_open(doc *d, char align)
{
    if (d->fmt == F_HTML) fputs(align == 'l' ? "<td class=\"l\">" : "<td>", d->f);
    else fputs(" ", d->f);
}
static void cell_close(doc *d) { fputs(d->fmt == F_HTML ? "</td>" : " |", d->f); }
static void row_close(doc *d) { fputs(d->fmt == F_HTML ? "</tr>\n" : "\n", d->f); }
static void table_close(doc *d) { fputs(d->fmt == F_HTML ? "</table></div>\n" : "\n", d->f); }

static void cell_text(doc *d, char align, const char *s)
{
    cell_open(d, align);
    text(d, s);
    cell_close(d);
}
static void cell_code(doc *d, const char *s)
{
    cell_open(d, 'l');
    if (s[0]) code(d, s);
    else text(d, "-");
    cell_close(d);
}
static void cell_num(doc *d, double v)
{
    char b[40];
    cell_text(d, 'r', num4(b, sizeof b, v));
}
static void cell_count(doc *d, int64_t v)
{
    char b[40];
    cell_text(d, 'r', count(b, sizeof b, v));
}

static void heading(doc *d, int level, const char *id, const char *s)
{
    if (d->fmt == F_HTML) {
        fprintf(d->f, "<h%d", level);
        if (id) {
            fputs(" id=\"", d->f);
            html_escape(d->f, id);
            fputs("\"", d->f);
        }
        fputs(">", d->f);
        html_escape(d->f, s);
        fprintf(d->f, "</h%d>\n", level);
    } else {
        for (int i = 0; i < level; i++) fputc('#', d->f);
        fputc(' ', d->f);
        md_text(d->f, s);
        fputs("\n\n", d->f);
    }
}

static void para_open(doc *d, const char *cls)
{
    if (d->fmt == F_HTML) fprintf(d->f, "<p%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
}
static void para_close(doc *d) { fputs(d->fmt == F_HTML ? "</p>\n" : "\n\n", d->f); }
static void strong(doc *d, const char *s)
{
    fputs(d->fmt == F_HTML ? "<b>" : "**", d->f);
    text(d, s);
    fputs(d->fmt == F_HTML ? "</b>" : "**", d->f);
}

/* ---- what a row says ---- */

static const cf_row **sorted_rows(cf_row *rows, int n)
{
    const cf_row **p = malloc(sizeof *p * (size_t)(n ? n : 1));
    if (!p) return NULL;
    for (int i = 0; i < n; i++) p[i] = &rows[i];
    /* operators in ops.def order, dtypes in one fixed order (f16, bf16, f32, f64, ...), variants
     * by name: the same order in every section */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            const cf_row *a = p[j - 1], *b = p[j];
            cf_op oa, ob;
            int ka = cf_op_parse(a->op, &oa) ? (int)oa : CF_OP_COUNT, kb = cf_op_parse(b->op, &ob) ? (int)ob : CF_OP_COUNT;
            int c = ka != kb ? ka - kb : a->dtype != b->dtype ? (int)a->dtype - (int)b->dtype : strcmp(a->variant, b->variant);
            if (c <= 0) break;
            p[j - 1] = b, p[j] = a;
        }
    return p;
}

static const char *verdict_of(const cf_row *r) { return cf_row_verdict(r); }
static bool row_fails(const cf_row *r) { return !strcmp(verdict_of(r), "fail"); }
static bool passes_by_scaled(const cf_row *r) { return !row_fails(r) && r->cases && r->max_ulp > r->tol.max_ulp; }

/* FAIL (bold), "pass", "pass (scaled bound)" or "no data" */
static void verdict_cell(doc *d, const cf_row *r)
{
    cell_open(d, 'l');
    if (row_fails(r)) strong(d, "FAIL");
    else text(d, r->cases ? (passes_by_scaled(r) ? "pass (scaled bound)" : "pass") : "no data");
    cell_close(d);
}

static void row_name(const cf_row *r, char *b, size_t n)
{
    snprintf(b, n, "%s %s%s%s", r->op, cf_dtype_name(r->dtype), r->variant[0] ? " " : "", r->variant);
}

static int64_t kind_count(const cf_row *r, int k)
{
    if (k < CF_MM_COUNT) return r->mismatches[k];
    int64_t n = 0; /* status, crash, timeout, error: the examples kept (1 or 2 cases) */
    for (int s = 0; r->examples && s < 2; s++) n += r->examples[k][s].used;
    return n;
}

/* the kinds of a failing row, most common first */
static int kinds_by_count(const cf_row *r, int *order)
{
    int n = 0;
    for (int k = 0; k < CF_EX_KINDS; k++)
        if (k != CF_MM_signed_zero && (kind_count(r, k) > 0 || (r->examples && r->examples[k][0].used))) order[n++] = k;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && kind_count(r, order[j]) > kind_count(r, order[j - 1]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

/* One line that says why a row has its verdict. */
static void row_reason(const cf_row *r, char *b, size_t n)
{
    char x[40], y[40], z[40];
    if (r->cases == 0) {
        snprintf(b, n, "no case ran");
        return;
    }
    if (row_fails(r)) {
        int order[CF_EX_KINDS];
        int nk = kinds_by_count(r, order);
        size_t k = (size_t)snprintf(b, n, "%s of %s cases fail", count(x, sizeof x, r->failed_cases), count(y, sizeof y, r->cases));
        if (nk) {
            int64_t c = kind_count(r, order[0]);
            if (order[0] < CF_MM_COUNT)
                k += (size_t)snprintf(b + k, n - k, ", mostly %s (%s elements)", cf_example_kind_name(order[0]), count(z, sizeof z, c));
            else k += (size_t)snprintf(b + k, n - k, ", %s", cf_example_kind_name(order[0]));
        }
        if (r->worst_finite.has && k < n && r->worst_finite.ulp > r->tol.max_ulp)
            snprintf(b + k, n - k, "; largest finite error %s ULP (tolerance %s)", num4(x, sizeof x, r->worst_finite.ulp),
                     num4(y, sizeof y, r->tol.max_ulp));
        return;
    }
    if (passes_by_scaled(r))
        snprintf(b, n, "passes by the scaled bound: %s (max %s ULP > %s, but max scaled %s ≤ %s)",
                 r->plot_spec.scaled_reason[0] ? r->plot_spec.scaled_reason : "the error is small against the conditioning magnitude m",
                 num4(x, sizeof x, r->max_ulp), num4(y, sizeof y, r->tol.max_ulp), num4(z, sizeof z, r->max_scaled_ulp),
                 num4((char[40]){0}, 40, r->tol.max_scaled_ulp));
    else snprintf(b, n, "max %s ULP ≤ %s", num4(x, sizeof x, r->max_ulp), num4(y, sizeof y, r->tol.max_ulp));
}

/* ---- SVG: the ULP histogram and the error-vs-input plot ---- */

static const char *const HIST_LABELS[CF_HIST_BINS] = {"≤0.5", "≤1", "≤2", "≤4", "≤16", "≤256", "≤65536", ">65536"};
#define C_OK "#2e7d32"
#define C_EDGE "#f9a825"
#define C_SCALED "#1565c0"
#define C_FAIL "#c62828"

/* the colour of errors above the ULP tolerance: red only when the row fails; a passing row's
 * elements there passed by the scaled bound (blue) */
static const char *over_colour(const cf_row *r) { return row_fails(r) ? C_FAIL : C_SCALED; }

static void svg_histogram(FILE *f, const cf_row *r)
{
    int64_t mx = 1;
    for (int i = 0; i < CF_HIST_BINS; i++)
        if (r->hist[i] > mx) mx = r->hist[i];
    const int H = 120, bw = 40;
    fprintf(f, "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"ULP histogram\">\n",
            10 + CF_HIST_BINS * (bw + 4), H + 36);
    for (int i = 0; i < CF_HIST_BINS; i++) {
        double h = r->hist[i] ? (log10((double)r->hist[i]) + 1) / (log10((double)mx) + 1) * H : 0; /* log scale */
        double lo = cf_hist_edges[i], hi = i + 1 < CF_HIST_BINS ? cf_hist_edges[i + 1] : INFINITY;
        const char *color = hi <= r->tol.max_ulp ? C_OK : lo >= r->tol.max_ulp ? over_colour(r) : C_EDGE;
        int x = 10 + i * (bw + 4);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s ULP: %lld elements</title></rect>\n", x,
                H - h + 12, bw, h, color, HIST_LABELS[i], (long long)r->hist[i]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x + bw / 2, H + 26, HIST_LABELS[i]);
        if (r->hist[i])
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%lld</text>\n", x + bw / 2, H - h + 9,
                    (long long)r->hist[i]);
    }
    fputs("</svg>\n", f);
}

/* fractional x-bin position of a value on the plot's symmetric-log axis */
static double xpos(double v)
{
    int b = cf_plot_xbin(v);
    double lo, hi;
    cf_plot_xrange(b, &lo, &hi);
    if (!isfinite(lo) || !isfinite(hi) || v == 0) return b + 0.5;
    double a = fabs(v), l = fabs(lo), h = fabs(hi);
    double t = (log2(a) - log2(fmin(l, h))) / (log2(fmax(l, h)) - log2(fmin(l, h)));
    if (!isfinite(t)) t = 0.5;
    return v < 0 ? b + 1 - t : b + t;
}

static void xbin_text(int b, char *buf, size_t n)
{
    double lo, hi;
    cf_plot_xrange(b, &lo, &hi);
    char a[32], c[32];
    if (isnan(lo)) snprintf(buf, n, "NaN");
    else if (lo == hi) snprintf(buf, n, "%sinf", lo < 0 ? "-" : "+");
    else snprintf(buf, n, "[%s, %s)", num4(a, sizeof a, lo), num4(c, sizeof c, hi));
}

/* the colour of error-plot row y (ULP in [2^(y-11), 2^(y-10))) against the row's tolerance */
static const char *cell_colour(const cf_row *r, int y)
{
    double ylo = y == 0 ? 0 : exp2(y - 11);
    return ylo >= r->tol.max_ulp ? over_colour(r) : (exp2(y - 10) <= r->tol.max_ulp || y == 0) ? C_OK : C_EDGE;
}

/* a cell's opacity: 0.25 .. 1 by the log of its count against the fullest cell's */
static double cell_opacity(int64_t c, int64_t mx) { return 0.25 + 0.75 * log((double)c + 1) / log((double)mx + 1); }

/* The error plot's frame: PL_L, PL_T the plot area's corner, PL_W x PL_H its size; the x range
 * of bins in view (with the marks and one bin of margin), the cell size and the fullest cell. */
enum { PL_L = 46, PL_T = 10, PL_W = 520, PL_H = 200 };
typedef struct {
    int xmin, xmax;
    double cw, ch;
    int64_t mx;
} plot_geom;

static double px(const plot_geom *g, double b) { return PL_L + (b - g->xmin) * g->cw; }
static double py(const plot_geom *g, double y) { return PL_T + PL_H - (y + 1) * g->ch; }

/* false when the row has no cell to draw */
static bool plot_geometry(const cf_row *r, plot_geom *g)
{
    g->xmin = CF_PLOT_X, g->xmax = -1, g->mx = 0;
    for (int x = 0; r->plot && x < CF_PLOT_X; x++)
        for (int y = 0; y < CF_PLOT_Y; y++)
            if (r->plot[x][y]) {
                if (x < g->xmin) g->xmin = x;
                if (x > g->xmax) g->xmax = x;
                if (r->plot[x][y] > g->mx) g->mx = r->plot[x][y];
            }
    if (g->xmax < 0) return false;
    const cf_plot_spec *ps = &r->plot_spec;
    for (int i = 0; i < ps->nmarks; i++) { /* the marks stay in view */
        int b = cf_plot_xbin(ps->mark_at[i]);
        if (b < g->xmin) g->xmin = b;
        if (b > g->xmax) g->xmax = b;
    }
    if (g->xmin > 0) g->xmin--;
    if (g->xmax < CF_PLOT_X - 1) g->xmax++;
    g->cw = (double)PL_W / (g->xmax - g->xmin + 1), g->ch = (double)PL_H / CF_PLOT_Y;
    return true;
}

/* The frame, the y ticks (2^-10 .. 2^20, inf) and the x ticks in view. */
static void plot_axes(FILE *f, const plot_geom *g)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n", PL_L, PL_T, PL_W, PL_H);
    /* y ticks: 2^-10 .. 2^20 and inf */
    static const int yt[] = {0, 6, 11, 16, 21, 26, 31, 32};
    static const char *const ytl[] = {"≤2^-10", "2^-5", "1", "2^5", "2^10", "2^15", "≥2^20", "inf"};
    for (int i = 0; i < 8; i++)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"end\">%s</text>\n", PL_L - 3, py(g, yt[i]) + g->ch * 0.8, ytl[i]);
    /* x ticks at 0, ±2^-8, ±2^-4, ±1, ±16, ±256 when in view */
    static const double xt[] = {0, 0x1p-8, 0x1p-4, 1, 16, 256, -0x1p-8, -0x1p-4, -1, -16, -256};
    static const char *const xtl[] = {"0", "2^-8", "2^-4", "1", "16", "256", "-2^-8", "-2^-4", "-1", "-16", "-256"};
    for (int i = 0; i < 11; i++) {
        double p = xpos(xt[i]);
        if (p < g->xmin || p > g->xmax + 1) continue;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/><text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%s</text>\n",
                px(g, p), PL_T + PL_H, px(g, p), PL_T + PL_H + 4, px(g, p), PL_T + PL_H + 14, xtl[i]);
    }
    if (g->xmin <= 0) fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">-inf</text>\n", px(g, 0.5), PL_T + PL_H + 24);
    if (g->xmax >= CF_PLOT_X - 2)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">+inf NaN</text>\n", px(g, CF_PLOT_X - 0.0), PL_T + PL_H + 24);
}

/* The cells: opacity by log count; colour by where the bin lies against the tolerance. */
static void plot_cells(FILE *f, const cf_row *r, const plot_geom *g, bool compact)
{
    const cf_plot_spec *ps = &r->plot_spec;
    /* cells: opacity by log count; colour by where the bin lies against the tolerance.  compact
     * (a figure file, shown as an image: no tooltips): four opacity levels, and the cells of a
     * column with the same colour and level drawn as one rectangle */
    for (int x = g->xmin; x <= g->xmax; x++)
        for (int y = 0; y < CF_PLOT_Y; y++) {
            int64_t c = r->plot[x][y];
            if (!c) continue;
            double op = cell_opacity(c, g->mx);
            const char *color = cell_colour(r, y);
            if (compact) {
                int level = (int)ceil(op * 4), y1 = y;
                while (y1 + 1 < CF_PLOT_Y && r->plot[x][y1 + 1] && cell_colour(r, y1 + 1) == color &&
                       (int)ceil(cell_opacity(r->plot[x][y1 + 1], g->mx) * 4) == level)
                    y1++;
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n", px(g, x),
                        py(g, y1), g->cw > 1.2 ? g->cw - 0.4 : g->cw, (y1 - y + 1) * g->ch - 0.4, color, level / 4.0);
                y = y1;
                continue;
            }
            char xb[80];
            xbin_text(x, xb, sizeof xb);
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"><title>", px(g, x), py(g, y),
                    g->cw > 1.2 ? g->cw - 0.4 : g->cw, g->ch - 0.4, color, op);
            html_escape(f, ps->label);
            char yb[64];
            if (y == 0) snprintf(yb, sizeof yb, "≤ 2^-10");
            else if (y == CF_PLOT_Y - 1) snprintf(yb, sizeof yb, "infinite (a special-value mismatch)");
            else if (y == CF_PLOT_Y - 2) snprintf(yb, sizeof yb, "≥ 2^20");
            else snprintf(yb, sizeof yb, "in [2^%d, 2^%d)", y - 11, y - 10);
            fprintf(f, " in %s: %lld elements with ULP error %s</title></rect>\n", xb, (long long)c, yb);
        }
}

/* The tolerance line, the operator's marks and the axis labels. */
static void plot_overlays(FILE *f, const cf_row *r, const plot_geom *g)
{
    const cf_plot_spec *ps = &r->plot_spec;
    /* the tolerance line: ULP = max_ulp */
    double ty = r->tol.max_ulp > 0 ? 1 + log2(r->tol.max_ulp) + 10 : 0;
    if (ty > CF_PLOT_Y - 2) ty = CF_PLOT_Y - 2;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c62828\" stroke-dasharray=\"6 3\"><title>tolerance %g ULP</title></line>\n",
            PL_L, PL_T + PL_H - ty * g->ch, PL_L + PL_W, PL_T + PL_H - ty * g->ch, r->tol.max_ulp);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" fill=\"#c62828\" text-anchor=\"end\">tolerance %g</text>\n", PL_L + PL_W - 2,
            PL_T + PL_H - ty * g->ch - 2, r->tol.max_ulp);
    for (int i = 0; i < ps->nmarks; i++) {
        double p = xpos(ps->mark_at[i]);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#6a1b9a\" stroke-dasharray=\"2 2\"><title>", px(g, p), PL_T, px(g, p), PL_T + PL_H);
        html_escape(f, ps->mark_label[i]);
        /* labels alternate between the top (reading down) and the bottom (reading up), so that
         * two marks close together (the Gelu′ roots of both modes) stay legible */
        int ly = i % 2 ? PL_T + PL_H - 4 : PL_T + 4;
        double lx = i % 2 ? px(g, p) - 3 : px(g, p) + 3;
        fprintf(f, "</title></line>\n<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"#6a1b9a\" transform=\"rotate(-90 %.1f %d)\" text-anchor=\"%s\">",
                lx, ly, lx, ly, i % 2 ? "start" : "end");
        html_escape(f, ps->mark_label[i]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">", PL_L + PL_W / 2, PL_T + PL_H + 38);
    html_escape(f, ps->label);
    fprintf(f, " (symmetric log axis)</text>\n<text x=\"10\" y=\"%d\" font-size=\"10\" transform=\"rotate(-90 10 %d)\" text-anchor=\"middle\">ULP error</text>\n</svg>\n",
            PL_T + PL_H / 2, PL_T + PL_H / 2);
}

static void svg_error_plot(FILE *f, const cf_row *r, bool compact)
{
    plot_geom g;
    if (!plot_geometry(r, &g)) return;
    fprintf(f, "<svg class=\"eplot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"ULP error against ",
            PL_L + PL_W + 10, PL_T + PL_H + 46);
    html_escape(f, r->plot_spec.label);
    fputs("\">\n", f);
    plot_axes(f, &g);
    plot_cells(f, r, &g, compact);
    plot_overlays(f, r, &g);
}

/* ---- sections ---- */

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnumber(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The run in words: target, seed, profile, shard, cases, time, machine. */
static void run_words(doc *d, const cJSON *root)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run"), *host = cJSON_GetObjectItemCaseSensitive(run, "host");
    const char *cmd = jstr(run, "command"), *target = jstr(run, "target"), *tp = jstr(run, "target_path"), *sha = jstr(run, "target_sha256");
    char b[64], c[64];
    para_open(d, "run");
    text(d, "Run: ");
    text(d, cmd ? cmd : "?");
    text(d, " of target ");
    code(d, target ? target : "?");
    if (tp && strcmp(tp, target ? target : "")) {
        text(d, " (");
        code(d, tp);
        text(d, ")");
    }
    if (sha && sha[0]) {
        char s12[16];
        snprintf(s12, sizeof s12, "%.12s", sha);
        text(d, ", SHA-256 ");
        code(d, s12);
    }
    text(d, ", profile ");
    code(d, jstr(run, "profile") ? jstr(run, "profile") : "?");
    text(d, ", seed ");
    code(d, jstr(run, "seed") ? jstr(run, "seed") : "?");
    text(d, ", shard ");
    text(d, jstr(run, "shard") ? jstr(run, "shard") : "?");
    snprintf(b, sizeof b, ": %s cases", count(c, sizeof c, (int64_t)jnumber(run, "cases", 0)));
    text(d, b);
    double secs = jnumber(run, "seconds", NAN);
    if (isfinite(secs) && secs > 0) {
        snprintf(b, sizeof b, " in %.4g s", secs);
        text(d, b);
    }
    if (jstr(run, "started")) {
        text(d, ", started ");
        text(d, jstr(run, "started"));
    }
    if (cJSON_IsObject(host)) {
        text(d, "; machine: ");
        text(d, jstr(host, "cpu") ? jstr(host, "cpu") : "?");
        snprintf(b, sizeof b, " (%d cores), ", (int)jnumber(host, "cores", 0));
        text(d, b);
        text(d, jstr(host, "os") ? jstr(host, "os") : "?");
        text(d, " ");
        text(d, jstr(host, "arch") ? jstr(host, "arch") : "");
    } else {
        text(d, "; machine not recorded");
    }
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    text(d, "; ");
    text(d, jstr(tool, "name") ? jstr(tool, "name") : CF_TOOL_NAME);
    text(d, " ");
    text(d, jstr(tool, "version") ? jstr(tool, "version") : "");
    text(d, ".");
    para_close(d);
}

typedef struct {
    const char *op, *rule, *example;
    int64_t expected, cases, mismatches, not_applicable;
} srow_t;

static int read_status(const cJSON *root, srow_t **out)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(root, "status_checks"), *it;
    int n = cJSON_GetArraySize(sc), k = 0;
    srow_t *s = calloc((size_t)(n ? n : 1), sizeof *s);
    if (!s) return -1;
    cJSON_ArrayForEach(it, sc)
    {
        s[k].op = jstr(it, "op") ? jstr(it, "op") : "?";
        s[k].rule = jstr(it, "rule") ? jstr(it, "rule") : "?";
        s[k].example = jstr(it, "example") ? jstr(it, "example") : "";
        s[k].expected = (int64_t)jnumber(it, "expected", 0);
        s[k].cases = (int64_t)jnumber(it, "cases", 0);
        s[k].mismatches = (int64_t)jnumber(it, "mismatches", 0);
        s[k].not_applicable = (int64_t)jnumber(it, "not_applicable", 0);
        k++;
    }
    *out = s;
    return k;
}

/* Rules with at least one mismatching case: the verdict counts them, the rules table lists them. */
static int rules_failing(const srow_t *sr, int ns)
{
    int rfail = 0;
    for (int i = 0; i < ns; i++) rfail += sr[i].mismatches > 0;
    return rfail;
}

/* The verdict line: the one sentence a reader acts on, with the counts behind it. */
static void summary_verdict(doc *d, const cJSON *root, const cf_row **rows, int n, const srow_t *sr, int ns)
{
    int nfail = 0, nnodata = 0, rfail = rules_failing(sr, ns);
    for (int i = 0; i < n; i++) nfail += row_fails(rows[i]), nnodata += rows[i]->cases == 0;
    bool fail = nfail || rfail;
    /* no conformance without computed outputs, nor from a run that did not finish (issue 57: a
     * program that answered only the invalid cases, an interrupted shard merged in) */
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
    bool interrupted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted")) ||
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "interrupted"));
    bool conforms = !fail && n > 0 && !interrupted;
    const char *v = fail             ? "Verdict: does not conform."
                    : n == 0 && ns == 0 ? "Verdict: nothing was checked."
                    : n == 0         ? "Verdict: not established: no output was computed (invalid-input statuses only)."
                    : interrupted    ? "Verdict: not established: the run was interrupted."
                                     : "Verdict: conforms.";
    char b[400], x[32], y[32], z[32], w[32];
    para_open(d, conforms ? "verdict pass" : "verdict fail");
    strong(d, v);
    snprintf(b, sizeof b, " %s of %s result rows fail, %s of %s invalid-input and protocol rules fail%s.", count(x, sizeof x, nfail),
             count(y, sizeof y, n), count(z, sizeof z, rfail), count(w, sizeof w, ns), nnodata ? " (some rows have no data)" : "");
    text(d, " ");
    text(d, b);
    para_close(d);
}

/* Output elements that got no verdict (numerics.md §2: oracle-uncertain after refinement and
 * after every rule the interval decides): a warning with the count, never silence. */
static void summary_unscored(doc *d, const cf_row **rows, int n)
{
    int64_t unc = 0;
    int nrows = 0;
    for (int i = 0; i < n; i++) unc += rows[i]->uncertain, nrows += rows[i]->uncertain > 0;
    if (!unc) return;
    char b[200], x[32];
    para_open(d, "fail");
    strong(d, "UNSCORED:");
    snprintf(b, sizeof b, " %s output elements in %d rows got no verdict (the oracle's bound too large even after refinement; the elements column counts them per row).",
             count(x, sizeof x, unc), nrows);
    text(d, b);
    para_close(d);
}

/* Run facts that limit what the counts mean: missing shards, a stopped run. */
static void summary_caveats(doc *d, const cJSON *root)
{
    bool partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial")),
         interrupted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "interrupted")) ||
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "run"), "interrupted"));
    if (partial) {
        const char *miss = jstr(root, "missing_shards");
        para_open(d, "fail");
        strong(d, "PARTIAL:");
        text(d, " not every shard of the run is in this report");
        if (miss && miss[0]) {
            text(d, " (missing ");
            text(d, miss);
            text(d, ")");
        }
        text(d, "; the counts cover the shards present only.");
        para_close(d);
    }
    if (interrupted) {
        para_open(d, "fail");
        strong(d, "INTERRUPTED:");
        text(d, " the run was stopped before its budget; the counts cover the cases that ran.");
        para_close(d);
    }
}

/* One line per result row, failing rows first. */
static void summary_rows(doc *d, const cf_row **rows, int n)
{
    heading(d, 2, "summary", "Summary");
    static const col_t cols[] = {{"operator", NULL, 'l'}, {"dtype", NULL, 'l'}, {"variant", NULL, 'l'},
                                 {"verdict", "pass: every case within tolerance; fail: at least one case is not", 'l'},
                                 {"why", "the reason for the verdict, in one line", 'l'}};
    char b[400];
    table_open(d, cols, 5, "summary");
    for (int pass = 0; pass < 2; pass++) /* failing rows first */
        for (int i = 0; i < n; i++) {
            const cf_row *r = rows[i];
            if (row_fails(r) == (pass == 1)) continue;
            const char *v = verdict_of(r);
            row_open(d, v);
            cell_text(d, 'l', r->op);
            cell_text(d, 'l', cf_dtype_name(r->dtype));
            cell_text(d, 'l', r->variant[0] ? r->variant : "-");
            verdict_cell(d, r);
            row_reason(r, b, sizeof b);
            cell_text(d, 'l', b);
            row_close(d);
        }
    table_close(d);
}

/* The invalid-input and protocol rules with mismatching cases; nothing when every rule holds. */
static void summary_failing_rules(doc *d, const srow_t *sr, int ns)
{
    if (!rules_failing(sr, ns)) return;
    para_open(d, NULL);
    text(d, "Failing rules:");
    para_close(d);
    static const col_t rc[] = {{"operator", NULL, 'l'}, {"rule", NULL, 'l'}, {"expected status", NULL, 'r'},
                               {"mismatching cases", NULL, 'r'}, {"example", "a stored case that breaks the rule", 'l'}};
    table_open(d, rc, 5, "rules");
    for (int i = 0; i < ns; i++) {
        if (!sr[i].mismatches) continue;
        char a[32], c[32], b[400];
        row_open(d, "fail");
        cell_text(d, 'l', sr[i].op);
        cell_text(d, 'l', sr[i].rule);
        snprintf(b, sizeof b, "%lld", (long long)sr[i].expected);
        cell_text(d, 'r', b);
        snprintf(b, sizeof b, "%s of %s", count(a, sizeof a, sr[i].mismatches), count(c, sizeof c, sr[i].cases));
        cell_text(d, 'r', b);
        cell_open(d, 'l');
        if (sr[i].example[0]) case_link(d, sr[i].example);
        else text(d, "-");
        cell_close(d);
        row_close(d);
    }
    table_close(d);
}

/* The report's first screen, in reading order: verdict, caveats, the run, rows, broken rules. */
static void summary(doc *d, const cJSON *root, const cf_row **rows, int n, const srow_t *sr, int ns)
{
    summary_verdict(d, root, rows, n, sr, ns);
    summary_unscored(d, rows, n);
    summary_caveats(d, root);
    run_words(d, root);
    summary_rows(d, rows, n);
    summary_failing_rules(d, sr, ns);
}

static void contents(doc *d, const cf_row **rows, int n, const srow_t *sr, int ns)
{
    heading(d, 2, "contents", "Contents");
    bool html = d->fmt == F_HTML;
    if (html) fputs("<ul class=\"toc\">\n", d->f);
    for (int op = 0; op < CF_OP_COUNT; op++) {
        const char *opn = cf_op_name((cf_op)op);
        int nr = 0, nf = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(rows[i]->op, opn)) nr++, nf += row_fails(rows[i]);
        for (int i = 0; i < ns; i++)
            if (!strcmp(sr[i].op, opn)) nr += nr == 0;
        if (!nr) continue;
        char b[80];
        b[0] = '\0';
        if (nf) snprintf(b, sizeof b, " (%d failing row%s)", nf, nf == 1 ? "" : "s");
        if (html) fprintf(d->f, "<li><a href=\"#%s\">%s</a>%s</li>\n", opn, opn, b);
        else fprintf(d->f, "- [%s](#%s)%s\n", opn, opn, b);
    }
    if (html) fputs("<li><a href=\"#legend\">How to read the tables</a></li>\n</ul>\n", d->f);
    else fputs("- [How to read the tables](#how-to-read-the-tables)\n\n", d->f);
}

static const col_t ULP_COLS[] = {
    {"dtype", NULL, 'l'},
    {"variant", NULL, 'l'},
    {"verdict", "pass: every case within tolerance; fail: at least one case is not", 'l'},
    {"cases", "valid cases scored (failed cases in parentheses)", 'r'},
    {"elements", "output elements scored (uncertain: the oracle's own bound too large for a verdict)", 'r'},
    {"max ULP", "largest |got − exact| / ulp(exact) in the output dtype (inf: a special-value mismatch)", 'r'},
    {"max finite ULP", "largest finite ULP error: the representative worst error", 'r'},
    {"mean ULP", "mean ULP error over scored elements", 'r'},
    {"p99 ULP", "upper edge of the histogram bin holding the 99th percentile", 'r'},
    {"max scaled", "largest |got − exact| / ulp(m), m the conditioning magnitude (ops.md)", 'r'},
    {"tolerance", "max ULP / max scaled ULP: an element passes when within either", 'r'},
    {"mismatches", "special-value and conduct failures by kind", 'l'},
};
static const col_t MS_COLS[] = {
    {"dtype", NULL, 'l'},
    {"variant", NULL, 'l'},
    {"cosine", "msprobe Cosine: Σ got·exact / (‖got‖·‖exact‖) over elements with a finite exact and finite result", 'r'},
    {"max abs err", "msprobe MaxAbsErr: largest |got − exact| (inf when a result is NaN/Inf for a finite exact value)", 'r'},
    {"max rel err", "msprobe MaxRelativeErr: largest |got − exact| / |exact| (exact 0: 0 when got is 0, else inf)", 'r'},
    {"within 1‰", "msprobe One Thousandth Err Ratio: share of elements with relative error < 0.001", 'r'},
    {"within 5‰", "msprobe Five Thousandths Err Ratio: share of elements with relative error < 0.005", 'r'},
    {"MERE / MARE", "Ascend single-benchmark mean / max relative error", 'r'},
    {"single_bm", "informational: MERE < t and MARE < 10t (t = 2^-13 f32, 2^-10 f16, 2^-7 bf16); relative error is unbounded where a result cancels, so the verdict uses the ULP rule", 'l'},
};

static void mismatch_text(const cf_row *r, char *mm, size_t n)
{
    size_t ml = 0;
    mm[0] = '\0';
    for (int k = 0; k < CF_MM_COUNT && ml < n; k++)
        if (r->mismatches[k] && k != CF_MM_signed_zero)
            ml += (size_t)snprintf(mm + ml, n - ml, "%s%s=%lld", ml ? " " : "", cf_mismatch_name((cf_mismatch)k), (long long)r->mismatches[k]);
    if (!mm[0]) snprintf(mm, n, "none");
}

static void ulp_table(doc *d, const cf_row **rows, int n, const char *opn)
{
    table_open(d, ULP_COLS, (int)(sizeof ULP_COLS / sizeof ULP_COLS[0]), "rows");
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        if (strcmp(r->op, opn)) continue;
        char b[300], x[32], y[32];
        const char *v = verdict_of(r);
        row_open(d, v);
        cell_text(d, 'l', cf_dtype_name(r->dtype));
        cell_text(d, 'l', r->variant[0] ? r->variant : "-");
        verdict_cell(d, r);
        snprintf(b, sizeof b, r->failed_cases ? "%s (%s)" : "%s", count(x, sizeof x, r->cases), count(y, sizeof y, r->failed_cases));
        cell_text(d, 'r', b);
        snprintf(b, sizeof b, r->uncertain ? "%s (%s uncertain)" : "%s", count(x, sizeof x, r->elements), count(y, sizeof y, r->uncertain));
        cell_text(d, 'r', b);
        cell_num(d, r->max_ulp);
        cell_num(d, r->worst_finite.has ? r->worst_finite.ulp : NAN);
        cell_num(d, cf_row_mean_ulp(r));
        cell_num(d, cf_row_p99_ulp(r));
        cell_num(d, r->max_scaled_ulp);
        snprintf(b, sizeof b, "%s / %s", num4(x, sizeof x, r->tol.max_ulp), num4(y, sizeof y, r->tol.max_scaled_ulp));
        cell_text(d, 'r', b);
        mismatch_text(r, b, sizeof b);
        cell_text(d, 'l', b);
        row_close(d);
    }
    table_close(d);
}

static void ms_table(doc *d, const cf_row **rows, int n, const char *opn)
{
    table_open(d, MS_COLS, (int)(sizeof MS_COLS / sizeof MS_COLS[0]), "rows");
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        if (strcmp(r->op, opn)) continue;
        char b[120], x[32], y[32];
        row_open(d, NULL);
        cell_text(d, 'l', cf_dtype_name(r->dtype));
        cell_text(d, 'l', r->variant[0] ? r->variant : "-");
        double cs = cf_row_cosine(r);
        /* 1 − cosine is what differs between good libraries: 7 digits show it */
        if (isfinite(cs)) snprintf(b, sizeof b, "%.7f", cs);
        else snprintf(b, sizeof b, "-");
        cell_text(d, 'r', b);
        cell_num(d, r->ms_n ? r->ms_max_abs : NAN);
        cell_num(d, r->ms_n ? r->ms_max_rel : NAN);
        if (r->ms_n) snprintf(b, sizeof b, "%.2f%%", 100.0 * (double)r->ms_within_1e3 / (double)r->ms_n);
        else snprintf(b, sizeof b, "-");
        cell_text(d, 'r', b);
        if (r->ms_n) snprintf(b, sizeof b, "%.2f%%", 100.0 * (double)r->ms_within_5e3 / (double)r->ms_n);
        else snprintf(b, sizeof b, "-");
        cell_text(d, 'r', b);
        double mere, mare;
        bool bm = cf_row_single_bm(r, &mere, &mare);
        snprintf(b, sizeof b, "%s / %s", num4(x, sizeof x, mere), num4(y, sizeof y, mare));
        cell_text(d, 'r', b);
        cell_text(d, 'l', bm ? "within" : "outside (informational)");
        row_close(d);
    }
    table_close(d);
}

static bool plot_has_cells(const cf_row *r)
{
    for (int x = 0; r->has_plot && r->plot && x < CF_PLOT_X; x++)
        for (int y = 0; y < CF_PLOT_Y; y++)
            if (r->plot[x][y]) return true;
    return false;
}

/* One figure of a Markdown page as its own SVG file (written atomically), and the image line. */
static void md_figure(doc *d, const cf_row *r, bool plot)
{
    char name[160], file[200], path[PATH_MAX + 220];
    row_name(r, name, sizeof name);
    size_t k = 0;
    for (const char *s = name; *s && k + 1 < sizeof file; s++) /* a file name from data: [A-Za-z0-9_-] only */
        file[k++] = (isalnum((unsigned char)*s) || *s == '_') ? *s : '-';
    snprintf(file + k, sizeof file - k, plot ? "-error.svg" : "-hist.svg");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        if (!d->st) d->st = cf_fail(&d->e, CFE_IO, "out of memory");
        return;
    }
    if (plot) svg_error_plot(f, r, true);
    else svg_histogram(f, r);
    fclose(f);
    snprintf(path, sizeof path, "%s/%s", d->plot_dir, file);
    if (!d->st) d->st = cf_write_atomic(path, buf, len, &d->e);
    free(buf);
    fprintf(d->f, "![%s of ", plot ? "ULP error against the input" : "ULP histogram");
    md_text(d->f, name);
    fprintf(d->f, "](%s/%s) ", d->plot_rel, file);
}

static void figures(doc *d, const cf_row **rows, int n, const char *opn)
{
    if (d->fmt == F_MD && d->plot_dir[0]) {
        for (int i = 0; i < n; i++) {
            const cf_row *r = rows[i];
            if (strcmp(r->op, opn)) continue;
            md_figure(d, r, false);
            if (plot_has_cells(r)) md_figure(d, r, true);
            fputs("\n\n", d->f);
        }
        return;
    }
    if (d->fmt != F_HTML) return;
    fputs("<div class=\"figs\">\n", d->f);
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        if (strcmp(r->op, opn)) continue;
        char name[160];
        row_name(r, name, sizeof name);
        fputs("<figure class=\"row\">", d->f);
        svg_histogram(d->f, r);
        if (plot_has_cells(r)) svg_error_plot(d->f, r, false);
        fputs("<figcaption>", d->f);
        html_escape(d->f, name);
        fputs(": ULP error histogram", d->f);
        if (r->has_plot) {
            fputs(" and error against ", d->f);
            html_escape(d->f, r->plot_spec.label);
        }
        fputs(passes_by_scaled(r) ? " (blue: over the ULP tolerance, within the scaled bound)" : "", d->f);
        fputs("</figcaption></figure>\n", d->f);
    }
    fputs("</div>\n", d->f);
}

static void failing_cases(doc *d, const cf_row **rows, int n, const char *opn)
{
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        if (strcmp(r->op, opn) || !row_fails(r)) continue;
        char name[160], b[200];
        row_name(r, name, sizeof name);
        snprintf(b, sizeof b, "Failing cases: %s", name);
        heading(d, 3, NULL, b);
        /* the most common kind first (its first case), then the largest finite error, then one
         * case of each other kind */
        int order[CF_EX_KINDS], nk = kinds_by_count(r, order);
        const cf_example *pick[CF_EX_KINDS + 1];
        const char *why[CF_EX_KINDS + 1];
        int np = 0;
        const cf_example *largest = NULL;
        for (int k = 0; r->examples && k < CF_EX_KINDS; k++) {
            const cf_example *x = &r->examples[k][1];
            if (x->used && isfinite(x->ulp) && (!largest || x->ulp > largest->ulp)) largest = x;
        }
        for (int j = 0; j < nk; j++) {
            const cf_example *x = r->examples ? &r->examples[order[j]][0] : NULL;
            if (!x || !x->used) continue;
            pick[np] = x, why[np++] = j == 0 ? "most common kind (smallest case)" : "another kind (smallest case)";
            if (j == 0 && largest && strcmp(largest->case_ref, x->case_ref)) pick[np] = largest, why[np++] = "largest finite error";
        }
        if (!np) {
            para_open(d, NULL);
            text(d, "No failing case was stored (run without --no-store to keep them).");
            para_close(d);
            continue;
        }
        static const col_t cols[] = {{"kind", "the failure's kind (mismatch kind, status, crash, timeout)", 'l'},
                                     {"chosen as", NULL, 'l'},
                                     {"ULP", "largest finite ULP error of the case's failing elements", 'r'},
                                     {"case", "the stored case (a directory with case.json)", 'l'},
                                     {"first failure", "the case's first FAIL line: element, inputs decoded, got, expected", 'l'},
                                     {"rerun", NULL, 'l'}};
        table_open(d, cols, 6, "cases");
        for (int j = 0; j < np; j++) {
            const cf_example *x = pick[j];
            int kind = (int)((x - &r->examples[0][0]) / 2);
            char rr[400];
            row_open(d, NULL);
            cell_text(d, 'l', cf_example_kind_name(kind));
            cell_text(d, 'l', why[j]);
            cell_num(d, x->ulp);
            cell_open(d, 'l');
            case_link(d, x->case_ref);
            cell_close(d);
            cell_code(d, x->line);
            char qr[400];
            snprintf(rr, sizeof rr, "%s %s %s", CF_TOOL_NAME, d->rerun, cf_shell_quote(x->case_ref, qr, sizeof qr));
            cell_code(d, rr);
            row_close(d);
        }
        table_close(d);
    }
}

static void worst_table(doc *d, const cf_row **rows, int n, const char *opn)
{
    static const col_t cols[] = {{"dtype", NULL, 'l'},
                                 {"variant", NULL, 'l'},
                                 {"element", "largest finite error, and the largest error when that is a special-value mismatch", 'l'},
                                 {"ULP", NULL, 'r'},
                                 {"case", "stored case; a passing case is not stored: regenerate it with its case index and the run's seed", 'l'},
                                 {"index", NULL, 'l'},
                                 {"inputs", "input bits at the element", 'l'},
                                 {"got", "output bits", 'l'},
                                 {"expected", "exact value (double)", 'r'}};
    bool any = false;
    for (int i = 0; i < n; i++) any |= !strcmp(rows[i]->op, opn) && (rows[i]->worst.has || rows[i]->worst_finite.has);
    if (!any) return;
    heading(d, 3, NULL, "Worst elements");
    table_open(d, cols, 9, "worst");
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        if (strcmp(r->op, opn)) continue;
        const cf_worst *ws[2] = {r->worst_finite.has ? &r->worst_finite : NULL,
                                 r->worst.has && (!r->worst_finite.has || r->worst.ulp != r->worst_finite.ulp) ? &r->worst : NULL};
        for (int k = 0; k < 2; k++) {
            const cf_worst *w = ws[k];
            if (!w) continue;
            char b[64];
            row_open(d, NULL);
            cell_text(d, 'l', cf_dtype_name(r->dtype));
            cell_text(d, 'l', r->variant[0] ? r->variant : "-");
            cell_text(d, 'l', k == 0 ? "largest finite" : "largest");
            cell_num(d, w->ulp);
            cell_open(d, 'l');
            if (w->case_ref[0]) case_link(d, w->case_ref);
            else { /* a passing case: how to store it (the worst of indices 0..k is this one) */
                char cmd[400];
                snprintf(b, sizeof b, "not stored (case index %lld); to store it: ", (long long)w->case_index);
                text(d, b);
                bool one_shard = strcmp(d->shard, "0/1") && !strchr(d->shard, ',');
                snprintf(cmd, sizeof cmd, "%s sweep --op %s --dtype %s --profile %s --seed %s%s%s --cases %lld --invalid-cases 0 --keep-worst --corpus DIR",
                         CF_TOOL_NAME, r->op, cf_dtype_name(r->dtype), d->profile, d->seed, one_shard ? " --shard " : "",
                         one_shard ? d->shard : "", (long long)w->case_index + 1);
                code(d, cmd);
            }
            cell_close(d);
            cell_code(d, w->index);
            cell_code(d, w->inputs);
            cell_code(d, w->got);
            snprintf(b, sizeof b, "%.17g", w->expected);
            cell_text(d, 'r', b);
            row_close(d);
        }
    }
    table_close(d);
}

static void rules_table(doc *d, const srow_t *sr, int ns, const char *opn)
{
    bool header = false;
    static const col_t cols[] = {{"rule", "an invalid-input rule of ops.md, or a protocol check (protocol_*)", 'l'},
                                 {"expected status", NULL, 'r'},
                                 {"cases", NULL, 'r'},
                                 {"mismatches", "cases that returned another status", 'r'},
                                 {"example", NULL, 'l'}};
    for (int i = 0; i < ns; i++) {
        if (strcmp(sr[i].op, opn)) continue;
        if (!header) {
            heading(d, 3, NULL, "Invalid inputs and protocol checks");
            table_open(d, cols, 5, "rules");
            header = true;
        }
        char b[64], x[32], y[32];
        row_open(d, sr[i].mismatches ? "fail" : NULL);
        cell_text(d, 'l', sr[i].rule);
        snprintf(b, sizeof b, "%lld", (long long)sr[i].expected); /* a status code, not a count */
        cell_text(d, 'r', b);
        if (sr[i].not_applicable)
            snprintf(b, sizeof b, "%s (%s not applicable)", count(x, sizeof x, sr[i].cases), count(y, sizeof y, sr[i].not_applicable));
        else count(b, sizeof b, sr[i].cases);
        cell_text(d, 'r', b);
        cell_count(d, sr[i].mismatches);
        cell_open(d, 'l');
        if (sr[i].mismatches && sr[i].example[0]) case_link(d, sr[i].example);
        else text(d, "-");
        cell_close(d);
        row_close(d);
    }
    if (header) table_close(d);
}

static void legend(doc *d)
{
    heading(d, 2, "legend", "How to read the tables");
    static const char *const items[] = {
        "ULP error: |got − exact| / ulp(exact) in the output dtype, exact evaluated on the stored inputs (numerics.md).",
        "Scaled ULP: |got − exact| / ulp(m), m the operator's conditioning magnitude (ops.md). An element passes when its ULP error is within max ULP or its scaled error within max scaled: a row that passes only by the second says \"pass (scaled bound)\" and why; its bars over the ULP tolerance are blue, not red.",
        "Histogram bars: green within the ULP tolerance, amber in the bin holding the tolerance, red over it in a failing row, blue over it in a passing row. Heights are logarithmic.",
        "Error plot (HTML): ULP error (log scale, rows of one octave) against the operator's input (x, β·x) or, for reductions, the cancellation ratio m / |exact|; darker cells hold more elements; the dashed red line is the tolerance, dashed purple lines the operator's special points.",
        "msprobe metrics compare each result with the exact value, over elements whose exact value is finite and does not round to ±Inf in the output dtype: a NaN or Inf result there counts as an infinite error and outside both ratios, and is left out of the cosine sums; the other elements (exact NaN, ±Inf or overflowing) are judged by the special-value rule only (counted under mismatches).",
        "Failing cases: per failing row, the smallest case of the most common failure kind, the case with the largest finite error, and the smallest case of every other kind; each is stored, its FAIL line decodes the inputs, and the rerun command replays it.",
    };
    if (d->fmt == F_HTML) fputs("<ul class=\"legend\">\n", d->f);
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        fputs(d->fmt == F_HTML ? "<li>" : "- ", d->f);
        text(d, items[i]);
        fputs(d->fmt == F_HTML ? "</li>\n" : "\n", d->f);
    }
    fputs(d->fmt == F_HTML ? "</ul>\n" : "\n", d->f);
}

static const char CSS[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #bbb;padding:3px 7px;text-align:right;font-size:13px;vertical-align:top}"
    "th{background:#eee;cursor:help}th.l{text-align:left}th sup{color:#888;font-size:9px}td.l{text-align:left}.scroll{overflow-x:auto;max-width:100%}"
    "td code{word-break:break-all;white-space:pre-wrap}table.cases td:nth-child(5){max-width:520px}table.worst td:nth-child(7){max-width:360px}"
    "tr.fail td{background:#fdecea}.verdict{font-size:1.2em;padding:.5em;border-radius:4px}.verdict.fail{background:#fdecea;color:#b71c1c}"
    ".verdict.pass{background:#e8f5e9;color:#1b5e20}p.fail{color:#b71c1c}.figs{display:flex;flex-wrap:wrap;gap:1.5em}"
    "figure.row{margin:0;border:1px solid #ddd;padding:.5em}figcaption{font-size:12px;color:#444;max-width:760px}"
    ".figs figure svg{display:inline-block;vertical-align:top;margin-right:.5em}";

static void render_page(doc *d, const cJSON *root, const cf_row **rows, int n, const srow_t *sr, int ns)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(root, "run");
    const char *target = jstr(run, "target") ? jstr(run, "target") : "?";
    if (d->fmt == F_HTML) {
        fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>aclnn-conform report: ", d->f);
        html_escape(d->f, target);
        fprintf(d->f, "</title>\n<style>%s</style></head><body>\n<h1>aclnn-conform tolerance report: ", CSS);
        html_escape(d->f, target);
        fputs("</h1>\n", d->f);
    } else {
        fputs("# aclnn-conform tolerance report: ", d->f);
        md_text(d->f, target);
        fputs("\n\n", d->f);
    }
    summary(d, root, rows, n, sr, ns);
    contents(d, rows, n, sr, ns);
    for (int op = 0; op < CF_OP_COUNT; op++) {
        const char *opn = cf_op_name((cf_op)op);
        bool any = false;
        for (int i = 0; i < n; i++) any |= !strcmp(rows[i]->op, opn);
        for (int i = 0; i < ns; i++) any |= !strcmp(sr[i].op, opn);
        if (!any) continue;
        heading(d, 2, opn, opn);
        bool rows_here = false;
        for (int i = 0; i < n; i++) rows_here |= !strcmp(rows[i]->op, opn);
        if (rows_here) {
            ulp_table(d, rows, n, opn);
            para_open(d, NULL);
            text(d, "Against msprobe's metrics:");
            para_close(d);
            ms_table(d, rows, n, opn);
            figures(d, rows, n, opn);
            failing_cases(d, rows, n, opn);
            worst_table(d, rows, n, opn);
        }
        rules_table(d, sr, ns, opn);
    }
    legend(d);
    if (d->fmt == F_HTML) fputs("</body></html>\n", d->f);
}

/* --format csv: one line per result row, a header first. */
static void render_csv(FILE *f, const cf_row **rows, int n)
{
    fputs("op,dtype,variant,verdict,cases,failed_cases,elements,scored,uncertain,failed_elements,max_ulp,max_finite_ulp,mean_ulp,"
          "p99_ulp,max_scaled_ulp,tol_max_ulp,tol_max_scaled_ulp,cosine,max_abs_err,max_rel_err,within_1e-3,within_5e-3,mere,mare,"
          "single_bm,mismatches\n",
          f);
    for (int i = 0; i < n; i++) {
        const cf_row *r = rows[i];
        char b[400];
        double mere, mare;
        bool bm = cf_row_single_bm(r, &mere, &mare);
        csv_field(f, r->op);
        fprintf(f, ",%s,", cf_dtype_name(r->dtype));
        csv_field(f, r->variant);
        fprintf(f, ",%s,%lld,%lld,%lld,%lld,%lld,%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%s,",
                verdict_of(r), (long long)r->cases, (long long)r->failed_cases, (long long)r->elements, (long long)r->scored,
                (long long)r->uncertain, (long long)r->failed_elements, r->max_ulp, r->worst_finite.has ? r->worst_finite.ulp : NAN,
                cf_row_mean_ulp(r), cf_row_p99_ulp(r), r->max_scaled_ulp, r->tol.max_ulp, r->tol.max_scaled_ulp, cf_row_cosine(r),
                r->ms_n ? r->ms_max_abs : NAN, r->ms_n ? r->ms_max_rel : NAN,
                r->ms_n ? (double)r->ms_within_1e3 / (double)r->ms_n : NAN, r->ms_n ? (double)r->ms_within_5e3 / (double)r->ms_n : NAN,
                mere, mare, bm ? "pass" : "fail");
        mismatch_text(r, b, sizeof b);
        csv_field(f, b);
        fputc('\n', f);
    }
}

int cmd_report(const cf_opts *o)
{
    cf_err e = {{0}};
    if (o->npos != 1) {
        fprintf(stderr, "aclnn-conform report: usage: report RUN.json [--format md|html|csv] [-o FILE]\n");
        return CFE_INPUT;
    }
    cJSON *root;
    cf_row *rows;
    int n;
    cf_status st = cf_report_read(o->pos[0], &root, &rows, &n, &e);
    if (st) {
        fprintf(stderr, "aclnn-conform report: %s\n", e.msg);
        return st;
    }
    const cJSON *runj = cJSON_GetObjectItemCaseSensitive(root, "run");
    doc d;
    memset(&d, 0, sizeof d);
    d.fmt = F_MD;
    d.rerun = "replay";
    d.seed = jstr(runj, "seed") ? jstr(runj, "seed") : "?";
    d.profile = jstr(runj, "profile") ? jstr(runj, "profile") : "spec";
    d.shard = jstr(runj, "shard") ? jstr(runj, "shard") : "0/1";
    const char *cmd = jstr(runj, "command");
    if (cmd && !strcmp(cmd, "score")) d.rerun = "score"; /* the target's outputs sit beside the case */
    if (o->format && !strcmp(o->format, "html")) d.fmt = F_HTML;
    else if (o->format && !strcmp(o->format, "csv")) d.fmt = F_CSV;
    /* links are relative to the page's directory (the current one when printing) */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", o->output ? o->output : "./x");
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    d.have_base = realpath(dir, d.base) != NULL;
    if (d.fmt == F_MD && o->output) { /* figures beside the page, as <page>/plots/NAME.svg */
        char stem[PATH_MAX];
        snprintf(stem, sizeof stem, "%s", o->output);
        char *dot = strrchr(stem, '.'), *sl = strrchr(stem, '/');
        /* PAGE.md -> PAGE/plots; a page without an extension -> PAGE_plots (PAGE is the file) */
        const char *sub = "/plots";
        if (dot && (!sl || dot > sl + 1)) *dot = '\0';
        else sub = "_plots";
        snprintf(d.plot_dir, sizeof d.plot_dir, "%s%s", stem, sub);
        snprintf(d.plot_rel, sizeof d.plot_rel, "%s%s", sl ? sl + 1 : stem, sub);
        if ((st = cf_mkdirs(d.plot_dir, &e))) {
            fprintf(stderr, "aclnn-conform report: %s\n", e.msg);
            cf_rows_free(rows, n);
            cJSON_Delete(root);
            return st;
        }
    }
    char *buf = NULL;
    size_t blen = 0;
    const cf_row **sorted = sorted_rows(rows, n);
    srow_t *sr = NULL;
    int ns = sorted ? read_status(root, &sr) : -1;
    d.f = ns >= 0 ? open_memstream(&buf, &blen) : NULL;
    if (!d.f) {
        fprintf(stderr, "aclnn-conform report: out of memory\n");
        st = CFE_IO;
    } else {
        if (d.fmt == F_CSV) render_csv(d.f, sorted, n);
        else render_page(&d, root, sorted, n, sr, ns);
        fclose(d.f);
        if (d.st) {
            st = d.st;
            e = d.e;
        } else if (o->output) st = cf_write_atomic(o->output, buf, blen, &e);
        else fwrite(buf, 1, blen, stdout);
        if (st) fprintf(stderr, "aclnn-conform report: %s\n", e.msg);
    }
    free(buf);
    free(sr);
    free(sorted);
    cf_rows_free(rows, n);
    cJSON_Delete(root);
    return st;
}
