/* kineto: a PyTorch profiler trace read as ops of interest and their
 * kernels (see kineto.h for the format and its sources).
 *
 * One pass over traceEvents sorts the events it needs into four lists:
 * CPU ops, ProfilerStep annotations, runtime launches (correlation ->
 * External id) and kernels. CPU ops are then sorted by process, thread,
 * start (longest first) and nested with a stack, which gives each op its
 * parent and its innermost enclosing op of interest; every kernel then
 * goes to that op of its launching op. */
#include "kineto.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <unistd.h>
#include <zlib.h>

#include "infile.h"
#include "jload.h"
#include "kineto-private.h"

struct cev {                    /* a cpu_op event */
	int ev;                 /* index in traceEvents */
	double pid, tid, ts, end;
	long long ext;
	bool interest;
	json_t *obj;            /* an op of interest's event (t->held holds it) */
	int parent, up;         /* indices into the sorted array; -1: none */
	int out;                /* index in t->ops, -1 */
};

struct step {
	double pid, ts, end;
	long n;
};

struct idmap {                  /* a sorted key -> value pair */
	long long key, val;
};

struct rev {                    /* a runtime launch */
	long long corr, ext;
	double pid, tid, ts;
};

struct kev {
	long long ext, corr;
	double dur_us;
	bool tf32;              /* its name says TF32 (has_tf32) */
	long device;
};

struct scan {
	struct kineto_trace *t;
	const char *path;
	const char *const *interest;
	struct diag *d;
	struct cev *cpu;
	int ncpu, ccpu;
	struct step *steps;
	int nsteps, csteps;
	struct rev *rt;         /* runtime launches, by correlation once sorted */
	int nrt, crt;
	struct kev *k;
	int nk, ck;
};

static double num_or(json_t *v, double dflt)
{
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* args[key], also as Kineto spelled it before mid-2021 ("external id"). */
static long long arg_id(json_t *args, const char *key)
{
	json_t *v = json_object_get(args, key);
	if (!v && !strcmp(key, "External id"))
		v = json_object_get(args, "external id");
	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* A pid or tid: a number, or a string (Kineto before mid-2021 wrote
 * "25738", "stream 7"): its number when it is one, else a hash of it
 * (only equality matters), -1 when absent. */
static double id_of(json_t *v)
{
	const char *str = json_string_value(v);
	if (!str)
		return num_or(v, -1);
	char *end;
	double x = strtod(str, &end);
	if (*str && !*end)
		return x;
	unsigned long long h = 1469598103934665603ULL;      /* FNV-1a */
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 1099511628211ULL;
	return -2.0 - (double)(h >> 12);                    /* below every real id */
}

static bool in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

/* Whether a kernel's name says it runs TF32: "..._tf32f32_..." (cuBLAS's
 * xmma kernels), or CUTLASS's "tensorop_s1688gemm" (NVIDIA/cutlass
 * media/docs/profiler.md names: "tensorop" Tensor Cores, "s" fp32
 * accumulation, "1688" the m16n8k8 instruction; with fp32 operands, which
 * is all this flag is read for, Ampere's Tensor Cores take them only as
 * TF32: PTX ISA, mma.m16n8k8 .tf32). A100 traces of fp32 models hold them
 * (HTA tests/data/trace_diff: 110 TFLOP/s "fp32" GEMMs, 5.7x the SIMT
 * peak). */
static bool has_tf32(const char *name)
{
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, "tf32", 4) == 0 || strncmp(p, "tensorop_s1688gemm", 18) == 0)
			return true;
	return false;
}

/* ts and dur of an "X" event, checked: both numbers, dur >= 0. */
static int read_span(json_t *e, const char *file, const char *jp, struct diag *d,
		     double *ts, double *dur)
{
	json_t *t = json_object_get(e, "ts"), *u = json_object_get(e, "dur");
	char p[64];
	int bad = 0;
	if (!json_is_number(t)) {
		snprintf(p, sizeof(p), "%s/ts", jp);
		bad = diag_err(d, file, p, "expected a number (microseconds), got %s",
			       t ? jload_type_name(t) : "nothing");
	}
	if (!json_is_number(u)) {
		snprintf(p, sizeof(p), "%s/dur", jp);
		bad = diag_err(d, file, p, "expected a number (microseconds), got %s",
			       u ? jload_type_name(u) : "nothing");
	} else if (json_number_value(u) < 0) {
		snprintf(p, sizeof(p), "%s/dur", jp);
		bad = diag_err(d, file, p, "must be >= 0 (kineto never writes a negative "
			       "duration: a damaged trace), got %g", json_number_value(u));
	} else if (json_number_value(u) > 1e15) {
		snprintf(p, sizeof(p), "%s/dur", jp);
		bad = diag_err(d, file, p, "must be at most 1e+15 us (1e9 s, ddlsim's longest "
			       "duration: a damaged trace), got %g", json_number_value(u));
	}
	if (bad)
		return -1;
	*ts = json_number_value(t);
	*dur = json_number_value(u);
	return 0;
}

