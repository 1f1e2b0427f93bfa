/* cost_profile: cost source backed by a measured calib profile (profile.h).
 *
 * GEMMs and convolutions. The measured points of one dtype (of one dtype
 * and pass for convolutions, in implicit-GEMM dimensions, see
 * profile_conv_gemm_dims()) live in log space x = (ln M, ln N, ln K); a
 * batched GEMM is looked up as one GEMM of M x batch rows (same FLOPs, same
 * tile count). The price of a query is
 *
 *   time = max(T_interp, T_waves)
 *
 * T_interp = FLOPs / e(x), with ln e, the log of the achieved FLOP rate,
 * interpolated multilinearly over the grid cell of measured points that
 * brackets x (calib measures a Cartesian GEMM grid). Where a corner of the
 * cell was not measured (model-specific shapes, convolutions), ln e is the
 * inverse-distance-squared mean of the 8 nearest points. A shape measured
 * more than once (several transposes) counts once, at the geometric mean
 * of its times. Coordinates
 * beyond the measured range (but within 2x of it) are clamped: efficiency is
 * held at the edge's.
 *
 * T_waves is the wave-quantization floor. A GEMM runs ceil(tiles / SMs)
 * waves of 128 x 256 output tiles (the GPU's gemm_tile); one wave of tiles
 * of depth K costs at least 2 K tm tn SMs / rho_max, where rho_max is the
 * best "full-slot" rate any measured point of the table reached (rho_i =
 * 2 K_i tm tn SMs waves_i / t_i). A query that spills into a new partial
 * wave is priced as the whole wave, which interpolation between two
 * points with full waves cannot see. The SM count is the profile's (the
 * GPU the kernels ran on).
 *
 * Properties (tests/test-profile.c checks them):
 *  - a measured shape (batch 1) returns its measured time exactly;
 *  - along one dimension between two measured points of a full grid cell,
 *    the price is monotone: ln T_interp is linear in ln M (multilinear
 *    interpolation of monotone corner values), T_waves is a product of
 *    non-decreasing steps, and the max of non-decreasing functions is
 *    non-decreasing. (The brief's alternative, rescaling the interpolated
 *    efficiency by the ratio of wave-quantization factors, is not monotone:
 *    the factor is a sawtooth in M.)
 *  - at measured points T_waves <= measured time (rho_i <= rho_max), so
 *    the floor never overrides a measurement.
 *
 * Memory-bound kernels. Each calibrated family ("bias_gelu",
 * "layernorm_fwd", ...) is a curve of achieved bandwidth over traffic:
 * time = bytes / GBps(bytes), ln GBps linear in ln bytes between measured
 * points (so time is monotone), clamped at the ends. An op's membound_kind
 * is looked up as is, then without its _fwd / _bwd suffix ("bias_gelu_fwd"
 * -> "bias_gelu"); the row length closest to the op's (in log) is used and
 * the same dtype preferred. A kind with no calibrated family uses the
 * device-to-device copy curve of the "bandwidth" section (its bytes count
 * read + written, like the ops').
 *
 * Fallback. An op is priced by the roofline, and reported as such, when its
 * dtype (or pass) has no measurement, when any dimension lies more than 2x
 * beyond the measured min / max, or when no curve applies. A fused
 * attention op (OP_ATTN) takes the measured fused entry of its pass, dtype,
 * head dim and masking nearest in (ln s, ln b*heads), at that entry's
 * TFLOP/s (work per head grows as s^2, so the rate is what transfers; the
 * head count sets how many tiles fill the SMs), within 2x of the measured
 * s and b*heads; the unfused core is priced as batched GEMMs.
 *
 * GPU check. The profile's GPU name is compared loosely with the
 * topology's (same model token such as "h100", "a100", "v100"). A mismatch
 * is a warning, not an error: pricing one GPU with another's profile is a
 * legitimate what-if (a slower GPU's kernels on a faster one), but
 * cost_describe() and the warning say so. No entry may be faster than the
 * priced GPU, whichever GPU measured it (check_peak()): a FLOP rate above
 * the dtype's dense peak or a byte rate above the HBM bandwidth, with
 * PROFILE_PEAK_MARGIN, is refused with its JSON path, the implied rate and
 * the peak. A topology GPU under a power limit below its TDP
 * (gpu.power.power_cap_W) is refused: the profile does not say at which
 * limit its kernels ran, so the limit's clock ratio (gpu.h) could be
 * counted twice or not at all. */
