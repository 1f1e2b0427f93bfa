/* bands_file: validation/bands.json written, checked and printed (see
 * bands_file.h). */
#include "bands_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "jload.h"
#include "xalloc.h"

double bands_file_pct(double frac)
{
	return round(1000 * frac) / 10;
}

/* A names array of the bits of mask (names: an enum's table). */
static json_t *mask_names(unsigned mask, const char *const *names)
{
	json_t *a = json_array();
	for (int k = 0; names[k]; k++)
		if (mask & 1u << k)
			json_array_append_new(a, json_string(names[k]));
	return a;
}

static json_t *envelope_json(const struct band_envelope *e)
{
	json_t *st = json_array();
	for (const char *p = e->stacks; p && *p;) {
		size_t k = strcspn(p, "|");
		json_array_append_new(st, json_stringn(p, k));
		p += k + (p[k] == '|');
	}
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:[f,f], s:[f,f], s:[f,f]}",
			 "gpu_generations", mask_names(e->gens, band_gen_names),
			 "kinds", mask_names(e->kinds, band_kind_names),
			 "styles", mask_names(e->styles, band_style_names),
			 "precisions", mask_names(e->precs, band_prec_names),
			 "features", mask_names(e->feats, band_feat_names), "stacks", st,
			 "params", e->params[0], e->params[1], "gpus", e->gpus[0], e->gpus[1],
			 "seq_len", e->seq[0], e->seq[1]);
}

/* The bands file's families array (sim/band.h's table of keys). */
static json_t *bands_families(const struct band *rows, int nrows)
{
	json_t *a = json_array();
	for (int k = 0; k < nrows; k++) {
		const struct band *b = &rows[k];
		json_t *o = json_pack("{s:s, s:i, s:f, s:f, s:f, s:i}", "family", b->family, "runs", b->runs,
				      "mean_abs_error_pct", bands_file_pct(b->mean_abs), "max_abs_error_pct", bands_file_pct(b->max_abs),
				      "bias_pct", bands_file_pct(b->bias), "optimistic_runs", b->optimistic_runs);
		json_object_set_new(o, "level_pct", json_real(bands_file_pct(BAND_LEVEL)));
		json_object_set_new(o, "halfwidth_pct", json_real(bands_file_pct(b->halfwidth)));
		json_object_set_new(o, "extrapolated_halfwidth_pct", json_real(bands_file_pct(b->extrap_halfwidth)));
		json_object_set_new(o, "oof_family", json_string(b->oof_family));
		json_object_set_new(o, "oof_mean_abs_pct", json_real(bands_file_pct(b->oof_mean_abs)));
		json_object_set_new(o, "oof_max_abs_pct", json_real(bands_file_pct(b->oof_max_abs)));
		json_object_set_new(o, "oof_bias_pct", json_real(bands_file_pct(b->oof_bias)));
		json_object_set_new(o, "oof_covered_runs", json_integer(b->oof_covered));
		json_object_set_new(o, "envelope", envelope_json(&b->env));
		json_array_append_new(a, o);
	}
	return a;
}

/* --cross-validate: per family, in sample against out of family. */
void bands_file_print_cv(const struct band *rows, int nrows, FILE *f)
{
	fprintf(f, "\ncross-validation (speed error: predicted speed / measured - 1, > 0 optimistic; "
		   "%.0f %% bands, sim/band.h)\n", 100 * BAND_LEVEL);
	fprintf(f, "%-22s %4s | %-28s | %-12s | %-22s %-29s %7s\n", "", "", "in sample", "band",
		"out of family", "", "");
	fprintf(f, "%-22s %4s | %8s %8s %10s | %12s | %-22s %8s %8s %10s %7s\n", "family", "runs", "mean|e|",
		"max|e|", "bias", "c ± w", "banded as", "mean|r|", "max|r|", "signed r", "covered");
	int cov = 0, runs = 0;
	for (int k = 0; k < nrows; k++) {
		const struct band *b = &rows[k];
		char cw[32];
		snprintf(cw, sizeof(cw), "%+.1f ± %.1f", 100 * b->bias, 100 * b->halfwidth);
		fprintf(f, "%-22s %4d | %7.1f%% %7.1f%% %+9.1f%% | %13s | %-22.22s %7.1f%% %7.1f%% %+9.1f%% %3d/%-3d\n",
			b->family, b->runs, 100 * b->mean_abs, 100 * b->max_abs, 100 * b->bias, cw, b->oof_family,
			100 * b->oof_mean_abs, 100 * b->oof_max_abs, 100 * b->oof_bias, b->oof_covered, b->runs);
		if (k == nrows - 1) {
			cov = b->oof_covered;
			runs = b->runs;
		}
	}
	fprintf(f, "out-of-family coverage: %d of %d runs (%.1f %%) inside the band they get with their family "
		   "left out; extrapolated plans get ± %.1f %%\n", cov, runs, runs ? 100.0 * cov / runs : 0.0,
		100 * rows[nrows - 1].extrap_halfwidth);
}

