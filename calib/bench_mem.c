/* bench_mem.c - memory-bound kernel timings: bias-GeLU, bias-SwiGLU, layer norm, RMSNorm, softmax.
 *
 * The kernels are the project's own (kernels/elementwise.cu, layernorm.cu,
 * softmax.cu), measured in bf16, fp16 and fp32 (bf16 only with --quick)
 * over traffic sizes from 64 KiB to 1 GiB.  Element-wise kernels work on
 * rows of 4096 (a hidden size; the bias has one entry per column) and
 * record row = 0; row-wise kernels are measured at row lengths 128 .. 8192.
 * For each point the number of rows is chosen so that the kernel's traffic
 * is close to the target size, and `bytes` records the exact traffic of
 * this implementation: every operand read plus every result written once
 * (for layernorm_bwd including its per-block weight-gradient partials),
 * which is what GBps is computed from.
 *
 * Check.  Before timing, three rows (first, middle, last) are compared
 * with a double-precision CPU reference computed from the same inputs;
 * layernorm_bwd's dgamma/dbeta (sums over all rows) are checked in full
 * when there are at most 4096 rows.  In --self-test every row of small
 * problems is checked, including non-multiple-of-4 widths (scalar paths)
 * and the causal softmax used by bench_attn.c.  Tolerance:
 * |got - ref| <= eps * (scale + |ref|) where eps is 1e-5 (fp32), 4e-3
 * (fp16) or 2e-2 (bf16) and scale is the magnitude of the terms that
 * produced ref.  Statistics buffers (mean, rstd) given to the backward
 * kernels hold random values like every other input: the check uses the
 * same values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

enum mk {
	MK_BIAS_GELU,
	MK_BIAS_SWIGLU,
	MK_LN_FWD,
	MK_LN_BWD,
	MK_RMS_FWD,
	MK_SM_FWD,
	MK_SM_BWD,
	MK_COUNT,
};

static const char *const mk_names[MK_COUNT] = {
	"bias_gelu", "bias_swiglu", "layernorm_fwd", "layernorm_bwd",
	"rmsnorm_fwd", "softmax_fwd", "softmax_bwd",
};

#define EW_COLS 4096
#define LN_EPS 1e-5f

struct mem {
	struct calib *c;
	enum mk kind;
	enum calib_dtype dt;
	enum kernels_dtype st;
	size_t rows, row;	/* element-wise: row = number of columns */
	size_t causal_seq;	/* softmax_fwd only */
	int nbufs;
	size_t bytes[ARENA_MAX_BUFS];
	enum kernels_dtype bst[ARENA_MAX_BUFS];
	struct arena ar;
	size_t traffic;
};

static bool rowwise(enum mk k)
{
	return k != MK_BIAS_GELU && k != MK_BIAS_SWIGLU;
}

static void add_buf(struct mem *m, size_t elems, enum kernels_dtype st)
{
	static const size_t es[] = { 4, 2, 2, 1 };

	m->bytes[m->nbufs] = elems * es[st];
	m->bst[m->nbufs] = st;
	m->nbufs++;
}

static size_t ln_bwd_blocks(const struct mem *m)
{
	const size_t cap = 2 * (size_t)m->c->prop.multiProcessorCount;

	return m->rows < cap ? m->rows : cap;
}

/* Buffers of each kernel (indices used by launch() and check()) and the
 * kernel's traffic in bytes. */