#include "cost-private.h"
#include "xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "profile.h"

#define NEIGHBOURS 8
#define RANGE_LN M_LN2      /* how far beyond the measured range is accepted */
#define SAME(a, b) (fabs((a) - (b)) < 1e-9)

struct gpoint {
	double x[3];            /* ln M, ln N, ln K */
	double log_eff;         /* ln FLOP/s */
	double time_s;
};

struct gtable {
	struct gpoint *v;
	int n;
	double *axis[3];
	int naxis[3];
	double rho_max;         /* best full-slot FLOP rate */
};

struct curve {
	double *lb;             /* ln bytes, ascending */
	double *lr;             /* ln bytes/s */
	double *t;              /* measured time at lb */
	int n;
};

struct family {
	char name[32];
	enum dtype dtype;
	double row;
	struct curve c;
};

struct cost_profile {
	struct cost base;
	struct profile *prof;
	double sm, tile_m, tile_n;
	struct gtable gemm[DTYPE_N];
	struct gtable conv[DTYPE_N][3];
	struct family *fam;
	int nfam;
	struct curve d2d;
};

/* --- building tables ---------------------------------------------------- */

struct raw {
	double m, n, k, flops, time_s;
};

static int raw_cmp(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double waves(const struct cost_profile *cp, double m, double n, double batch)
{
	double tiles = ceil(m / cp->tile_m) * ceil(n / cp->tile_n) * batch;
	return ceil(tiles / cp->sm);
}

/* Build tab from r[0..n) (sorted here); shapes measured more than once
 * (other transposes) count once, at the geometric mean of their times. */
static int gtable_build(struct cost_profile *cp, struct gtable *tab, struct raw *r, int n)
{
	memset(tab, 0, sizeof(*tab));
	if (n == 0)
		return 0;
	qsort(r, (size_t)n, sizeof(*r), raw_cmp);
	tab->v = xcalloc((size_t)n, sizeof(*tab->v));
	for (int d = 0; d < 3; d++)
		tab->axis[d] = xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n;) {
		int j = i;
		double lt = 0;
		bool same = true;
		while (j < n && raw_cmp(&r[i], &r[j]) == 0) {
			same &= r[j].time_s == r[i].time_s;
			lt += log(r[j++].time_s);
		}
		struct gpoint *p = &tab->v[tab->n++];
		p->time_s = same ? r[i].time_s : exp(lt / (j - i));
		p->x[0] = log(r[i].m), p->x[1] = log(r[i].n), p->x[2] = log(r[i].k);
		p->log_eff = log(r[i].flops / p->time_s);
		double rho = 2 * r[i].k * cp->tile_m * cp->tile_n * cp->sm *
			     waves(cp, r[i].m, r[i].n, 1) / p->time_s;
		if (rho > tab->rho_max)
			tab->rho_max = rho;
		i = j;
	}
	for (int d = 0; d < 3; d++) {
		double *a = tab->axis[d];
		for (int i = 0; i < tab->n; i++)
			a[i] = tab->v[i].x[d];
		qsort(a, (size_t)tab->n, sizeof(double), dbl_cmp);
		int u = 0;
		for (int i = 0; i < tab->n; i++)
			if (u == 0 || !SAME(a[i], a[u - 1]))
				a[u++] = a[i];
		tab->naxis[d] = u;
	}
	return 0;
}

static void gtable_finish(struct gtable *tab)
{
	free(tab->v);
	for (int d = 0; d < 3; d++)
		free(tab->axis[d]);
}

