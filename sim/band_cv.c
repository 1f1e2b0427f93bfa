/* band_cv: the suite's band table, cross-validated (see band.h and
 * band_cv.h). */
#include "band_cv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "xalloc.h"

/* Percent to 0.1, as the bands file writes it: nearest, or up. */
static double frac1(double x)
{
	return round(1000 * x) / 1000;
}

static double frac1_up(double x)
{
	return ceil(1000 * x - 1e-9) / 1000;
}

/* Six significant digits, as the bands file writes an envelope's range. */
static double sig6(double x)
{
	char b[32];
	snprintf(b, sizeof(b), "%.6g", x);
	return strtod(b, NULL);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Grow env by one case's features. */
static void env_add(struct band_envelope *e, const struct band_features *f, bool first)
{
	e->gens |= 1u << f->gen;
	e->kinds |= 1u << f->kind;
	e->styles |= 1u << f->style;
	e->precs |= 1u << f->prec;
	e->feats |= f->feats;
	double v[3] = { sig6(f->params), sig6(f->gpus), sig6(f->seq) };
	double *r[3] = { e->params, e->gpus, e->seq };
	for (int k = 0; k < 3; k++) {
		if (first || v[k] < r[k][0])
			r[k][0] = v[k];
		if (first || v[k] > r[k][1])
			r[k][1] = v[k];
	}
	char *s = (char *)e->stacks;
	if (band_names_has(s, f->stack))
		return;
	e->stacks = s && *s ? xasprintf("%s|%s", s, f->stack) : xstrdup(f->stack);
	free(s);
}

/* The in-sample statistics and envelope of the cases of family name
 * (NULL: all) into row. */
static void in_sample(const struct band_case *c, int n, const char *name, struct band *row)
{
	double sum_abs = 0, sum_speed = 0;
	row->env.stacks = NULL;
	for (int i = 0; i < n; i++) {
		if (name && strcmp(c[i].family, name))
			continue;
		env_add(&row->env, &c[i].f, row->runs == 0);
		row->runs++;
		sum_abs += fabs(c[i].err);
		sum_speed += c[i].speed;
		row->optimistic_runs += c[i].speed > 0;
		if (fabs(c[i].err) > row->max_abs)
			row->max_abs = fabs(c[i].err);
	}
	row->mean_abs = frac1(sum_abs / row->runs);
	row->max_abs = frac1(row->max_abs);
	row->bias = frac1(sum_speed / row->runs);
}

/* Case i's band as if its family had not run: the row it matches and
 * the center (the overall row's without the family). */
static int oof_pick(const struct band *rows, int nrows, const struct band_case *c, int n, int i,
		    struct band_pick *p)
{
	int k = band_match(rows, nrows, &c[i].f, c[i].family, p);
	if (k == nrows - 1) {
		double s = 0;
		int m = 0;
		for (int j = 0; j < n; j++)
			if (strcmp(c[j].family, c[i].family)) {
				s += c[j].speed;
				m++;
			}
		p->center = m ? frac1(s / m) : 0;
		p->lo = p->center - p->halfwidth;
		p->hi = p->center + p->halfwidth;
	}
	return k;
}

/* The 80 % leave-one-run-out residual of family name (0 below 2 runs). */
static double loo_width(const struct band_case *c, int n, const char *name)
{
	double sum = 0, *r = xcalloc((size_t)n, sizeof(*r));
	int m = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(c[i].family, name)) {
			sum += c[i].speed;
			m++;
		}
	int k = 0;
	for (int i = 0; i < n && m > 1; i++)
		if (!strcmp(c[i].family, name))
			r[k++] = c[i].speed - (sum - c[i].speed) / (m - 1);
	double q = band_quantile(r, k, BAND_LEVEL);
	free(r);
	return q;
}

