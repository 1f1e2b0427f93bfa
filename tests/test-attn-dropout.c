/* test-attn-dropout: dropout on the attention probabilities inside a fused
 * kernel (model.h dropout, attention.h attention_dropout_ratio): a flash
 * core with dropout costs its backend's measured ratio more than without
 * (validation/kernels/attn-dropout.csv), forward and backward, on the
 * roofline and on a measured profile; FlashAttention-3, which has no
 * dropout, gives way to FlashAttention-2; and the workload marks its
 * attention ops with the model's dropout. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "diag.h"
#include "model.h"
#include "testutil.h"
#include "topology.h"
#include "workload.h"

/* A flash op of bh heads x s tokens, d 128, bf16, on backend be. */
static struct op flash_op(enum attn_backend be, bool bwd, bool drop, double bh, double s)
{
	struct op op = { .kind = OP_ATTN, .pass = bwd ? PASS_BWD : PASS_FWD,
			 .dtype = DTYPE_BF16, .batch = bh, .m = s, .n = s, .k = 128,
			 .causal = true, .backend = { be, be }, .dropout = drop };
	op.flops = attention_flops(ATTN_FLASH, true, bwd, bh, s, 128);
	return op;
}

/* The figures are the sources' (attention.h): FA1 on an A100 from Dao et
 * al. 2022 Tables 15-19, FA2 on a GB200 (TE PR #3313), cuDNN on an H200
 * and a B300 (TE issue #3312). */
Test(attn_dropout, ratios_are_the_measured_ones)
{
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_FA1, 8.0, false), 1.233, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_FA1, 9.0, true), 1.230, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_FA2, 8.0, false), 0.728 / 0.695, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_FA2, 10.0, true), 0.728 / 0.695, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_CUDNN, 9.0, false), 0.614 / 0.594, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_CUDNN, 10.0, true), 0.525 / 0.480, 1e-12);
	/* best: cuDNN's from 9 on, FA2's below */
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_BEST, 9.0, true), 0.614 / 0.594, 1e-12);
	cr_expect_float_eq(attention_dropout_ratio(ATTN_BE_BEST, 8.0, true), 0.728 / 0.695, 1e-12);
}

/* The roofline: compute time x the ratio, launch unchanged, for each
 * backend a stack runs on an H100 and an A100, forward and backward. */
Test(attn_dropout, flash_with_dropout_costs_the_measured_ratio_more)
{
	const char *topo[] = { "topologies/dgx-h100-fattree2-2to1.json", "topologies/dgx-a100.json" };
	const enum attn_backend bes[] = { ATTN_BE_CUDNN, ATTN_BE_FA2, ATTN_BE_FA1 };

	for (int t = 0; t < 2; t++) {
		struct topology *tp = load_topology(topo[t]);
		const struct gpu_spec *g = &tp->gpu;
		for (size_t b = 0; b < sizeof(bes) / sizeof(bes[0]); b++)
			for (int bwd = 0; bwd < 2; bwd++) {
				struct op off = flash_op(bes[b], bwd, false, 64, 4096);
				struct op on = flash_op(bes[b], bwd, true, 64, 4096);
				double t0 = cost_roofline_time_isolated(g, &off) - g->kernel_launch_s;
				double t1 = cost_roofline_time_isolated(g, &on) - g->kernel_launch_s;
				double r = attention_dropout_ratio(bes[b], g->compute_capability, bwd);
				cr_expect(r > 1.03, "%s ratio %g", attn_backend_names[bes[b]], r);
				cr_expect_float_eq(t1, t0 * r, 1e-9 * t1, "%s %s %s: %g vs %g x %g",
						   topo[t], attn_backend_names[bes[b]],
						   bwd ? "bwd" : "fwd", t1, t0, r);
			}
		topology_destroy(tp);
	}
	/* on the H100, cuDNN's backward with dropout: 3.37 % more */
	struct topology *tp = load_topology(topo[0]);
	struct op off = flash_op(ATTN_BE_CUDNN, true, false, 64, 4096);
	struct op on = flash_op(ATTN_BE_CUDNN, true, true, 64, 4096);
	double l = tp->gpu.kernel_launch_s;
	double pct = ((cost_roofline_time_isolated(&tp->gpu, &on) - l) /
		      (cost_roofline_time_isolated(&tp->gpu, &off) - l) - 1) * 100;
	cr_expect(fabs(pct - 3.367) < 0.01, "cuDNN bwd +%.3f %%", pct);
	topology_destroy(tp);
}

/* A GEMM or an unfused core pays nothing: the ratio is the fused kernel's. */
Test(attn_dropout, only_the_fused_kernel_pays)
{
	struct topology *tp = load_topology("topologies/dgx-h100-fattree2-2to1.json");
	struct op g = { .kind = OP_GEMM, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 1,
			.m = 4096, .n = 4096, .k = 4096, .dropout = true };
	g.flops = 2.0 * 4096 * 4096 * 4096;
	struct op g0 = g;
	g0.dropout = false;
	cr_expect_eq(cost_roofline_time_isolated(&tp->gpu, &g),
		     cost_roofline_time_isolated(&tp->gpu, &g0));
	topology_destroy(tp);
}