struct rawb {
	double bytes, time_s;
};

static int rawb_cmp(const void *a, const void *b)
{
	const struct rawb *x = a, *y = b;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static int curve_build(struct curve *c, struct rawb *r, int n)
{
	memset(c, 0, sizeof(*c));
	if (n == 0)
		return 0;
	qsort(r, (size_t)n, sizeof(*r), rawb_cmp);
	c->lb = xcalloc((size_t)n, sizeof(double));
	c->lr = xcalloc((size_t)n, sizeof(double));
	c->t = xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n;) {
		int j = i;
		double lt = 0;
		bool same = true;
		while (j < n && r[j].bytes == r[i].bytes) {
			same &= r[j].time_s == r[i].time_s;
			lt += log(r[j++].time_s);
		}
		double t = same ? r[i].time_s : exp(lt / (j - i));
		c->lb[c->n] = log(r[i].bytes);
		c->lr[c->n] = log(r[i].bytes / t);
		c->t[c->n] = t;
		c->n++;
		i = j;
	}
	return 0;
}

static void curve_finish(struct curve *c)
{
	free(c->lb);
	free(c->lr);
	free(c->t);
}

/* --- lookups ------------------------------------------------------------- */

static const struct gpoint *find_point(const struct gtable *tab, const double *x)
{
	for (int i = 0; i < tab->n; i++)
		if (SAME(tab->v[i].x[0], x[0]) && SAME(tab->v[i].x[1], x[1]) &&
		    SAME(tab->v[i].x[2], x[2]))
			return &tab->v[i];
	return NULL;
}

/* Indices of the axis values bracketing x (x within the axis range). */
static void bracket(const double *a, int n, double x, int *i0, int *i1)
{
	int i = 0;
	while (i < n - 1 && a[i] < x && !SAME(a[i], x))
		i++;
	*i1 = i;
	*i0 = (SAME(a[i], x) || i == 0) ? i : i - 1;
}

static double idw(const struct gtable *tab, const double *x)
{
	double best_d[NEIGHBOURS], best_v[NEIGHBOURS];
	int nb = 0;

	for (int i = 0; i < tab->n; i++) {
		double d2 = 0;
		for (int d = 0; d < 3; d++)
			d2 += (x[d] - tab->v[i].x[d]) * (x[d] - tab->v[i].x[d]);
		if (d2 < 1e-18)
			return tab->v[i].log_eff;
		int at = nb < NEIGHBOURS ? nb++ : NEIGHBOURS;
		if (at == NEIGHBOURS) {
			if (d2 >= best_d[NEIGHBOURS - 1])
				continue;
			at = NEIGHBOURS - 1;
		}
		while (at > 0 && best_d[at - 1] > d2) {
			best_d[at] = best_d[at - 1];
			best_v[at] = best_v[at - 1];
			at--;
		}
		best_d[at] = d2;
		best_v[at] = tab->v[i].log_eff;
	}
	double sw = 0, sv = 0;
	for (int i = 0; i < nb; i++) {
		sw += 1 / best_d[i];
		sv += best_v[i] / best_d[i];
	}
	return sv / sw;
}

/* ln achieved FLOP/s at x (clamped into the table's range). */
static double interp_log_eff(const struct gtable *tab, const double *x)
{
	int lo[3], hi[3];
	double w[3];

	for (int d = 0; d < 3; d++) {
		bracket(tab->axis[d], tab->naxis[d], x[d], &lo[d], &hi[d]);
		double a0 = tab->axis[d][lo[d]], a1 = tab->axis[d][hi[d]];
		w[d] = lo[d] == hi[d] ? 0 : (x[d] - a0) / (a1 - a0);
	}
	double le = 0;
	for (int c = 0; c < 8; c++) {
		double cx[3], cw = 1;
		for (int d = 0; d < 3; d++) {
			bool up = (c >> d) & 1;
			cx[d] = tab->axis[d][up ? hi[d] : lo[d]];
			cw *= up ? w[d] : 1 - w[d];
		}
		if (cw == 0)
			continue;
		const struct gpoint *p = find_point(tab, cx);
		if (!p)
			return idw(tab, x);
		le += cw * p->log_eff;
	}
	return le;
}