struct band *band_cv_build(const struct band_case *c, int n, int *nrows)
{
	BUG_ON(n < 1, "band_cv_build needs cases");
	const char **names = xcalloc((size_t)n, sizeof(*names));
	int nf = 0;
	for (int i = 0; i < n; i++) {
		bool seen = false;
		for (int k = 0; k < nf && !seen; k++)
			seen = !strcmp(names[k], c[i].family);
		if (!seen)
			names[nf++] = c[i].family;
	}
	qsort(names, (size_t)nf, sizeof(*names), cmp_name);
	struct band *rows = xcalloc((size_t)nf + 1, sizeof(*rows));
	for (int k = 0; k <= nf; k++) {
		rows[k].family = xstrdup(k < nf ? names[k] : "overall");
		in_sample(c, n, k < nf ? names[k] : NULL, &rows[k]);
	}
	free(names);
	int nr = nf + 1;

	/* 1-2: the out-of-family residuals on the centers alone; those of the
	 * runs whose pick was extrapolated (nothing near once their family is
	 * left out) apart, for the extrapolated width */
	double *r = xcalloc((size_t)n, sizeof(*r)), *rx = xcalloc((size_t)n, sizeof(*rx)), wmax = 0;
	int nx = 0;
	for (int i = 0; i < n; i++) {
		struct band_pick p;
		oof_pick(rows, nr, c, n, i, &p);
		r[i] = c[i].speed - p.center;
		wmax = fmax(wmax, fabs(r[i]));
		if (p.extrapolated)
			rx[nx++] = r[i];
	}
	double w = frac1_up(band_quantile(r, n, BAND_LEVEL));
	/* an 80 % band like the others: the level's quantile of the
	 * extrapolated runs' residuals, once there are enough of them to
	 * read one (else the largest residual of all) */
	double wx = nx >= BAND_EXTRAP_MIN_RUNS ? band_quantile(rx, nx, BAND_LEVEL) : wmax;
	free(r);
	free(rx);
	/* 3: the half-widths */
	for (int k = 0; k < nr; k++) {
		rows[k].halfwidth = k < nf ? frac1_up(fmax(w, loo_width(c, n, rows[k].family))) : w;
		rows[k].extrap_halfwidth = frac1_up(fmax(w, wx));
	}
	/* out-of-family statistics on the finished bands */
	double *sum_abs = xcalloc((size_t)nr, sizeof(double)), *sum = xcalloc((size_t)nr, sizeof(double));
	for (int i = 0; i < n; i++) {
		struct band_pick p;
		int g = oof_pick(rows, nr, c, n, i, &p);
		double res = c[i].speed - p.center;
		int f = 0;
		while (strcmp(rows[f].family, c[i].family))
			f++;
		for (int k = f; k < nr; k = k == nr - 1 ? nr : nr - 1) {
			sum_abs[k] += fabs(res);
			sum[k] += res;
			rows[k].oof_max_abs = fmax(rows[k].oof_max_abs, fabs(res));
			rows[k].oof_covered += fabs(res) <= p.halfwidth + 1e-9;
		}
		const char *gn = rows[g].family, *had = rows[f].oof_family;
		if (!had)
			rows[f].oof_family = xstrdup(gn);
		else if (!band_names_has(had, gn)) {
			rows[f].oof_family = xasprintf("%s|%s", had, gn);
			free((char *)had);
		}
	}
	for (int k = 0; k < nr; k++) {
		rows[k].oof_mean_abs = frac1(sum_abs[k] / rows[k].runs);
		rows[k].oof_bias = frac1(sum[k] / rows[k].runs);
		rows[k].oof_max_abs = frac1(rows[k].oof_max_abs);
		if (!rows[k].oof_family)
			rows[k].oof_family = xstrdup("-");
	}
	free(sum_abs);
	free(sum);
	*nrows = nr;
	return rows;
}

void band_cv_free(struct band *rows, int nrows)
{
	if (!rows)
		return;
	for (int k = 0; k < nrows; k++) {
		free((char *)rows[k].family);
		free((char *)rows[k].oof_family);
		free((char *)rows[k].env.stacks);
	}
	free(rows);
}