static void layout(struct mem *m)
{
	const size_t e = m->rows * m->row, sz = dtype_size(m->dt);
	const enum kernels_dtype t = m->st, f = KERNELS_F32;

	m->nbufs = 0;
	switch (m->kind) {
	case MK_BIAS_GELU:	/* x, bias, y */
		add_buf(m, e, t); add_buf(m, m->row, t); add_buf(m, e, t);
		m->traffic = 2 * e * sz + m->row * sz;
		break;
	case MK_BIAS_SWIGLU:	/* x [rows, 2 row], bias [2 row], y */
		add_buf(m, 2 * e, t); add_buf(m, 2 * m->row, t); add_buf(m, e, t);
		m->traffic = 3 * e * sz + 2 * m->row * sz;
		break;
	case MK_LN_FWD:		/* x, gamma, beta, y, mean, rstd */
		add_buf(m, e, t); add_buf(m, m->row, t); add_buf(m, m->row, t);
		add_buf(m, e, t); add_buf(m, m->rows, f); add_buf(m, m->rows, f);
		m->traffic = 2 * e * sz + 2 * m->row * sz + 8 * m->rows;
		break;
	case MK_LN_BWD:		/* dy, x, gamma, mean, rstd, dx, dgamma, dbeta, ws */
		add_buf(m, e, t); add_buf(m, e, t); add_buf(m, m->row, t);
		add_buf(m, m->rows, f); add_buf(m, m->rows, f); add_buf(m, e, t);
		add_buf(m, m->row, f); add_buf(m, m->row, f);
		m->bytes[m->nbufs] = kernels_layernorm_bwd_workspace_bytes(m->rows, m->row);
		m->bst[m->nbufs++] = f;
		m->traffic = 3 * e * sz + m->row * sz + 8 * m->rows +
			     2 * ln_bwd_blocks(m) * 2 * m->row * 4 + 8 * m->row;
		break;
	case MK_RMS_FWD:	/* x, gamma, y, rstd */
		add_buf(m, e, t); add_buf(m, m->row, t); add_buf(m, e, t); add_buf(m, m->rows, f);
		m->traffic = 2 * e * sz + m->row * sz + 4 * m->rows;
		break;
	case MK_SM_FWD:		/* x, y */
		add_buf(m, e, t); add_buf(m, e, t);
		m->traffic = 2 * e * sz;
		break;
	case MK_SM_BWD:		/* y, dy, dx */
		add_buf(m, e, t); add_buf(m, e, t); add_buf(m, e, t);
		m->traffic = 3 * e * sz;
		break;
	case MK_COUNT:
		break;
	}
}

static int enqueue_mem(void *arg, int i)
{
	struct mem *m = arg;
	void *b[ARENA_MAX_BUFS];
	cudaStream_t s = m->c->stream;
	cudaError_t err = cudaErrorInvalidValue;
	int j;

	for (j = 0; j < m->nbufs; j++)
		b[j] = arena_ptr(&m->ar, j, i);
	switch (m->kind) {
	case MK_BIAS_GELU:
		err = kernels_bias_gelu(m->st, b[0], b[1], b[2], m->rows, m->row, s);
		break;
	case MK_BIAS_SWIGLU:
		err = kernels_bias_swiglu(m->st, b[0], b[1], b[2], m->rows, m->row, s);
		break;
	case MK_LN_FWD:
		err = kernels_layernorm_fwd(m->st, b[0], b[1], b[2], b[3], b[4], b[5],
					    m->rows, m->row, LN_EPS, s);
		break;
	case MK_LN_BWD:
		err = kernels_layernorm_bwd(m->st, b[0], b[1], b[2], b[3], b[4], b[5],
					    b[6], b[7], b[8], m->rows, m->row, s);
		break;
	case MK_RMS_FWD:
		err = kernels_rmsnorm_fwd(m->st, b[0], b[1], b[2], b[3], m->rows, m->row,
					  LN_EPS, s);
		break;
	case MK_SM_FWD:
		err = kernels_softmax_fwd(m->st, b[0], b[1], m->rows, m->row, m->causal_seq,
					  1.0f, s);
		break;
	case MK_SM_BWD:
		err = kernels_softmax_bwd(m->st, b[0], b[1], b[2], m->rows, m->row, s);
		break;
	case MK_COUNT:
		break;
	}
	return cuda_failed(err, mk_names[m->kind]) ? -1 : 0;
}

/* Host copy, decoded to double, of elements [first, first + count) of
 * buffer j (copy 0).  Returns a malloc'd array (caller frees) or NULL. */