/* Seconds for a GEMM of this shape from tab, or -1 outside its range. */
static double gtable_time(const struct cost_profile *cp, const struct gtable *tab,
			  double m, double n, double k, double batch, double flops)
{
	double xq[3] = { log(m * batch), log(n), log(k) }, xc[3];

	if (tab->n == 0 || flops <= 0)
		return -1;
	for (int d = 0; d < 3; d++) {
		double lo = tab->axis[d][0], hi = tab->axis[d][tab->naxis[d] - 1];
		if (xq[d] < lo - RANGE_LN - 1e-12 || xq[d] > hi + RANGE_LN + 1e-12)
			return -1;
		xc[d] = xq[d] < lo ? lo : xq[d] > hi ? hi : xq[d];
	}
	if (batch == 1) {
		const struct gpoint *p = find_point(tab, xq);
		if (p)
			return p->time_s;
	}
	double t = flops / exp(interp_log_eff(tab, xc));
	double tw = waves(cp, m, n, batch) * 2 * k * cp->tile_m * cp->tile_n * cp->sm /
		    tab->rho_max;
	return t > tw ? t : tw;
}

/* Seconds to move bytes along c, or -1 outside its range. */
static double curve_time(const struct curve *c, double bytes)
{
	double x = log(bytes);
	if (c->n == 0 || bytes <= 0)
		return -1;
	if (x < c->lb[0] - RANGE_LN - 1e-12 || x > c->lb[c->n - 1] + RANGE_LN + 1e-12)
		return -1;
	int i = 0;
	while (i < c->n - 1 && c->lb[i + 1] <= x)
		i++;
	if (SAME(c->lb[i], x))
		return c->t[i];
	double lr;
	if (x <= c->lb[0])
		lr = c->lr[0];
	else if (i == c->n - 1)
		lr = c->lr[c->n - 1];
	else {
		double w = (x - c->lb[i]) / (c->lb[i + 1] - c->lb[i]);
		lr = c->lr[i] + w * (c->lr[i + 1] - c->lr[i]);
	}
	return bytes / exp(lr);
}

static const struct family *find_family(const struct cost_profile *cp, const char *name,
					enum dtype dt, double row)
{
	const struct family *best = NULL;
	double best_score = INFINITY;

	for (int i = 0; i < cp->nfam; i++) {
		const struct family *f = &cp->fam[i];
		if (strcmp(f->name, name) != 0)
			continue;
		double score = fabs(log(f->row + 1) - log(row + 1)) + (f->dtype == dt ? 0 : 1e3);
		if (score < best_score) {
			best_score = score;
			best = f;
		}
	}
	return best;
}

/* A memory-bound op on its family's measured curve. An op that stands for
 * k kernels (an eager piece, stack.h) is k kernels of bytes / k each; the
 * loss is priced on the softmax curve (calib measures no cross-entropy);
 * an op fused into the kernel before it (kernels < 0) has no launch of
 * its own: the roofline's bandwidth term, which adds none. */
static double membound_time(const struct cost_profile *cp, const struct op *op)
{
	char name[32], kind[40];
	const struct family *f = NULL;
	int k = op_launches(op);

	if (k == 0)
		return -1;
	snprintf(kind, sizeof(kind), "%s", op->membound_kind);
	if (!strncmp(kind, "cross_entropy_", 14))
		snprintf(kind, sizeof(kind), "softmax_%s", op->membound_kind + 14);
	if (kind[0]) {
		f = find_family(cp, kind, op->dtype, op->row);
		size_t l = strlen(kind);
		if (!f && l > 4 && (strcmp(kind + l - 4, "_fwd") == 0 ||
				    strcmp(kind + l - 4, "_bwd") == 0)) {
			snprintf(name, sizeof(name), "%.*s", (int)(l - 4), kind);
			f = find_family(cp, name, op->dtype, op->row);
		}
	}
	return k * curve_time(f ? &f->c : &cp->d2d, op->bytes / k);
}