/* FlashAttention-3 has no dropout: with dropout the core runs FA2 (TE
 * v1.11 "Disabling FlashAttention 3 for dropout"); without, FA3 stays. */
Test(attn_dropout, fa3_gives_way_to_fa2)
{
	cr_expect_eq(attention_backend_dropout(ATTN_BE_FA3, true), ATTN_BE_FA2);
	cr_expect_eq(attention_backend_dropout(ATTN_BE_FA3, false), ATTN_BE_FA3);
	cr_expect_eq(attention_backend_dropout(ATTN_BE_CUDNN, true), ATTN_BE_CUDNN);
	cr_expect_eq(attention_backend_dropout(ATTN_BE_FA2, true), ATTN_BE_FA2);
	cr_expect_eq(attention_backend_dropout(ATTN_BE_FA1, true), ATTN_BE_FA1);
	cr_expect_eq(attention_backend_dropout(ATTN_BE_BEST, true), ATTN_BE_BEST);
}

static void attn_ops(struct model *m, enum attn_backend hopper, enum op_pass pass,
		     struct op_list *l)
{
	struct wl_shape shp = { .micro_batch = 1, .seq = 2048, .tp = 1, .dtype = DTYPE_BF16,
				.attention = ATTN_FLASH, .cp = 1, .ep = 1,
				.attn_backend = { ATTN_BE_FA2, hopper } };
	op_list_init(l);
	cr_assert_eq(workload_block(m, &shp, WL_ATTN, pass, RECOMPUTE_NONE, l), 0);
}

/* The workload carries the model's dropout onto its flash ops and swaps
 * FA3 for FA2 there; a model without dropout keeps FA3. */
Test(attn_dropout, workload_marks_the_core_and_swaps_fa3)
{
	struct model *m = load_model("models/zoo/megatron-core/gpt-7.1b.json");
	cr_assert(m->dropout, "the Megatron-Core zoo model has dropout 0.1");
	for (int bwd = 0; bwd < 2; bwd++) {
		struct op_list l;
		int n = 0;
		attn_ops(m, ATTN_BE_FA3, bwd ? PASS_BWD : PASS_FWD, &l);
		for (int i = 0; i < l.n; i++) {
			if (l.v[i].kind != OP_ATTN)
				continue;
			n++;
			cr_expect(l.v[i].dropout, "%s", l.v[i].name);
			cr_expect_eq(l.v[i].backend[1], ATTN_BE_FA2, "%s", l.v[i].name);
			cr_expect_eq(l.v[i].backend[0], ATTN_BE_FA2, "%s", l.v[i].name);
		}
		cr_expect_eq(n, 1);
		op_list_finish(&l);
	}
	model_destroy(m);

	m = load_model("models/zoo/llama2-7b.json");
	cr_assert(!m->dropout);
	struct op_list l;
	attn_ops(m, ATTN_BE_FA3, PASS_FWD, &l);
	for (int i = 0; i < l.n; i++)
		if (l.v[i].kind == OP_ATTN) {
			cr_expect(!l.v[i].dropout);
			cr_expect_eq(l.v[i].backend[1], ATTN_BE_FA3);
		}
	op_list_finish(&l);
	model_destroy(m);
}

/* --- validation/kernels/attn-dropout.csv ---------------------------------- */

#define NCOL 16

static int split_csv(char *line, char **f)
{
	int n = 0;
	for (char *p = line; n < NCOL; n++) {
		f[n] = p;
		char *c = strchr(p, ',');
		if (!c)
			return n + 1;
		*c = 0;
		p = c + 1;
	}
	return n;
}