static double *fetch(const struct mem *m, int j, size_t first, size_t count)
{
	static const size_t es[] = { 4, 2, 2, 1 };
	const size_t e = es[m->bst[j]];
	unsigned char *raw = malloc(count * e + 1);
	double *out = malloc(count * sizeof(double) + 1);
	size_t i;

	if (!raw || !out) {
		calib_error("out of memory 'memory-bound check'");
		goto fail;
	}
	if (copy_strided(raw, (const char *)arena_ptr(&m->ar, j, 0) + first * e, e, 1, count) < 0)
		goto fail;
	for (i = 0; i < count; i++)
		out[i] = dtype_load(m->bst[j], raw, i);
	free(raw);
	return out;
fail:
	free(raw);
	free(out);
	return NULL;
}

static double eps_of(enum calib_dtype dt)
{
	return dt == CALIB_FP32 ? 1e-5 : dt == CALIB_FP16 ? 4e-3 : 2e-2;
}

static double gelu_ref(double x)
{
	return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* One row's host copies: inputs, output and saved statistics (NULL: not fetched). */
struct row_bufs {
	double *in0, *in1, *in2, *out, *st0, *st1;
};

/* bias_gelu: out = gelu(x + bias). */
static int check_bias_gelu(struct mem *m, size_t e0, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row;
	const double eps = eps_of(m->dt);

	if (!(b->in0 = fetch(m, 0, e0, n)) || !(b->in1 = fetch(m, 1, 0, n)) ||
	    !(b->out = fetch(m, 2, e0, n)))
		return -1;
	for (size_t j = 0; j < n; j++) {
		const double ref = gelu_ref(b->in0[j] + b->in1[j]);

		calib_judge(v, b->out[j], ref, eps * (1.0 + fabs(ref)), NULL);
	}
	return 0;
}

/* bias_swiglu: out = silu(gate + bias) * (up + bias), gate and up side by side in a row of 2n. */
static int check_bias_swiglu(struct mem *m, size_t e0, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row;
	const double eps = eps_of(m->dt);

	if (!(b->in0 = fetch(m, 0, 2 * e0, 2 * n)) || !(b->in1 = fetch(m, 1, 0, 2 * n)) ||
	    !(b->out = fetch(m, 2, e0, n)))
		return -1;
	for (size_t j = 0; j < n; j++) {
		const double g = b->in0[j] + b->in1[j], u = b->in0[n + j] + b->in1[n + j];
		const double ref = g / (1.0 + exp(-g)) * u;

		calib_judge(v, b->out[j], ref, eps * (1.0 + fabs(ref)), NULL);
	}
	return 0;
}

/* layernorm_fwd / rmsnorm_fwd of row r: the output and the saved mean and rstd. */
static int check_norm_fwd(struct mem *m, size_t r, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row, e0 = r * n;
	const double eps = eps_of(m->dt);
	const bool ln = m->kind == MK_LN_FWD;
	double mu = 0.0, var = 0.0, rs;
	size_t j;

	if (!(b->in0 = fetch(m, 0, e0, n)) || !(b->in1 = fetch(m, 1, 0, n)) ||
	    (ln && !(b->in2 = fetch(m, 2, 0, n))) || !(b->out = fetch(m, ln ? 3 : 2, e0, n)) ||
	    !(b->st1 = fetch(m, ln ? 5 : 3, r, 1)) || (ln && !(b->st0 = fetch(m, 4, r, 1))))
		return -1;
	for (j = 0; j < n; j++)
		mu += b->in0[j];
	mu = ln ? mu / (double)n : 0.0;
	for (j = 0; j < n; j++)
		var += (b->in0[j] - mu) * (b->in0[j] - mu);
	rs = 1.0 / sqrt(var / (double)n + LN_EPS);
	for (j = 0; j < n; j++) {
		const double ref = (b->in0[j] - mu) * rs * b->in1[j] + (ln ? b->in2[j] : 0.0);

		calib_judge(v, b->out[j], ref, eps * (1.0 + fabs(ref)), NULL);
	}
	/* Saved statistics are fp32 whatever the data type. */
	calib_judge(v, b->st1[0], rs, 1e-4 * fabs(rs), NULL);
	if (ln)
		calib_judge(v, b->st0[0], mu, 1e-5, NULL);
	return 0;
}

/* layernorm_bwd of row r: dx from dy, x, gamma and the saved mean and rstd. */
static int check_ln_bwd(struct mem *m, size_t r, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row, e0 = r * n;
	const double eps = eps_of(m->dt);
	double sg = 0.0, sgx = 0.0, mu, rs;
	size_t j;

	if (!(b->in0 = fetch(m, 0, e0, n)) || !(b->in1 = fetch(m, 1, e0, n)) ||
	    !(b->in2 = fetch(m, 2, 0, n)) || !(b->st0 = fetch(m, 3, r, 1)) ||
	    !(b->st1 = fetch(m, 4, r, 1)) || !(b->out = fetch(m, 5, e0, n)))
		return -1;
	mu = b->st0[0];
	rs = b->st1[0];
	for (j = 0; j < n; j++) {
		const double xhat = (b->in1[j] - mu) * rs, g = b->in0[j] * b->in2[j];

		sg += g;
		sgx += g * xhat;
	}
	sg /= (double)n;
	sgx /= (double)n;
	for (j = 0; j < n; j++) {
		const double xhat = (b->in1[j] - mu) * rs, g = b->in0[j] * b->in2[j];
		const double ref = rs * (g - sg - xhat * sgx);
		const double scale = fabs(rs) * (fabs(g) + fabs(sg) + fabs(xhat * sgx)) + 1.0;

		calib_judge(v, b->out[j], ref, eps * (scale + fabs(ref)) + 1e-5 * scale, NULL);
	}
	return 0;
}

/* softmax_fwd of row r, causal when m->causal_seq is set (the columns past the row's position are 0). */
static int check_sm_fwd(struct mem *m, size_t r, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row, e0 = r * n;
	const double eps = eps_of(m->dt);
	const size_t valid = m->causal_seq ? r % m->causal_seq + 1 : n;
	double mx = -INFINITY, s = 0.0;
	size_t j;

	if (!(b->in0 = fetch(m, 0, e0, n)) || !(b->out = fetch(m, 1, e0, n)))
		return -1;
	for (j = 0; j < valid && j < n; j++)
		mx = fmax(mx, b->in0[j]);
	for (j = 0; j < valid && j < n; j++)
		s += exp(b->in0[j] - mx);
	for (j = 0; j < n; j++) {
		const double ref = j < valid ? exp(b->in0[j] - mx) / s : 0.0;

		calib_judge(v, b->out[j], ref, eps * fabs(ref) + 1e-7, NULL);
	}
	return 0;
}

/* softmax_bwd: dx = y * (dy - sum(y * dy)). */
static int check_sm_bwd(struct mem *m, size_t e0, struct row_bufs *b, struct calib_verdict *v)
{
	const size_t n = m->row;
	const double eps = eps_of(m->dt);
	double s = 0.0, sq = 0.0;
	size_t j;

	if (!(b->in0 = fetch(m, 0, e0, n)) || !(b->in1 = fetch(m, 1, e0, n)) ||
	    !(b->out = fetch(m, 2, e0, n)))
		return -1;
	for (j = 0; j < n; j++) {
		s += b->in0[j] * b->in1[j];
		sq += b->in0[j] * b->in1[j] * b->in0[j] * b->in1[j];
	}
	for (j = 0; j < n; j++) {
		const double ref = b->in0[j] * (b->in1[j] - s);

		calib_judge(v, b->out[j], ref,
			    eps * (fabs(ref) + fabs(b->in0[j]) * (1.0 + sqrt(sq))) + 1e-6, NULL);
	}
	return 0;
}

/* Checks row r of the output against the CPU reference. */
static int check_row(struct mem *m, size_t r, struct calib_verdict *v)
{
	const size_t e0 = r * m->row;
	struct row_bufs b = { 0 };
	int rc = 0;

	switch (m->kind) {
	case MK_BIAS_GELU:
		rc = check_bias_gelu(m, e0, &b, v);
		break;
	case MK_BIAS_SWIGLU:
		rc = check_bias_swiglu(m, e0, &b, v);
		break;
	case MK_LN_FWD:
	case MK_RMS_FWD:
		rc = check_norm_fwd(m, r, &b, v);
		break;
	case MK_LN_BWD:
		rc = check_ln_bwd(m, r, &b, v);
		break;
	case MK_SM_FWD:
		rc = check_sm_fwd(m, r, &b, v);
		break;
	case MK_SM_BWD:
		rc = check_sm_bwd(m, e0, &b, v);
		break;
	case MK_COUNT:
		break;
	}
	free(b.in0);
	free(b.in1);
	free(b.in2);
	free(b.out);
	free(b.st0);
	free(b.st1);
	return rc;
}

/* dgamma / dbeta of layernorm_bwd, all columns, from all rows. */
static int check_ln_wgrad(struct mem *m, struct calib_verdict *v)
{
	const size_t n = m->row, e = m->rows * n;
	double *dy = fetch(m, 0, 0, e), *x = fetch(m, 1, 0, e);
	double *mean = fetch(m, 3, 0, m->rows), *rstd = fetch(m, 4, 0, m->rows);
	double *dg = fetch(m, 6, 0, n), *db = fetch(m, 7, 0, n);
	size_t i, j;
	int rc = -1;

	if (!dy || !x || !mean || !rstd || !dg || !db)
		goto out;
	for (j = 0; j < n; j++) {
		double g = 0.0, b = 0.0, sg = 0.0, sb = 0.0;

		for (i = 0; i < m->rows; i++) {
			const double d = dy[i * n + j];
			const double p = d * (x[i * n + j] - mean[i]) * rstd[i];

			g += p;
			b += d;
			sg += p * p;
			sb += d * d;
		}
		/* fp32 sums in another order: eps 1e-5 whatever the dtype. */
		calib_judge(v, dg[j], g, 1e-5 * (sqrt(sg) + fabs(g)) + 1e-5, NULL);
		calib_judge(v, db[j], b, 1e-5 * (sqrt(sb) + fabs(b)) + 1e-5, NULL);
	}
	rc = 0;
out:
	free(dy);
	free(x);
	free(mean);
	free(rstd);
	free(dg);
	free(db);
	return rc;
}

static int check_mem(struct mem *m, bool all_rows)
{
	struct calib_verdict v = { true, 0.0, 0.0, 0.0, NULL };
	size_t r, rows_checked = 0;

	if (cuda_failed(cudaStreamSynchronize(m->c->stream), mk_names[m->kind]))
		return -1;
	if (all_rows) {
		for (r = 0; r < m->rows; r++, rows_checked++)
			if (check_row(m, r, &v) < 0)
				return -1;
	} else {
		const size_t pick[3] = { 0, m->rows / 2, m->rows - 1 };

		for (r = 0; r < 3; r++, rows_checked++)
			if (check_row(m, pick[r], &v) < 0)
				return -1;
	}
	if (m->kind == MK_LN_BWD && m->rows <= 4096 && check_ln_wgrad(m, &v) < 0)
		return -1;
	return calib_check(m->c, v.ok, "%s %s rows %zu x %zu%s: %zu rows checked, worst got %.6g "
			   "want %.6g (%.2f of tolerance)",
			   mk_names[m->kind], dtype_name(m->dt), m->rows, m->row,
			   m->causal_seq ? " causal" : "", rows_checked, v.got, v.want, v.worst);
}

/* Checks and (unless self-testing) times one point.  Returns 0 or -1. */
static int run_point(struct calib *c, enum mk kind, enum calib_dtype dt, size_t rows,
		     size_t row, size_t causal_seq)
{
	struct mem m;
	struct calib_point pt;
	double t = 0.0;
	int rc;

	memset(&m, 0, sizeof(m));
	m.c = c;
	m.kind = kind;
	m.dt = dt;
	m.st = dtype_storage(dt);
	m.rows = rows;
	m.row = row;
	m.causal_seq = causal_seq;
	layout(&m);
	rc = arena_init(c, &m.ar, m.nbufs, m.bytes, m.bst);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped '%s %zu x %zu'",
			   mk_names[kind], rows, row);
		return 0;
	}
	if (rc < 0)
		return -1;
	rc = -1;
	if (enqueue_mem(&m, 0) < 0 || check_mem(&m, c->self_test && rows <= 4096) < 0)
		goto out;
	if (c->self_test) {
		rc = 0;
		goto out;
	}
	if (timer_median(c, enqueue_mem, &m, &t) < 0)
		goto out;
	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_MEM;
	snprintf(pt.kernel, sizeof(pt.kernel), "%s", mk_names[kind]);
	snprintf(pt.dtype, sizeof(pt.dtype), "%s", dtype_name(dt));
	snprintf(pt.impl, sizeof(pt.impl), "ddlsim");
	pt.elements = (long long)(rows * row);
	pt.row = rowwise(kind) ? (long long)row : 0;
	pt.bytes = (long long)m.traffic;
	pt.time_s = t;
	pt.GBps = (double)m.traffic / t * 1e-9;
	calib_progress("mem  %-14s %-5s rows %8zu x %5zu %11lld B %9.4f ms %8.1f GB/s",
		       mk_names[kind], dtype_name(dt), rows, row, pt.bytes, t * 1e3, pt.GBps);
	rc = calib_add(c, &pt);