/* A fused attention op at the rate of the measured fused entry of its
 * pass, dtype, head dim and masking nearest in (ln s, ln b*heads): the
 * rate depends on both (on the H200, cuDNN's causal forward at s 8192 runs
 * at 393 TFLOP/s with 4 heads and 652 with 128), and work per head grows
 * as s^2, so the rate is what transfers. -1 (roofline) if there is no such
 * entry or s or b*heads lies more than 2x beyond the measured range. */
static double attn_time(const struct cost_profile *cp, const struct op *op)
{
	const struct profile_attn *best = NULL;
	double bd = 0, lo[2] = { INFINITY, INFINITY }, hi[2] = { 0, 0 };
	/* a windowed kernel at the causal length of its keys per row (attention.h) */
	double s = op->window > 0 ? attention_window_seq(op->m, op->window) : op->m;
	double bh = op->batch > 1 ? op->batch : 1, x[2] = { log(s), log(bh) };

	for (int i = 0; i < cp->prof->nattn; i++) {
		const struct profile_attn *a = &cp->prof->attn[i];
		if (!a->fused || a->bwd != (op->pass == PASS_BWD) || a->dtype != op->dtype ||
		    a->head_dim != op->k || a->causal != op->causal)
			continue;
		double y[2] = { log(a->s), log(a->b * a->heads) };
		double d = (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]);
		for (int k = 0; k < 2; k++)
			lo[k] = fmin(lo[k], y[k]), hi[k] = fmax(hi[k], y[k]);
		if (!best || d < bd)
			best = a, bd = d;
	}
	for (int k = 0; best && k < 2; k++)
		if (x[k] < lo[k] - RANGE_LN - 1e-12 || x[k] > hi[k] + RANGE_LN + 1e-12)
			return -1;
	return best ? op->flops / (best->tflops * 1e12) : -1;
}

static double profile_op_time(struct cost *c, const struct op *op, bool *measured)
{
	struct cost_profile *cp = (struct cost_profile *)c;
	double t = -1;

	switch (op->kind) {
	case OP_GEMM:
		if (op->dtype >= 0 && op->dtype < DTYPE_N)
			t = gtable_time(cp, &cp->gemm[op->dtype], op->m, op->n, op->k,
					op->batch > 1 ? op->batch : 1, op->flops);
		break;
	case OP_CONV:
		if (op->dtype >= 0 && op->dtype < DTYPE_N && op->conv_pass >= 0 && op->conv_pass < 3)
			t = gtable_time(cp, &cp->conv[op->dtype][op->conv_pass], op->m, op->n,
					op->k, 1, op->flops);
		break;
	case OP_MEMBOUND:
		t = membound_time(cp, op);
		break;
	case OP_ATTN:
		t = attn_time(cp, op);
		/* the profile's kernels ran without dropout (attention.h) */
		if (t >= 0 && op->dropout) {
			double cc = c->gpu->compute_capability;
			t *= attention_dropout_ratio(op->backend[cc >= 9], cc, op->pass == PASS_BWD);
		}
		break;
	}
	*measured = t >= 0;
	return t >= 0 ? t : cost_roofline_time(c->gpu, op);
}

/* --- construction -------------------------------------------------------- */

static void profile_cost_destroy(struct cost *c)
{
	struct cost_profile *cp = (struct cost_profile *)c;
	if (!cp)
		return;
	for (int i = 0; i < DTYPE_N; i++) {
		gtable_finish(&cp->gemm[i]);
		for (int p = 0; p < 3; p++)
			gtable_finish(&cp->conv[i][p]);
	}
	for (int i = 0; i < cp->nfam; i++)
		curve_finish(&cp->fam[i].c);
	free(cp->fam);
	curve_finish(&cp->d2d);
	profile_destroy(cp->prof);
	free(cp);
}