/* What a trace event is to the scan, from its category and name. */
enum ev_kind { EV_NONE, EV_CPU, EV_STEP, EV_RUNTIME, EV_KERNEL };

/* The kind of an "X" event: the categories as Kineto names them since mid-2021, and
 * before ("Operator", "Runtime", "Kernel": pytorch/kineto tb_plugin's samples of
 * 2021-06, PyTorch 1.9). */
static enum ev_kind event_kind(const char *cat, const char *name)
{
	bool ann = (strcmp(cat, "user_annotation") == 0 || strcmp(cat, "Operator") == 0) &&
		   strncmp(name, "ProfilerStep#", 13) == 0;
	if (!ann && (strcmp(cat, "cpu_op") == 0 || strcmp(cat, "Operator") == 0))
		return EV_CPU;
	if (ann)
		return EV_STEP;
	if (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0 ||
	    strcmp(cat, "Runtime") == 0 || strcmp(cat, "Driver") == 0)
		return EV_RUNTIME;
	return strcasecmp(cat, "kernel") == 0 ? EV_KERNEL : EV_NONE;
}

/* A CPU operator event i; the trace holds on to it when its name is of interest. */
static void add_cpu(struct scan *s, json_t *e, int i, const char *name, const char *const *interest,
		    double ts, double dur)
{
	XGROW(s->cpu, s->ccpu, s->ncpu + 1);
	s->cpu[s->ncpu++] = (struct cev){
		.ev = i, .pid = id_of(json_object_get(e, "pid")),
		.tid = id_of(json_object_get(e, "tid")), .ts = ts, .end = ts + dur,
		.ext = arg_id(json_object_get(e, "args"), "External id"),
		.interest = in_list(name, interest), .parent = -1, .up = -1, .out = -1,
	};
	if (s->cpu[s->ncpu - 1].interest) {
		json_array_append(s->t->held, e);
		s->cpu[s->ncpu - 1].obj = e;
	}
}

/* A "ProfilerStep#N" annotation: one step of the profiled loop (a bad N: none). */
static void add_step(struct scan *s, json_t *e, const char *name, double ts, double dur)
{
	char *endp;
	long n = strtol(name + 13, &endp, 10);
	if (*endp || endp == name + 13)
		return;
	XGROW(s->steps, s->csteps, s->nsteps + 1);
	s->steps[s->nsteps++] = (struct step){ id_of(json_object_get(e, "pid")), ts, ts + dur, n };
}

/* A CUDA runtime or driver call with a correlation id (the launch of a kernel). */
static void add_runtime(struct scan *s, json_t *e, double ts)
{
	json_t *args = json_object_get(e, "args");
	long long c = arg_id(args, "correlation"), x = arg_id(args, "External id");
	if (c) {
		XGROW(s->rt, s->crt, s->nrt + 1);
		s->rt[s->nrt++] = (struct rev){ c, x, id_of(json_object_get(e, "pid")),
						id_of(json_object_get(e, "tid")), ts };
	}
}

/* A GPU kernel; an NCCL kernel also counts as communication. */
static void add_kernel(struct scan *s, json_t *e, const char *name, double ts, double dur)
{
	json_t *args = json_object_get(e, "args");
	json_t *dv = json_object_get(args, "device");
	if (!strncmp(name, "nccl", 4))
		kineto_comm_add(s->t, name, args, ts, dur);
	XGROW(s->k, s->ck, s->nk + 1);
	s->k[s->nk++] = (struct kev){ arg_id(args, "External id"), arg_id(args, "correlation"),
				      dur, has_tf32(name),
				      json_is_integer(dv) ? (long)json_integer_value(dv) : -1 };
}

