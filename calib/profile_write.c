/* profile_write.c - writes the measured points as the JSON profile and the raw CSV, atomically.
 *
 * The JSON layout is specified in PROFILE-FORMAT.md (schema
 * "ddlsim.profile" 1.0) and built with jansson; the CSV has one row per
 * point with the fixed columns of CSV_HEADER, blank where a column does not
 * apply to the point's section.  Both files are written to PATH.tmp.<pid>,
 * flushed and fsync'ed, then renamed over PATH, so a reader never sees a
 * half-written profile and an interrupted run leaves the old one intact
 * (util/atomic_file.c, the writer the reports use too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "calib.h"

#define CSV_HEADER \
	"section,dtype,impl,pass,m,n,k,b,c,h,w,r,s,stride,pad,elements,row,bytes,time_s,tflops,GBps\n"

static const char *const section_names[CALIB_NSECTIONS] = {
	"gemm", "conv", "memory_bound", "attention", "bandwidth",
};

/* Opens an atomic file for path (util/atomic_file.h). */
static FILE *open_tmp(const char *path, struct atomic_file *af)
{
	int e = atomic_file_open(af, path);
	if (e) {
		calib_error("cannot create file: %s '%s'", atomic_file_strerror(-e), path);
		return NULL;
	}
	return af->f;
}

/* Flushes, fsyncs and renames af into place. */
static int commit(struct atomic_file *af, const char *path)
{
	int e = atomic_file_commit(af);
	if (e)
		return calib_error("cannot write file: %s '%s'", atomic_file_strerror(-e), path);
	return 0;
}

static json_t *point_json(const struct calib_point *p)
{
	char t[2] = { 0, 0 };

	switch (p->section) {
	case CALIB_GEMM: {
		json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "dtype", p->dtype,
				      "m", (json_int_t)p->m, "n", (json_int_t)p->n,
				      "k", (json_int_t)p->k);

		if (!o)
			return NULL;
		t[0] = p->transa;
		json_object_set_new(o, "transa", json_string(t));
		t[0] = p->transb;
		json_object_set_new(o, "transb", json_string(t));
		json_object_set_new(o, "time_s", json_real(p->time_s));
		json_object_set_new(o, "tflops", json_real(p->tflops));
		json_object_set_new(o, "impl", json_string(p->impl));
		return o;
	}
	case CALIB_CONV:
		return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
				 " s:f, s:f, s:s}",
				 "dtype", p->dtype, "layout", "NHWC", "pass", p->pass,
				 "n", (json_int_t)p->n, "c", (json_int_t)p->c,
				 "h", (json_int_t)p->h, "w", (json_int_t)p->w,
				 "k", (json_int_t)p->k, "r", (json_int_t)p->r,
				 "s", (json_int_t)p->s, "stride", (json_int_t)p->stride,
				 "pad", (json_int_t)p->pad, "dilation", (json_int_t)p->dilation,
				 "time_s", p->time_s, "tflops", p->tflops, "impl", p->impl);
	case CALIB_MEM:
		return json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:f}",
				 "kernel", p->kernel, "dtype", p->dtype,
				 "elements", (json_int_t)p->elements, "row", (json_int_t)p->row,
				 "bytes", (json_int_t)p->bytes, "time_s", p->time_s,
				 "GBps", p->GBps);
	case CALIB_ATTN:
		return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b, s:f, s:f}",
				 "impl", p->impl, "pass", p->pass, "dtype", p->dtype,
				 "b", (json_int_t)p->b, "heads", (json_int_t)p->heads,
				 "s", (json_int_t)p->seq, "head_dim", (json_int_t)p->head_dim,
				 "causal", (int)p->causal, "time_s", p->time_s,
				 "tflops", p->tflops);
	case CALIB_BW:
		return json_pack("{s:s, s:I, s:f, s:f}", "kind", p->kind,
				 "bytes", (json_int_t)p->bytes, "time_s", p->time_s,
				 "GBps", p->GBps);
	case CALIB_NSECTIONS:
		break;
	}
	return NULL;
}

static json_t *measured_json(const struct calib *c)
{
	char date[32], host[256], method[256];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(method, sizeof(method),
		 "CUDA events, %d warm-up + %d timed runs, median (long points: >= 1 warm-up, "
		 ">= 5 timed); rotating buffers totalling >= 2x L2; random uniform(-1,1) data",
		 c->warmup_runs, c->timed_runs);
	return json_pack("{s:s, s:s, s:s, s:i, s:i, s:b}", "date_utc", date, "hostname", host,
			 "method", method, "warmup_runs", c->warmup_runs,
			 "timed_runs", c->timed_runs, "quick", (int)c->quick);
}