static const struct cost_impl profile_impl = {
	.name = "profile",
	.description = "calib profile, interpolated by shape; roofline outside the measured range",
	.op_time = profile_op_time,
	.destroy = profile_cost_destroy,
};

static int build_gemm(struct cost_profile *cp)
{
	const struct profile *p = cp->prof;
	struct raw *r = xmalloc(((size_t)p->ngemm + (size_t)p->nconv + 1) * sizeof(*r));
	int rc = 0;

	for (int dt = 0; dt < DTYPE_N; dt++) {
		int n = 0;
		for (int i = 0; i < p->ngemm; i++) {
			const struct profile_gemm *g = &p->gemm[i];
			if (g->dtype == (enum dtype)dt)
				r[n++] = (struct raw){ g->m, g->n, g->k, 2 * g->m * g->n * g->k, g->time_s };
		}
		rc |= gtable_build(cp, &cp->gemm[dt], r, n);
		for (int pass = 0; pass < 3; pass++) {
			n = 0;
			for (int i = 0; i < p->nconv; i++) {
				const struct profile_conv *cv = &p->conv[i];
				if (cv->dtype != (enum dtype)dt || cv->pass != (enum profile_conv_pass)pass)
					continue;
				struct raw *x = &r[n++];
				profile_conv_gemm_dims(cv, &x->m, &x->n, &x->k);
				x->flops = profile_conv_flops(cv);
				x->time_s = cv->time_s;
			}
			rc |= gtable_build(cp, &cp->conv[dt][pass], r, n);
		}
	}
	free(r);
	return rc;
}

static int build_curves(struct cost_profile *cp)
{
	const struct profile *p = cp->prof;
	struct rawb *r = xmalloc(((size_t)p->nmem + (size_t)p->nbw + 1) * sizeof(*r));
	int n = 0, rc = 0;

	cp->fam = xcalloc((size_t)p->nmem + 1, sizeof(*cp->fam));
	for (int i = 0; i < p->nmem; i++) {
		const struct profile_mem *m = &p->mem[i];
		bool seen = false;
		for (int f = 0; f < cp->nfam && !seen; f++)
			seen = strcmp(cp->fam[f].name, m->kernel) == 0 &&
			       cp->fam[f].dtype == m->dtype && cp->fam[f].row == m->row;
		if (seen)
			continue;
		struct family *f = &cp->fam[cp->nfam++];
		snprintf(f->name, sizeof(f->name), "%s", m->kernel);
		f->dtype = m->dtype;
		f->row = m->row;
		n = 0;
		for (int j = i; j < p->nmem; j++)
			if (strcmp(p->mem[j].kernel, m->kernel) == 0 && p->mem[j].dtype == m->dtype &&
			    p->mem[j].row == m->row)
				r[n++] = (struct rawb){ p->mem[j].bytes, p->mem[j].time_s };
		rc |= curve_build(&f->c, r, n);
	}
	n = 0;
	for (int i = 0; i < p->nbw; i++)
		if (p->bw[i].kind == PROFILE_BW_D2D)
			r[n++] = (struct rawb){ p->bw[i].bytes, p->bw[i].time_s };
	rc |= curve_build(&cp->d2d, r, n);
	free(r);
	return rc;
}

/* The model token of a GPU name: letters followed by two or more digits
 * ("h100" in "NVIDIA H100 80GB HBM3"), lowercased; "" if none. */
static void model_token(const char *name, char *out, size_t n)
{
	out[0] = 0;
	for (const char *s = name; *s; s++) {
		if (!isalpha((unsigned char)*s) || (s > name && isalnum((unsigned char)s[-1])))
			continue;
		const char *e = s;
		while (isalpha((unsigned char)*e))
			e++;
		const char *dg = e;
		while (isdigit((unsigned char)*e))
			e++;
		if (e - dg >= 2 && (size_t)(e - s) < n) {
			size_t i;
			for (i = 0; i < (size_t)(e - s); i++)
				out[i] = (char)tolower((unsigned char)s[i]);
			out[i] = 0;
			return;
		}
	}
}