out:
	arena_finish(&m.ar);
	return rc;
}

/* Rows of `row` elements giving about `target` bytes of traffic. */
static size_t rows_for(struct calib *c, enum mk kind, enum calib_dtype dt, size_t row,
		       size_t target)
{
	struct mem m;

	memset(&m, 0, sizeof(m));
	m.c = c;
	m.kind = kind;
	m.dt = dt;
	m.st = dtype_storage(dt);
	m.rows = 1024;
	m.row = row;
	layout(&m);
	/* Traffic is affine in rows; use the per-row slope from 1024 rows. */
	return target * 1024 / m.traffic > 0 ? target * 1024 / m.traffic : 1;
}

static int self_test(struct calib *c)
{
	static const enum calib_dtype dts[] = { CALIB_FP32, CALIB_FP16, CALIB_BF16 };
	static const size_t rowlens[] = { 128, 1000, 8192 };
	size_t d, i;
	int k;

	for (d = 0; d < 3; d++) {
		for (k = 0; k < MK_COUNT; k++) {
			if (!rowwise((enum mk)k)) {
				if (run_point(c, (enum mk)k, dts[d], 5, EW_COLS, 0) < 0 ||
				    run_point(c, (enum mk)k, dts[d], 3, 1003, 0) < 0)
					return -1;
				continue;
			}
			for (i = 0; i < 3; i++)
				if (run_point(c, (enum mk)k, dts[d], 37, rowlens[i], 0) < 0)
					return -1;
		}
		/* Causal softmax of attention scores: 3 sequences of 256. */
		if (run_point(c, MK_SM_FWD, dts[d], 3 * 256, 256, 256) < 0)
			return -1;
	}
	/* Many rows per layernorm_bwd block (the grid is 2 blocks per SM). */
	if (run_point(c, MK_LN_BWD, CALIB_BF16, 3000, 256, 0) < 0)
		return -1;
	return 0;
}

int bench_mem(struct calib *c)
{
	static const enum calib_dtype dts[] = { CALIB_BF16, CALIB_FP16, CALIB_FP32 };
	size_t d, target, row;
	int k;

	if (c->self_test)
		return self_test(c);
	for (d = 0; d < 3; d++) {
		if (c->quick && dts[d] != CALIB_BF16)
			continue;
		for (k = 0; k < MK_COUNT; k++) {
			if (!rowwise((enum mk)k)) {
				for (target = 64u << 10; target <= (1u << 30);
				     target *= c->quick ? 4 : 2)
					if (run_point(c, (enum mk)k, dts[d],
						      rows_for(c, (enum mk)k, dts[d], EW_COLS, target),
						      EW_COLS, 0) < 0)
						return -1;
				continue;
			}
			for (row = 128; row <= 8192; row *= 2) {
				if (c->quick && row != 1024 && row != 4096 && row != 8192)
					continue;
				for (target = 64u << 10; target <= (1u << 30);
				     target *= c->quick ? 16 : 4)
					if (run_point(c, (enum mk)k, dts[d],
						      rows_for(c, (enum mk)k, dts[d], row, target),
						      row, 0) < 0)
						return -1;
			}
		}
	}
	return 0;
}