static void scan_event(struct scan *s, json_t *e, int i, const char *file, const char *const *interest,
		       struct diag *d)
{
	char jp[32];
	double ts, dur;
	snprintf(jp, sizeof(jp), "%s/%d", s->t->events_path, i);
	if (!json_is_object(e)) {
		diag_err(d, file, jp, "expected an object (a trace event), got %s", jload_type_name(e));
		return;
	}
	const char *ph = json_string_value(json_object_get(e, "ph"));
	const char *cat = json_string_value(json_object_get(e, "cat"));
	const char *name = json_string_value(json_object_get(e, "name"));
	if (!ph || strcmp(ph, "X") != 0 || !cat || !name)
		return;
	enum ev_kind k = event_kind(cat, name);
	if (k == EV_NONE || read_span(e, file, jp, d, &ts, &dur))
		return;
	if (k == EV_CPU)
		add_cpu(s, e, i, name, interest, ts, dur);
	else if (k == EV_STEP)
		add_step(s, e, name, ts, dur);
	else if (k == EV_RUNTIME)
		add_runtime(s, e, ts);
	else
		add_kernel(s, e, name, ts, dur);
}

static int cev_cmp(const void *a, const void *b)
{
	const struct cev *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;    /* the enclosing op first */
	return x->ev - y->ev;
}