bool cost_profile_gpu_matches(const char *profile_gpu, const char *topology_gpu)
{
	char a[32], b[32];
	model_token(profile_gpu, a, sizeof(a));
	model_token(topology_gpu, b, sizeof(b));
	return a[0] && strcmp(a, b) == 0;
}

/* One measured rate of a profile entry against the GPU it prices. */
struct rate {
	char jp[64];                /* the key that sets it: /gemm/3/time_s */
	double work;                /* FLOPs or bytes of the entry; 0: a rate given as is */
	double time_s;
	double rate;                /* FLOP/s or B/s */
	int dtype;                  /* enum dtype of a FLOP rate; -1: bytes (HBM) */
};

/* The rates the cost source prices with: GEMMs and convolutions by FLOPs
 * over time, fused attention by its TFLOP/s as written (attn_time()),
 * memory-bound kernels and device-to-device copies by bytes over time.
 * Returns the count written into out (malloc'd). */
static int profile_rates(const struct profile *p, struct rate **out)
{
	struct rate *r = xcalloc((size_t)(p->ngemm + p->nconv + p->nattn + p->nmem + p->nbw) + 1, sizeof(*r));
	int n = 0;
	for (int i = 0; i < p->ngemm; i++, n++) {
		const struct profile_gemm *g = &p->gemm[i];
		r[n] = (struct rate){ .work = 2 * g->m * g->n * g->k, .time_s = g->time_s, .dtype = (int)g->dtype };
		snprintf(r[n].jp, sizeof(r[n].jp), "/gemm/%d/time_s", i);
	}
	for (int i = 0; i < p->nconv; i++, n++) {
		r[n] = (struct rate){ .work = profile_conv_flops(&p->conv[i]), .time_s = p->conv[i].time_s,
				      .dtype = (int)p->conv[i].dtype };
		snprintf(r[n].jp, sizeof(r[n].jp), "/conv/%d/time_s", i);
	}
	for (int i = 0; i < p->nattn; i++, n++) {
		r[n] = (struct rate){ .rate = p->attn[i].tflops * 1e12, .dtype = (int)p->attn[i].dtype };
		snprintf(r[n].jp, sizeof(r[n].jp), "/attention/%d/tflops", i);
	}
	for (int i = 0; i < p->nmem; i++, n++) {
		r[n] = (struct rate){ .work = p->mem[i].bytes, .time_s = p->mem[i].time_s, .dtype = -1 };
		snprintf(r[n].jp, sizeof(r[n].jp), "/memory_bound/%d/time_s", i);
	}
	for (int i = 0; i < p->nbw; i++) {
		if (p->bw[i].kind != PROFILE_BW_D2D)
			continue;  /* host copies: the host link, not HBM */
		r[n] = (struct rate){ .work = p->bw[i].bytes, .time_s = p->bw[i].time_s, .dtype = -1 };
		snprintf(r[n].jp, sizeof(r[n].jp), "/bandwidth/%d/time_s", i);
		n++;
	}
	for (int i = 0; i < n; i++)
		if (r[i].work > 0)
			r[i].rate = r[i].work / r[i].time_s;
	*out = r;
	return n;
}

/* Refuse entries faster than the GPU they price: a FLOP rate above the
 * dtype's dense peak, a byte rate above the HBM bandwidth, each with
 * PROFILE_PEAK_MARGIN for boost clocks (a GEMM time of 1e-11 s would price
 * the GEMMs at an MFU of thousands of percent). Measured on another GPU
 * model (match false), the same: an H100's kernels priced on an A100 would
 * run it above its own peak (an MFU of 152 %). Returns 0 or -1 (reported). */