int bands_file_write(const char *path, const struct band *rows, int nrows, json_t *mem, struct diag *d)
{
	json_t *root = json_pack("{s:s, s:s, s:s, s:o}", "schema", "ddlsim.validation-bands", "schema_version", "2.0",
				 "generated", "by `ddlsim validation --write-bands` from the suite's family table, "
				 "cross-validated leaving one family out (sim/band.h; percent, to 0.1; bias: mean "
				 "speed error, positive = optimistic); compiled into ddlsim; test-validation checks "
				 "it against the suite: never edit by hand",
				 "families", bands_families(rows, nrows));
	if (mem)
		json_object_set(root, "memory", mem);
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	size_t len = strlen(text);
	text = xreallocarray(text, len + 2, 1);
	memcpy(text + len, "\n", 2);
	int e = atomic_file_write(path, text, len + 1);
	free(text);
	json_decref(root);
	if (e)
		return diag_err(d, path, "", "cannot write the bands: %s", strerror(-e)), -1;
	return 0;
}

int bands_file_validate(const char *path, struct diag *d)
{
	int before = diag_count(d);
	json_t *root = jload_file(path, d);
	if (!root || jload_schema(root, path, d, "ddlsim.validation-bands", 2, 0)) {
		json_decref(root);
		return -1;
	}
	json_t *fams = json_object_get(root, "families"), *mem = json_object_get(root, "memory"), *row;
	size_t i;
	if (!json_is_array(fams))
		diag_err(d, path, "/families", "expected an array of family rows, got %s",
			 fams ? jload_type_name(fams) : "nothing (the key is missing)");
	json_array_foreach(fams, i, row) {
		char jp[64];
		snprintf(jp, sizeof(jp), "/families/%zu", i);
		if (!json_is_object(row))
			diag_err(d, path, jp, "expected an object (a family's row), got %s", jload_type_name(row));
		else if (!json_is_string(json_object_get(row, "family")))
			diag_err(d, path, strcat(jp, "/family"), "expected the family's name (a string), got %s",
				 json_object_get(row, "family") ? jload_type_name(json_object_get(row, "family"))
								 : "nothing (the key is missing)");
	}
	if (mem && !json_is_object(mem))
		diag_err(d, path, "/memory", "expected an object (the memory families' errors), got %s",
			 jload_type_name(mem));
	json_decref(root);
	return diag_count(d) != before ? -1 : 0;
}

int bands_file_check(const char *path, const struct band *rows, int nrows, json_t *mem, struct diag *d)
{
	json_t *root = jload_file(path, d);
	if (!root || jload_schema(root, path, d, "ddlsim.validation-bands", 2, 0)) {
		json_decref(root);
		return -1;
	}
	json_t *now = bands_families(rows, nrows), *was = json_object_get(root, "families");
	int diff = 0;
	size_t i;
	json_t *row;
	json_array_foreach(now, i, row) {
		const char *name = json_string_value(json_object_get(row, "family"));
		json_t *old = NULL, *o;
		size_t k;
		json_array_foreach(was, k, o)
			if (json_is_string(json_object_get(o, "family")) &&
			    !strcmp(json_string_value(json_object_get(o, "family")), name))
				old = o;
		if (!json_equal(row, old)) {
			char *a = json_dumps(row, JSON_COMPACT | JSON_REAL_PRECISION(6));
			char *b = old ? json_dumps(old, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
			fprintf(stderr, "ddlsim: bands: family '%s': the suite gives %s, %s has %s\n", name, a, path,
				b ? b : "none");
			free(a);
			free(b);
			diff++;
		}
	}
	if (mem && !json_equal(mem, json_object_get(root, "memory"))) {
		char *a = json_dumps(mem, JSON_COMPACT | JSON_REAL_PRECISION(6));
		fprintf(stderr, "ddlsim: bands: memory: the suite gives %s, %s has %s\n", a, path,
			json_object_get(root, "memory") ? "another" : "none");
		free(a);
		diff++;
	}
	if (json_array_size(was) != json_array_size(now)) {
		fprintf(stderr, "ddlsim: bands: %s has %zu families, the suite %zu\n", path, json_array_size(was),
			json_array_size(now));
		diff++;
	}
	if (diff)
		fprintf(stderr, "ddlsim: bands: re-write them: ddlsim validation --write-bands %s (and say why in the commit)\n",
			path);
	json_decref(now);
	json_decref(root);
	return diff ? 1 : 0;
}