static int idmap_cmp(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static const struct idmap *idmap_find(const struct idmap *m, int n, long long key)
{
	struct idmap k = { key, 0 };
	return key && n > 0 ? bsearch(&k, m, (size_t)n, sizeof(*m), idmap_cmp) : NULL;  /* m may be NULL at 0 */
}

/* Parents by nesting on each thread, and each op's innermost enclosing op
 * of interest (itself included). */
static void nest(struct scan *s)
{
	int *stack = xcalloc((size_t)s->ncpu + 1, sizeof(int)), top = 0;
	if (s->ncpu > 0)  /* no ops: s->cpu may be NULL, which qsort may not take */
		qsort(s->cpu, (size_t)s->ncpu, sizeof(*s->cpu), cev_cmp);
	for (int i = 0; i < s->ncpu; i++) {
		struct cev *c = &s->cpu[i];
		while (top > 0) {
			const struct cev *p = &s->cpu[stack[top - 1]];
			if (p->pid == c->pid && p->tid == c->tid && c->ts < p->end)
				break;
			top--;
		}
		c->parent = top > 0 ? stack[top - 1] : -1;
		c->up = c->interest ? i : c->parent >= 0 ? s->cpu[c->parent].up : -1;
		stack[top++] = i;
	}
	free(stack);
}

static long step_of(const struct scan *s, const struct cev *c)
{
	for (int i = 0; i < s->nsteps; i++)
		if (s->steps[i].pid == c->pid && c->ts >= s->steps[i].ts && c->ts < s->steps[i].end)
			return s->steps[i].n;
	return -1;
}

static void collect_ops(struct kineto_trace *t, struct scan *s)
{
	/* in trace order: the sorted ops by event index */
	struct idmap *by_ev = xcalloc((size_t)s->ncpu + 1, sizeof(*by_ev));
	for (int i = 0; i < s->ncpu; i++)
		by_ev[i] = (struct idmap){ s->cpu[i].ev, i };
	if (s->ncpu > 0)
		qsort(by_ev, (size_t)s->ncpu, sizeof(*by_ev), idmap_cmp);
	t->ops = xcalloc((size_t)s->ncpu + 1, sizeof(*t->ops));
	for (int j = 0; j < s->ncpu; j++) {
		struct cev *c = &s->cpu[by_ev[j].val];
		if (!c->interest)
			continue;
		json_t *e = c->obj;
		struct kineto_op *o = &t->ops[t->nops];
		o->name = json_string_value(json_object_get(e, "name"));
		o->args = json_object_get(e, "args");
		snprintf(o->jpath, sizeof(o->jpath), "%s/%d", t->events_path, c->ev);
		o->step = step_of(s, c);
		c->out = t->nops++;
	}
	free(by_ev);
}

static int rev_cmp(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The innermost CPU op on (pid, tid) whose span holds ts, -1: none. The
 * ops are sorted by process, thread, start (nest()): the last op of the
 * thread that starts at or before ts, then up its parents. */
static int enclosing(const struct scan *s, double pid, double tid, double ts)
{
	int lo = 0, hi = s->ncpu;       /* first op after (pid, tid, ts) */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const struct cev *c = &s->cpu[mid];
		bool before = c->pid != pid ? c->pid < pid : c->tid != tid ? c->tid < tid : c->ts <= ts;
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	int i = lo - 1;
	if (i < 0 || s->cpu[i].pid != pid || s->cpu[i].tid != tid)
		return -1;
	while (i >= 0 && !(ts < s->cpu[i].end))
		i = s->cpu[i].parent;
	return i;
}

/* The CPU op (index into s->cpu) that launched kernel k, -1: none found.
 * Through its launch (the runtime event of its correlation): the op of
 * the launch's External id when that op holds the launch on its thread,
 * else the innermost op holding it there (traces whose launches carry
 * their correlation as External id, as HTA's tests/data of 2022-2023 do:
 * HTA's call graph nests them so too), else the op of that External id.
 * Without a launch, the op of the kernel's own External id, unless that
 * id is only the correlation again. */
static int launcher(const struct scan *s, const struct idmap *ext, int next, const struct kev *k)
{
	struct rev key = { .corr = k->corr };
	const struct rev *r = k->corr && s->nrt > 0 ? bsearch(&key, s->rt, (size_t)s->nrt, sizeof(*s->rt),
							      rev_cmp) : NULL;
	if (r) {
		const struct idmap *m = idmap_find(ext, next, r->ext);
		if (m) {
			const struct cev *c = &s->cpu[m->val];
			if (c->pid == r->pid && c->tid == r->tid && c->ts <= r->ts && r->ts < c->end)
				return (int)m->val;
		}
		int in = enclosing(s, r->pid, r->tid, r->ts);
		if (in >= 0)
			return in;
		return m ? (int)m->val : -1;
	}
	if (k->ext == k->corr)
		return -1;
	const struct idmap *m = idmap_find(ext, next, k->ext);
	return m ? (int)m->val : -1;
}

static void attribute(struct kineto_trace *t, struct scan *s)
{
	struct idmap *ext = xcalloc((size_t)s->ncpu + 1, sizeof(*ext));
	int next = 0;
	for (int i = 0; i < s->ncpu; i++)
		if (s->cpu[i].ext)
			ext[next++] = (struct idmap){ s->cpu[i].ext, i };
	if (next > 0)
		qsort(ext, (size_t)next, sizeof(*ext), idmap_cmp);
	if (s->nrt > 0)   /* no runtime launches: s->rt is NULL */
		qsort(s->rt, (size_t)s->nrt, sizeof(*s->rt), rev_cmp);
	for (int i = 0; i < s->nk; i++) {
		const struct kev *k = &s->k[i];
		int c = launcher(s, ext, next, k);
		if (c < 0) {
			t->nkernels_orphan++;
			continue;
		}
		int u = s->cpu[c].up;
		if (u < 0)
			continue;
		struct kineto_op *o = &t->ops[s->cpu[u].out];
		o->nkernels++;
		o->kernel_s += k->dur_us;      /* microseconds until the end */
		if (k->tf32)
			o->tf32 = true;
		t->nkernels_attributed++;
		for (int p = s->cpu[u].parent; p >= 0 && s->cpu[p].up >= 0; p = s->cpu[s->cpu[p].up].parent)
			t->ops[s->cpu[s->cpu[p].up].out].wrapper = true;
	}
	free(ext);
	for (int i = 0; i < t->nops; i++)
		t->ops[i].kernel_s *= 1e-6;
}

/* deviceProperties of the device the kernels ran on (the first kernel's
 * "device"; the only entry when none matches). */
static void read_device(struct kineto_trace *t, const struct scan *s)
{
	json_t *dp = json_object_get(t->root, "deviceProperties"), *v, *pick = NULL;
	size_t i;
	long dev = s->nk > 0 ? s->k[0].device : -1;
	if (!json_is_array(dp))
		return;
	json_array_foreach(dp, i, v)
		if (json_is_object(v) && json_integer_value(json_object_get(v, "id")) == dev)
			pick = v;
	if (!pick && json_array_size(dp) == 1)
		pick = json_array_get(dp, 0);
	if (!json_is_object(pick) || !json_is_string(json_object_get(pick, "name")))
		return;
	t->has_device = true;
	t->gpu_name = json_string_value(json_object_get(pick, "name"));
	t->sm_count = (long)json_integer_value(json_object_get(pick, "numSms"));
	t->cc_major = (long)json_integer_value(json_object_get(pick, "computeMajor"));
	t->cc_minor = (long)json_integer_value(json_object_get(pick, "computeMinor"));
	t->hbm_bytes = num_or(json_object_get(pick, "totalGlobalMem"), 0);
}

/* The trace's JSON, plain or gzip'ed (tensorboard_trace_handler's
 * use_gzip: "*.pt.trace.json.gz"; zlib reads both), at most
 * INFILE_MAX_TRACE_BYTES on disk and of text. Returns a new reference or
 * NULL (reported with line:col for a syntax error). */
static char *load_text(const char *path, size_t *out_len, struct diag *d)
{
	char why[1200];
	FILE *f = infile_open_max(path, INFILE_MAX_TRACE_BYTES, why, sizeof(why));
	if (!f) {
		diag_err(d, path, "", "%s", why);
		return NULL;
	}
	int fd = dup(fileno(f));
	fclose(f);
	gzFile z = fd >= 0 ? gzdopen(fd, "rb") : NULL;
	if (!z) {
		if (fd >= 0)
			close(fd);
		diag_err(d, path, "", "cannot read: out of memory");
		return NULL;
	}
	size_t len = 0, cap = 1 << 20;
	char *buf = xmalloc(cap);
	int got;
	while ((got = gzread(z, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)got;
		if (len == cap) {
			if (cap >= (size_t)INFILE_MAX_TRACE_BYTES) {
				diag_err(d, path, "", "more than the %ld MB of JSON a trace may hold",
					 INFILE_MAX_TRACE_BYTES >> 20);
				goto fail;
			}
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
	}
	int zerr;
	const char *zmsg = gzerror(z, &zerr);
	if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
		/* a truncated gzip stream reads as its first part, Z_BUF_ERROR;
		 * zlib names the file "<fd:N>: ", which says nothing here */
		const char *tail = strstr(zmsg, ">: ");
		diag_err(d, path, "", "cannot read: %s (a damaged gzip file?)",
			 !strncmp(zmsg, "<fd:", 4) && tail ? tail + 3 : zmsg);
		goto fail;
	}
	gzclose(z);
	*out_len = len;
	return buf;
fail:
	gzclose(z);
	free(buf);
	return NULL;
}

static void on_event(void *ctx, json_t *e, int i)
{
	struct scan *s = ctx;
	scan_event(s, e, i, s->path, s->interest, s->d);
}

static void scan_reset(struct scan *s)
{
	free(s->cpu), free(s->steps), free(s->rt), free(s->k);
	s->cpu = NULL, s->steps = NULL, s->rt = NULL, s->k = NULL;
	s->ncpu = s->ccpu = s->nsteps = s->csteps = s->nrt = s->crt = s->nk = s->ck = 0;
	json_array_clear(s->t->held);
	s->t->ncomm = 0;
}

/* The trace's events into s, streamed (kineto_stream.c), else decoded
 * whole, which reports a syntax error with its line:column. Returns 0, or
 * -1 after reporting. */
static int read_events(struct kineto_trace *t, struct scan *s, const char *path, struct diag *d)
{
	size_t len = 0, i;
	bool had = false;
	json_error_t err;
	json_t *e;
	char *buf = load_text(path, &len, d);
	if (!buf)
		return -1;
	t->root = kineto_stream(buf, len, on_event, s, &had);
	if (t->root && had) {
		free(buf);
		return 0;
	}
	/* not a stream of events: decode it whole, as said where it fails */
	json_decref(t->root);
	scan_reset(s);
	t->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	free(buf);
	if (!t->root)
		return diag_err_at(d, path, err.line < 1 ? 1 : err.line, err.column < 1 ? 1 : err.column,
				   "malformed JSON: %s", err.text);
	if (!json_is_object(t->root))
		return diag_err(d, path, "", "expected a JSON object with \"traceEvents\" (a PyTorch "
				"profiler trace), got %s", jload_type_name(t->root));
	json_t *events = json_object_get(t->root, "traceEvents");
	if (!json_is_array(events))
		return diag_err(d, path, "/traceEvents", "expected an array of trace events (a PyTorch "
				"profiler trace, torch.profiler's export_chrome_trace()), got %s",
				events ? jload_type_name(events) : "nothing");
	json_array_foreach(events, i, e)
		scan_event(s, e, (int)i, path, s->interest, d);
	json_object_del(t->root, "traceEvents");
	return 0;
}

/* The events read (by read_events() or a feeder) into t's ops, kernels,
 * steps and device. */
static void finish(struct kineto_trace *t, struct scan *s)
{
	nest(s);
	collect_ops(t, s);
	attribute(t, s);
	t->nkernels = s->nk;
	for (int j = 0; j < s->nsteps; j++) {
		bool seen = false;
		for (int k = 0; k < j; k++)
			seen = seen || s->steps[k].n == s->steps[j].n;
		t->nsteps += !seen;
		if (t->first_step < 0 || s->steps[j].n < t->first_step)
			t->first_step = s->steps[j].n;
	}
	for (int j = 0; j < s->nsteps; j++)
		if (s->steps[j].n == t->first_step && s->steps[j].end > t->first_step_end_us)
			t->first_step_end_us = s->steps[j].end;
	read_device(t, s);
}

/* An empty trace of path, or NULL after reporting a path too long to keep. */
static struct kineto_trace *trace_new(const char *path, const char *events_path, struct diag *d)
{
	struct kineto_trace *t = xcalloc(1, sizeof(*t));
	if (jload_copy_path(path, t->path, sizeof(t->path), d)) {
		free(t);
		return NULL;
	}
	snprintf(t->events_path, sizeof(t->events_path), "%s", events_path);
	t->held = json_array();
	t->first_step = -1;
	return t;
}

struct kineto_trace *kineto_feed(const char *path, const char *events_path, json_t *root,
				 const char *const *interest, kineto_feeder feed, void *ctx, struct diag *d)
{
	struct kineto_trace *t = trace_new(path, events_path, d);
	if (!t) {
		json_decref(root);
		return NULL;
	}
	struct scan s = { .t = t, .path = path, .interest = interest, .d = d };
	int before = diag_count(d);
	t->root = root;
	if (feed(ctx, on_event, &s) || diag_count(d) != before) {
		free(s.cpu), free(s.steps), free(s.rt), free(s.k);
		kineto_destroy(t);
		return NULL;
	}
	finish(t, &s);
	free(s.cpu), free(s.steps), free(s.rt), free(s.k);
	return t;
}

struct kineto_trace *kineto_load(const char *path, const char *const *interest, struct diag *d)
{
	struct kineto_trace *t = trace_new(path, "/traceEvents", d);
	if (!t)
		return NULL;
	struct scan s = { .t = t, .path = path, .interest = interest, .d = d };
	int before = diag_count(d);

	if (read_events(t, &s, path, d) || diag_count(d) != before)
		goto err_scan;
	finish(t, &s);
	free(s.cpu), free(s.steps), free(s.rt), free(s.k);
	return t;

err_scan:
	free(s.cpu), free(s.steps), free(s.rt), free(s.k);
	kineto_destroy(t);
	return NULL;
}

void kineto_destroy(struct kineto_trace *t)
{
	if (!t)
		return;
	json_decref(t->root);
	json_decref(t->held);
	free(t->ops);
	free(t->comm);
	free(t);
}

json_t *kineto_arg(const struct kineto_op *op, const char *key)
{
	json_t *v = json_object_get(op->args, key);
	return json_is_array(v) ? v : NULL;
}

static const struct {
	const char *name;
	enum dtype dt;
} torch_types[] = {
	{ "c10::BFloat16", DTYPE_BF16 }, { "c10::Half", DTYPE_FP16 }, { "c10::Float8_e4m3fn", DTYPE_FP8 },
	{ "c10::Float8_e4m3fnuz", DTYPE_FP8 }, { "float", DTYPE_FP32 },
};

bool kineto_dtype(const char *s, bool tf32, enum dtype *out)
{
	for (size_t i = 0; s && i < sizeof(torch_types) / sizeof(torch_types[0]); i++)
		if (!strcmp(s, torch_types[i].name)) {
			*out = torch_types[i].dt == DTYPE_FP32 && tf32 ? DTYPE_TF32 : torch_types[i].dt;
			return true;
		}
	return false;
}

const char *kineto_torch_type(enum dtype d)
{
	if (d == DTYPE_TF32)
		d = DTYPE_FP32;
	for (size_t i = 0; i < sizeof(torch_types) / sizeof(torch_types[0]); i++)
		if (torch_types[i].dt == d)
			return torch_types[i].name;
	return NULL;
}