static int col_of(char **hdr, int nh, const char *name)
{
	for (int i = 0; i < nh; i++)
		if (!strcmp(hdr[i], name))
			return i;
	cr_assert_fail("attn-dropout.csv: no column '%s'", name);
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Every used row's measured ratio (time_drop_us / time_nodrop_us) is
 * what ddlsim prices for its backend on its GPU preset's compute
 * capability: per backend, pass and GPU the median of the rows (FA1: seven
 * lengths a pass), fwd_bwd rows against both passes' ratios. */
Test(attn_dropout, ratios_match_the_kernel_measurements)
{
	FILE *fp = fopen(src_path("validation/kernels/attn-dropout.csv"), "r");
	cr_assert(fp, "cannot open validation/kernels/attn-dropout.csv");
	char line[1024], hline[1024], *hdr[NCOL], *f[NCOL];
	cr_assert(fgets(hline, sizeof(hline), fp));
	hline[strcspn(hline, "\r\n")] = 0;
	int nh = split_csv(hline, hdr);
	int cg = col_of(hdr, nh, "gpu"), cb = col_of(hdr, nh, "backend"),
	    cp = col_of(hdr, nh, "pass"), c0 = col_of(hdr, nh, "time_nodrop_us"),
	    c1 = col_of(hdr, nh, "time_drop_us"), cu = col_of(hdr, nh, "used");
	struct grp { char key[96]; double cc; int be; int pass; double r[16]; int n; } g[16];
	int ng = 0, used = 0;

	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\r\n")] = 0;
		cr_assert_eq(split_csv(line, f), nh, "row '%s'", line);
		if (strcmp(f[cu], "1"))
			continue;
		used++;
		int be = -1;
		for (int i = 0; attn_backend_names[i]; i++)
			if (!strcmp(attn_backend_names[i], f[cb]))
				be = i;
		cr_assert_geq(be, 0, "backend '%s'", f[cb]);
		char rel[128], key[96];
		snprintf(rel, sizeof(rel), "gpus/%s.json", f[cg]);
		struct gpu_spec gs;
		struct diag d;
		diag_init(&d, NULL);
		int rc = topology_gpu_preset_load(src_path(rel), &gs, &d);
		diag_finish(&d);
		cr_assert_eq(rc, 0, "%s", rel);
		snprintf(key, sizeof(key), "%s/%s/%s", f[cg], f[cb], f[cp]);
		int k = 0;
		while (k < ng && strcmp(g[k].key, key))
			k++;
		if (k == ng) {
			cr_assert_lt(ng, 16);
			snprintf(g[ng].key, sizeof(g[ng].key), "%s", key);
			g[ng].cc = gs.compute_capability;
			g[ng].be = be;
			g[ng].pass = !strcmp(f[cp], "fwd") ? 0 : !strcmp(f[cp], "bwd") ? 1 : 2;
			g[ng++].n = 0;
		}
		cr_assert_lt(g[k].n, 16);
		g[k].r[g[k].n++] = atof(f[c1]) / atof(f[c0]);
	}
	fclose(fp);
	cr_expect_eq(used, 17, "used rows: %d", used);
	cr_expect_eq(ng, 5, "groups: %d", ng);
	for (int k = 0; k < ng; k++) {
		qsort(g[k].r, (size_t)g[k].n, sizeof(double), cmp_double);
		double med = g[k].n % 2 ? g[k].r[g[k].n / 2]
					: (g[k].r[g[k].n / 2 - 1] + g[k].r[g[k].n / 2]) / 2;
		for (int bwd = 0; bwd < 2; bwd++) {
			if (g[k].pass != 2 && g[k].pass != bwd)
				continue;
			double r = attention_dropout_ratio((enum attn_backend)g[k].be, g[k].cc, bwd);
			cr_expect(fabs(r / med - 1) < 5e-4, "%s (%s): ddlsim %.4f, measured median %.4f",
				  g[k].key, bwd ? "bwd" : "fwd", r, med);
		}
	}
}

/* A scenario that names fa3 for a model with dropout runs FA2: the report
 * says so, the plan check warns, and the step costs what the same
 * scenario naming fa2 costs. */
static json_t *run_backend(const char *model, const char *be)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"tp\": 2, \"dp\": 4, \"sp\": true},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"micro_batch\": 1,\n"
		 "   \"precision\": \"bf16\"},\n"
		 " \"compute\": {\"attention_backend\": \"%s\"}}\n",
		 src_path(model), src_path("topologies/dgx-h100.json"), be);
	return report_of_text(text);
}

Test(attn_dropout, a_named_fa3_runs_fa2_under_dropout)
{
	json_t *r3 = run_backend("models/zoo/megatron-core/gpt-7.1b.json", "fa3");
	json_t *r2 = run_backend("models/zoo/megatron-core/gpt-7.1b.json", "fa2");
	cr_expect_str_eq(jstr_at(r3, "scenario/kernels/attention_backend"), "fa2");
	cr_expect_float_eq(jnum(r3, "summary/iteration_time_s"),
			   jnum(r2, "summary/iteration_time_s"), 1e-12);
	json_decref(r3);
	json_decref(r2);
	/* without dropout FA3 stays */
	json_t *l = run_backend("models/zoo/llama2-7b.json", "fa3");
	cr_expect_str_eq(jstr_at(l, "scenario/kernels/attention_backend"), "fa3");
	json_decref(l);

	char *dir = tmp_dir(), *err = NULL, args[4096];
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"tp\": 2, \"dp\": 4},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"micro_batch\": 1,\n"
		 "   \"precision\": \"bf16\"},\n"
		 " \"compute\": {\"attention_backend\": \"fa3\"}}\n",
		 src_path("models/zoo/megatron-core/gpt-7.1b.json"),
		 src_path("topologies/dgx-h100.json"));
	char *s = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run '%s' -o '%s/out'", s, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err ? err : "");
	cr_expect(err && strstr(err, "/compute/attention_backend: warning: fa3 has no dropout"),
		  "%s", err ? err : "");
	free(err);
	free(s);
	free(dir);
}