int profile_write_json(const struct calib *c, const char *path)
{
	struct atomic_file af;
	json_t *root, *sections[CALIB_NSECTIONS];
	FILE *f;
	size_t i;
	int s, rc = -1;

	root = json_pack("{s:s, s:s, s:{s:s, s:s}}", "schema", CALIB_SCHEMA,
			 "schema_version", CALIB_SCHEMA_VERSION, "producer",
			 "name", CALIB_NAME, "version", DDLSIM_VERSION);
	if (!root)
		return calib_error("out of memory 'profile'");
	json_object_set_new(root, "gpu", device_info_json(c));
	json_object_set_new(root, "measured", measured_json(c));
	if (c->interf_blocks > 0)
		json_object_set_new(root, "interference",
				    json_pack("{s:i, s:f, s:f}", "copy_blocks", c->interf_blocks,
					      "gemm_alone_s", c->interf_alone_s,
					      "gemm_with_copy_s", c->interf_with_s));
	for (s = 0; s < CALIB_NSECTIONS; s++) {
		sections[s] = json_array();
		json_object_set_new(root, section_names[s], sections[s]);
	}
	for (i = 0; i < c->npoints; i++) {
		json_t *o = point_json(&c->points[i]);

		if (!o || json_array_append_new(sections[c->points[i].section], o) != 0) {
			calib_error("out of memory 'profile'");
			goto out;
		}
	}
	f = open_tmp(path, &af);
	if (!f)
		goto out;
	if (json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) != 0 ||
	    fputc('\n', f) == EOF) {
		atomic_file_abort(&af);
		calib_error("cannot write file '%s'", path);
		goto out;
	}
	rc = commit(&af, path);
out:
	json_decref(root);
	return rc;
}

/* Writes `v` or nothing (blank) followed by a comma. */
static void col_int(FILE *f, bool on, long long v)
{
	if (on)
		fprintf(f, "%lld", v);
	fputc(',', f);
}

static void col_real(FILE *f, bool on, double v, char end)
{
	if (on)
		fprintf(f, "%.6g", v);
	fputc(end, f);
}

int profile_write_csv(const struct calib *c, const char *path)
{
	struct atomic_file af;
	FILE *f = open_tmp(path, &af);
	size_t i;

	if (!f)
		return -1;
	fputs(CSV_HEADER, f);
	for (i = 0; i < c->npoints; i++) {
		const struct calib_point *p = &c->points[i];
		const bool gemm = p->section == CALIB_GEMM, conv = p->section == CALIB_CONV;
		const bool mem = p->section == CALIB_MEM, attn = p->section == CALIB_ATTN;
		const bool bw = p->section == CALIB_BW;
		/* impl column: memory_bound gives its kernel name, bandwidth its kind. */
		const char *impl = mem ? p->kernel : bw ? p->kind : p->impl;
		/* pass column: gemm gives its transposes, e.g. "NT". */
		char pass[16];

		if (gemm)
			snprintf(pass, sizeof(pass), "%c%c", p->transa, p->transb);
		else
			snprintf(pass, sizeof(pass), "%s", p->pass);
		fprintf(f, "%s,%s,%s,%s,", section_names[p->section], p->dtype, impl, pass);
		col_int(f, gemm || attn, gemm ? p->m : p->seq);		/* m */
		col_int(f, gemm || attn, gemm ? p->n : p->seq);		/* n */
		col_int(f, gemm || conv || attn, gemm ? p->k : conv ? p->k : p->head_dim); /* k */
		col_int(f, conv || attn, conv ? p->n : p->b);			/* b */
		col_int(f, conv || attn, conv ? p->c : p->heads);		/* c */
		col_int(f, conv, p->h);
		col_int(f, conv, p->w);
		col_int(f, conv, p->r);
		col_int(f, conv, p->s);
		col_int(f, conv, p->stride);
		col_int(f, conv, p->pad);
		col_int(f, mem, p->elements);
		col_int(f, mem, p->row);
		col_int(f, mem || bw, p->bytes);
		col_real(f, true, p->time_s, ',');
		col_real(f, gemm || conv || attn, p->tflops, ',');
		col_real(f, mem || bw, p->GBps, '\n');
	}
	if (ferror(f)) {
		atomic_file_abort(&af);
		return calib_error("cannot write file '%s'", path);
	}
	return commit(&af, path);
}