static int check_peak(const struct profile *p, const struct gpu_spec *gpu, bool match, const char *path,
		      struct diag *d)
{
	struct rate *r;
	int n = profile_rates(p, &r), rc = 0;
	char other[160] = "";
	if (!match)
		snprintf(other, sizeof(other), "; measured on '%s'", p->gpu_name);
	for (int i = 0; i < n; i++) {
		bool flops = r[i].dtype >= 0;
		double peak = flops ? gpu->peak_flops[r[i].dtype] : gpu->hbm_bw_Bps, lim = PROFILE_PEAK_MARGIN * peak;
		double unit = flops ? 1e12 : 1e9;
		const char *un = flops ? "TFLOP/s" : "GB/s";
		char what[64];
		snprintf(what, sizeof(what), flops ? "the %s peak" : "the HBM bandwidth",
			 flops ? dtype_name((enum dtype)r[i].dtype) : "");
		if (!(peak > 0) || r[i].rate <= lim)
			continue;
		if (r[i].work > 0)
			rc = diag_err(d, path, r[i].jp, "must be at least %g s (%g %s at %g x %s of %g %s of '%s'%s), "
				      "got %g s (%g %s)", r[i].work / lim, r[i].work, flops ? "FLOPs" : "bytes",
				      PROFILE_PEAK_MARGIN, what, peak / unit, un, gpu->name, other, r[i].time_s,
				      r[i].rate / unit, un);
		else
			rc = diag_err(d, path, r[i].jp, "must be at most %g %s (%g x %s of %g %s of '%s'%s), got %g %s",
				      lim / unit, un, PROFILE_PEAK_MARGIN, what, peak / unit, un, gpu->name, other,
				      r[i].rate / unit, un);
	}
	free(r);
	return rc;
}

struct cost *cost_profile_create(const struct gpu_spec *gpu, const char *profile_path,
				 struct diag *d)
{
	struct cost_profile *cp = xcalloc(1, sizeof(*cp));
	cost_base_init(&cp->base, &profile_impl, gpu);
	cp->prof = profile_load(profile_path, d);
	if (!cp->prof)
		goto err;
	cp->sm = (double)cp->prof->sm_count;
	cp->base.interference = profile_interference(cp->prof);
	cp->tile_m = gpu->gemm_tile_m > 0 ? gpu->gemm_tile_m : 128;
	cp->tile_n = gpu->gemm_tile_n > 0 ? gpu->gemm_tile_n : 256;
	if (build_gemm(cp) || build_curves(cp)) {
		diag_err(d, profile_path, "", "out of memory building the profile tables");
		goto err;
	}
	/* a profile does not record the board power limit it was timed at
	 * (profile.h), so its kernels cannot be moved to another limit
	 * without counting the clock ratio twice or not at all */
	if (gpu_power_cap_clock_ratio(gpu) < 1) {
		diag_err(d, profile_path, "", "cannot price topology GPU '%s' under its power limit "
			 "(gpu.power.power_cap_W %g W of tdp_W %g W): a profile does not record the limit "
			 "its kernels ran at; price with the roofline, or set power_cap_W to tdp_W",
			 gpu->name, gpu->power_cap_W, gpu->tdp_W);
		goto err;
	}
	bool match = cost_profile_gpu_matches(cp->prof->gpu_name, gpu->name);
	if (check_peak(cp->prof, gpu, match, profile_path, d))
		goto err;
	if (!match)
		diag_warn(d, profile_path, "/gpu/name",
			  "profile measured on '%s' prices topology GPU '%s' (different GPU model)",
			  cp->prof->gpu_name, gpu->name);
	snprintf(cp->base.detail, sizeof(cp->base.detail),
		 "profile '%s' measured on '%s' (%s, %s); topology GPU '%s': %s", profile_path,
		 cp->prof->gpu_name, cp->prof->method, cp->prof->date_utc, gpu->name,
		 match ? "same model" : "DIFFERENT model");
	return &cp->base;
err:
	profile_cost_destroy(&cp->base);
	return NULL;
}
