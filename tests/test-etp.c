/* test-etp: expert tensor parallelism, parallel.etp (Megatron-Core's
 * --expert-tensor-parallel-size; sim/build_transformer.c "Expert tensor
 * parallelism", sim/plan_check.c check_etp, sim/search.c).
 *
 * Mixtral 8x7B on 64 H100, tp 2 pp 4 ep 8 (dp 8) with SP and ZeRO-1:
 *   - etp = tp is the default: a report byte-identical to no key;
 *   - the experts' GEMMs at etp 1: the rank's routed copies etp x T / tp k
 *     per expert, the whole FFN (workload.c moe_block); FLOPs unchanged;
 *   - the TP bytes per GPU fall by exactly the expert-TP all-gather and
 *     reduce-scatter of the routed copies (Megatron-Core's alltoall
 *     dispatcher: L x microbatches x 4 calls x (tp - 1) / tp x etp x
 *     T / tp k rank_load h bytes); the MoE half has no SP collective;
 *   - a small case (one node, tp 2, ep 2, dp 4, pp 1) at etp 2 and 1:
 *     closed forms of the TP and EP bytes per GPU;
 *   - the experts' weights per rank double (le / (etp ep)), the ZeRO-1
 *     optimizer state does not (sharded over dp x tp / (etp ep));
 *   - etp 1 folds the expert groups (placement.h): EP on consecutive ranks
 *     of a stage, EDP the stage's ranks of the same index mod ep;
 *   - errors name /parallel/etp; --expert-tensor-parallel-size imports;
 *   - the scenario writer (plan --export) writes etp where it is not tp;
 *   - the screen (search_estimate) stays within 1 % of the simulator
 *     (etp 1: 2.554 s against 2.562 s; etp 2: 2.924 s against 2.911 s);
 *   - shared experts (DeepSeek-V3-class, tp 2 ep 4): their SP
 *     collectives over TP beside the routed copies' expert-TP ones;
 *   - plan's search tries etp 1 and tp by default (search.etp), only tp
 *     with ["tp"]; search.etp's errors name their JSON path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "inputs.h"
#include "model.h"
#include "op.h"
#include "placement.h"
#include "scenario.h"
#include "scenario_write.h"
#include "search.h"
#include "workload.h"

#include "testutil.h"

#define MODEL "models/zoo/mixtral-8x7b.json"
#define TOPO "topologies/dgx-h100.json"

/* The scenario text: tp 2 pp 4 ep 8 (1 for a dense model), `extra`
 * inside "parallel" (", \"etp\": 1" or ""), model rel. */
static char *scenario_text(const char *name, const char *model, const char *extra)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);
	fprintf(f, "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"%s\",\n"
		   " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 8,\n"
		   " \"parallel\": {\"tp\": 2, \"pp\": 4, \"ep\": %d, \"zero\": 1, \"sp\": true%s},\n"
		   " \"training\": {\"seq_len\": 4096, \"global_batch\": 256, \"micro_batch\": 1,"
		   " \"precision\": \"bf16\"}}\n",
		name, src_path(model), src_path(TOPO), strstr(model, "llama") ? 1 : 8, extra);
	fclose(f);
	return t;
}

/* Run the scenario (tp 2 ... plus extra); its report. */
static json_t *run_with(const char *dir, const char *tag, const char *model, const char *extra)
{
	char *text = scenario_text("mx", model, extra), file[64], args[4096], *err = NULL;
	snprintf(file, sizeof(file), "%s.json", tag);
	char *p = write_file(dir, file, text);
	snprintf(args, sizeof(args), "run %s --out %s/%s --quiet", p, dir, tag);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(args, sizeof(args), "%s/%s", dir, tag);
	json_t *r = load_report(args);
	free(err);
	free(p);
	free(text);
	return r;
}

/* The report less what varies from run to run (the simulator's wall time). */
static char *stable_text(json_t *r)
{
	json_t *c = json_deep_copy(r);
	json_t *sim = json_object_get(c, "simulation"), *sc = json_object_get(c, "scenario");
	if (sim) {
		json_object_del(sim, "wall_s");
		json_object_del(sim, "platform_s");
	}
	if (sc)   /* the file's own path */
		json_object_del(sc, "path");
	char *s = json_dumps(c, JSON_SORT_KEYS);
	json_decref(c);
	return s;
}

Test(etp, etp_equal_to_tp_is_byte_identical_to_no_key, .timeout = 120)
{
	char *d = tmp_dir();
	json_t *a = run_with(d, "none", MODEL, ""), *b = run_with(d, "etp2", MODEL, ", \"etp\": 2");
	char *x = stable_text(a), *y = stable_text(b);
	cr_expect_str_eq(x, y);
	free(x);
	free(y);
	json_decref(a);
	json_decref(b);
	free(d);
}

/* The MLP block's forward expert_fc1 of Mixtral at tp 2, ep, etp. */
static struct op expert_fc1_ep(const struct model *m, int etp, int ep, double *rank_load)
{
	struct wl_shape s = { .micro_batch = 1, .seq = 4096, .tp = 2, .sp = true, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH, .cp = 1, .ep = ep, .etp = etp };
	struct moe_balance bal;
	workload_moe_balance(m, &s, &bal);
	*rank_load = bal.rank_load;
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &s, WL_MLP, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	struct op got = { 0 };
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, "expert_fc1"))
			got = l.v[i];
	op_list_finish(&l);
	cr_assert_str_eq(got.name, "expert_fc1");
	return got;
}

static struct op expert_fc1(const struct model *m, int etp, double *rank_load)
{
	return expert_fc1_ep(m, etp, 8, rank_load);
}

/* Mixtral's busiest-rank load at tp 2, ep, etp (the model loaded here). */
static void expert_fc1_of(int etp, int ep, double *rank_load)
{
	struct model *m = load_model(MODEL);
	expert_fc1_ep(m, etp, ep, rank_load);
	model_destroy(m);
}

/* Closed form: E / ep = 1 local expert; its GEMM takes the rank's routed
 * copies T k rank_load x etp / tp rows (T = 4096, k = 2) and 2 ffn / etp
 * columns (SwiGLU's gate and up), k = h; the FLOPs are etp-free. */
Test(etp, expert_gemm_is_whole_at_etp_1)
{
	struct model *m = load_model(MODEL);
	double load1, load2;
	struct op a = expert_fc1(m, 1, &load1), b = expert_fc1(m, 2, &load2);
	double T = 4096, k = 2, h = 4096, f = 14336;
	cr_expect_float_eq(load1, load2, 1e-15);
	cr_expect_eq(a.batch, 1);
	cr_expect_float_eq(a.m, T * k * load1 / 2, 1e-9 * a.m, "etp 1 rows %g", a.m);
	cr_expect_float_eq(a.n, 2 * f, 1e-12, "etp 1 columns %g", a.n);
	cr_expect_float_eq(b.m, T * k * load2, 1e-9 * b.m, "etp 2 rows %g", b.m);
	cr_expect_float_eq(b.n, 2 * f / 2, 1e-12, "etp 2 columns %g", b.n);
	cr_expect_eq(a.k, h);
	cr_expect_float_eq(a.flops, 2 * (T * k * load1 / 2) * (2 * f) * h, 1e-9 * a.flops);
	cr_expect_float_eq(a.flops, b.flops, 1e-9 * a.flops);
	model_destroy(m);
}

/* Closed forms of one iteration at etp 1 against etp 2 (tp). */
Test(etp, etp_1_drops_the_moe_tp_collectives_and_keeps_whole_experts, .timeout = 120)
{
	char *d = tmp_dir();
	json_t *a = run_with(d, "etp2", MODEL, ""), *b = run_with(d, "etp1", MODEL, ", \"etp\": 1");
	double L = 32 / 4, mbs = 256 / (8 * 1);  /* layers of a stage, micro-batches */
	/* the routed copies' all-gather and reduce-scatter over expert TP,
	 * forward and backward, (tp - 1) / tp of N = etp x T / tp k load h x
	 * bf16 each (no SP collective around the MoE half at either etp) */
	double load;
	expert_fc1_of(2, 8, &load);
	double N = 2 * (4096.0 / 2) * 2 * load * 4096 * 2;
	double tp_drop = L * mbs * 4 * 0.5 * N;
	double tpa = jnum(a, "communication/bytes_per_gpu/tp"), tpb = jnum(b, "communication/bytes_per_gpu/tp");
	cr_expect_float_eq(tpa - tpb, tp_drop, 1e-9 * tp_drop, "TP bytes %.0f -> %.0f", tpa, tpb);
	/* experts: le = E x 3 h ffn per layer, le / (etp ep) on a rank */
	double le = 8.0 * 3 * 4096 * 14336;
	json_t *sa = json_array_get(json_object_get(json_object_get(a, "memory"), "per_stage"), 0);
	json_t *sb = json_array_get(json_object_get(json_object_get(b, "memory"), "per_stage"), 0);
	double pa = jnum(sa, "params_local"), pb = jnum(sb, "params_local");
	cr_expect_float_eq(pb - pa, L * le * (1.0 / 8 - 1.0 / 16), 1, "params %.0f -> %.0f", pa, pb);
	cr_expect_float_eq(jnum(sb, "weights_GB") - jnum(sa, "weights_GB"), 2 * (pb - pa) / 1e9, 1e-9);
	/* ZeRO-1: the experts' optimizer state over dp x tp / (etp ep) = 2
	 * ranks instead of dp / ep = 1: the same bytes */
	cr_expect_float_eq(jnum(sb, "optimizer_GB"), jnum(sa, "optimizer_GB"), 1e-12);
	/* their gradients reduce-scattered over that group of 2: (n - 1) / n
	 * of the stage's expert gradients (fp32 main grads) on the DP stream */
	double dpa = jnum(a, "communication/bytes_per_gpu/dp"), dpb = jnum(b, "communication/bytes_per_gpu/dp");
	double eg = L * le / 8 * 4 * 0.5;
	cr_expect_float_eq(dpb - dpa, eg, 1e-9 * eg, "DP bytes %.0f -> %.0f", dpa, dpb);
	json_decref(a);
	json_decref(b);
	free(d);
}

/* The small case: Mixtral on one DGX H100 node, tp 2, ep 2, dp 4, pp 1,
 * SP, seq 4096, micro-batch 1, global batch 8 (2 micro-batches), etp as
 * extra; its report. */
static json_t *run_small(const char *dir, const char *tag, const char *extra)
{
	char text[2048], file[64], args[4096], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"small\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"tp\": 2, \"pp\": 1, \"ep\": 2, \"zero\": 1, \"sp\": true%s},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\"}}\n",
		 src_path(MODEL), src_path(TOPO), extra);
	snprintf(file, sizeof(file), "%s.json", tag);
	char *p = write_file(dir, file, text);
	snprintf(args, sizeof(args), "run %s --out %s/%s --quiet", p, dir, tag);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(args, sizeof(args), "%s/%s", dir, tag);
	json_t *r = load_report(args);
	free(err);
	free(p);
	return r;
}

/* Megatron-Core's alltoall dispatcher (core_v0.10.0 token_dispatcher.py
 * L502-573) per MoE layer and micro-batch, each pass: two all-to-alls of
 * N_ep = T / tp k load h x 2 B over EP, and at etp 2 an all-gather and a
 * reduce-scatter of N_etp = etp x N_ep over expert TP (the TP group);
 * no SP collective of the hidden states around the MoE half. Per GPU a
 * collective of N over n ranks moves (n - 1) / n N. The attention
 * half's SP collectives (5 calls of (tp - 1) / tp x T h x 2 B: forward
 * all-gather and reduce-scatter, backward all-gather, re-gather and
 * reduce-scatter) are in both. */
Test(etp, small_case_bytes_per_collective_follow_megatron, .timeout = 120)
{
	char *d = tmp_dir();
	json_t *a = run_small(d, "etp2", ""), *b = run_small(d, "etp1", ", \"etp\": 1");
	double load;
	expert_fc1_of(2, 2, &load);
	double T = 4096, h = 4096, k = 2, L = 32, mbs = 2;
	double n_ep = T / 2 * k * load * h * 2, n_etp = 2 * n_ep;
	double ep = L * mbs * 4 * 0.5 * n_ep;
	double epa = jnum(a, "communication/bytes_per_gpu/ep"), epb = jnum(b, "communication/bytes_per_gpu/ep");
	cr_expect_float_eq(epa, ep, 1e-9 * ep, "EP bytes etp 2: %.0f, closed form %.0f", epa, ep);
	cr_expect_float_eq(epb, ep, 1e-9 * ep, "EP bytes etp 1: %.0f, closed form %.0f", epb, ep);
	double tpa = jnum(a, "communication/bytes_per_gpu/tp"), tpb = jnum(b, "communication/bytes_per_gpu/tp");
	double etp = L * mbs * 4 * 0.5 * n_etp;
	cr_expect_float_eq(tpa - tpb, etp, 1e-9 * etp, "TP bytes %.0f -> %.0f, expert TP %.0f", tpa, tpb, etp);
	/* etp 1: the attention halves' SP collectives, the embedding's and
	 * head's (forward reduce-scatter and all-gather, backward all-gather
	 * and reduce-scatter: 4 x (tp - 1) / tp x T h x 2 B) and the
	 * vocabulary-parallel cross entropy's three all-reduces of T fp32
	 * (2 (tp - 1) / tp of N each) */
	double act = T * h * 2, attn = L * mbs * 5 * 0.5 * act + mbs * (4 * 0.5 * act + 3 * T * 4);
	cr_expect_float_eq(tpb, attn, 1e-9 * attn, "TP bytes etp 1: %.0f, closed form %.0f", tpb, attn);
	/* tp_comm_overlap (userbuffers) reaches the attention half only: the
	 * MoE half keeps its all-to-alls and expert-TP collectives */
	json_t *c = run_small(d, "ub", "}, \"communication\": {\"tp_comm_overlap\": true");
	double epc = jnum(c, "communication/bytes_per_gpu/ep");
	cr_expect_float_eq(epc, ep, 1e-9 * ep, "EP bytes with tp_comm_overlap: %.0f, closed form %.0f", epc, ep);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	free(d);
}

/* DeepSeek-V3-class on one node, tp 2, ep 4, dp 4 (the small case's
 * shape): per MoE layer and micro-batch the shared experts' SP
 * collectives over TP (5 calls of (tp - 1) / tp x T h x 2 B, as a dense
 * MLP's) and the routed copies' expert-TP all-gather and reduce-scatter
 * (4 calls of (tp - 1) / tp x etp T / tp k load h x 2 B); every one of
 * the 61 layers is MoE (no first_dense_layers). */
Test(etp, shared_experts_keep_their_sp_collectives, .timeout = 120)
{
	char *d = tmp_dir(), text[2048], args[4096], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"dsc\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"tp\": 2, \"pp\": 1, \"ep\": 4, \"zero\": 1, \"sp\": true},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\"}}\n",
		 src_path("models/zoo/deepseek-v3-class.json"), src_path(TOPO));
	char *p = write_file(d, "dsc.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet", p, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(args, sizeof(args), "%s/o", d);
	json_t *r = load_report(args);
	struct model *m = load_model("models/zoo/deepseek-v3-class.json");
	cr_assert_eq(m->moe.first_dense, 0);
	cr_assert_eq(m->moe.shared_experts, 1);
	struct wl_shape s = { .micro_batch = 1, .seq = 4096, .tp = 2, .sp = true, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH, .cp = 1, .ep = 4, .etp = 2 };
	struct moe_balance bal;
	workload_moe_balance(m, &s, &bal);
	double T = 4096, h = 7168, k = 8, mbs = 2, act = T * h * 2;
	double n_etp = 2 * (T / 2) * k * bal.rank_load * h * 2;
	double dense = 61 * 5 * 0.5 * act + 4 * 0.5 * act + 3 * T * 4;
	double moe = 61 * (5 * 0.5 * act + 4 * 0.5 * n_etp);
	double want = mbs * (dense + moe), got = jnum(r, "communication/bytes_per_gpu/tp");
	cr_expect_float_eq(got, want, 1e-9 * want, "TP bytes %.0f, closed form %.0f (load %g)", got, want,
			   bal.rank_load);
	model_destroy(m);
	json_decref(r);
	free(err);
	free(p);
	free(d);
}

/* Run scenario text; exit 3 and every want in stderr. */
static void expect_error(const char *model, const char *extra, const char *const *want)
{
	char *d = tmp_dir(), *text = scenario_text("bad", model, extra), args[2048], *err = NULL;
	char *p = write_file(d, "bad.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet", p, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	for (int i = 0; want[i]; i++)
		cr_expect(strstr(err, want[i]), "want '%s' in: %s", want[i], err);
	free(err);
	free(p);
	free(text);
	free(d);
}

Test(etp, errors_name_parallel_etp)
{
	static const char *const between[] = { "bad.json: /parallel/etp: error: expected 1 or tp = 2 "
					       "(an expert-tensor group inside the TP group is not modelled), got 4",
					       NULL };
	expect_error(MODEL, ", \"etp\": 4", between);
	static const char *const dense[] = { "bad.json: /parallel/etp: error: expert tensor parallelism needs a "
					     "mixture-of-experts model", "'Llama-3 8B' is dense, got etp = 1 (tp = 2)",
					     NULL };
	expect_error("models/zoo/llama3-8b.json", ", \"etp\": 1", dense);
	static const char *const shared[] = { "bad.json: /parallel/etp: error: etp != tp with shared experts",
					      NULL };
	expect_error("models/zoo/deepseek-v3.json", ", \"etp\": 1", shared);
	static const char *const zero[] = { "/parallel/etp: error: must be >= 1, got 0", NULL };
	expect_error(MODEL, ", \"etp\": 0", zero);
}

Test(etp, megatron_import_maps_expert_tensor_parallel_size)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[4096], p[1200];
	char *f = write_file(dir, "launch.sh",
			     "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 "
			     "--max-position-embeddings 512 --micro-batch-size 1 --vocab-size 1000 --bf16 "
			     "--num-experts 8 --moe-token-dispatcher-type alltoall --tensor-model-parallel-size 2 "
			     "--sequence-parallel --expert-model-parallel-size 8 --expert-tensor-parallel-size 1\n");
	snprintf(args, sizeof(args), "import megatron %s -o %s/s.json --topology %s --nodes 2", f, dir,
		 src_path(TOPO));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jnum(s, "parallel/etp"), 1);
	cr_expect_eq(jnum(s, "parallel/ep"), 8);
	cr_expect(strstr(out, "--expert-tensor-parallel-size"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	free(f);
	free(dir);
}

/* The screen's estimate (search_estimate) of the plan at etp 1 and at
 * etp 2 (tp: the routed copies' expert-TP all-gather and reduce-scatter)
 * against the simulator's iteration: within 1 % (etp 2 priced with the
 * hidden states' SP collectives instead is 1.4 % short). */
Test(etp, screen_prices_etp_1_and_tp_within_one_percent, .timeout = 120)
{
	static const char *const extra[] = { ", \"etp\": 1", "" };
	char *d = tmp_dir();
	for (int i = 0; i < 2; i++) {
		char *text = scenario_text("mx", MODEL, extra[i]);
		char *p = write_file(d, "s.json", text);
		json_t *r = run_with(d, i ? "etp2" : "etp1", MODEL, extra[i]);
		double sim = jnum(r, "summary/iteration_time_s");
		struct diag dg;
		diag_init(&dg, stderr);
		struct scenario *sc = scenario_load(p, &dg);
		cr_assert(sc, "%s", diag_text(&dg));
		diag_finish(&dg);
		struct search_cache *c = search_cache_create(sc->in);
		double est = search_estimate(c, &sc->plan, NULL);
		cr_log_info("etp %d: screen %.4f s, simulator %.4f s", i ? 2 : 1, est, sim);
		cr_expect(fabs(est / sim - 1) < 0.01, "etp %d: screen %.4f s, simulator %.4f s", i ? 2 : 1, est,
			  sim);
		search_cache_destroy(c);
		scenario_destroy(sc);
		json_decref(r);
		free(p);
		free(text);
	}
	free(d);
}

/* scenario_write (plan --export's writer): etp where it is not tp, none
 * where it is (the file as the user would have written it). */
Test(etp, the_writer_writes_etp_only_where_it_is_not_tp)
{
	char *d = tmp_dir(), out[1200];
	for (int etp = 1; etp <= 2; etp++) {
		char extra[32];
		snprintf(extra, sizeof(extra), ", \"etp\": %d", etp);
		char *text = scenario_text("mx", MODEL, extra), *p = write_file(d, "s.json", text);
		struct diag dg;
		diag_init(&dg, stderr);
		struct scenario *sc = scenario_load(p, &dg);
		cr_assert(sc, "%s", diag_text(&dg));
		snprintf(out, sizeof(out), "%s/w.json", d);
		struct scenario_write_meta meta = { .name = "w" };
		json_t *w = scenario_write_json(&sc->plan, sc->in, &meta, out, &dg);
		cr_assert(w, "%s", diag_text(&dg));
		json_t *got = json_object_get(json_object_get(w, "parallel"), "etp");
		if (etp == 1)
			cr_expect(got && json_integer_value(got) == 1, "etp 1 not written");
		else
			cr_expect_null(got, "etp = tp written");
		json_decref(w);
		diag_finish(&dg);
		scenario_destroy(sc);
		free(p);
		free(text);
	}
	free(d);
}

#define GOAL "scenarios/goals/mixtral-8x7b-1t-64gpu.json"

/* Of the Mixtral goal's screened plans (search.etp as netp/etp give, -1:
 * the default), a bit mask: 1 an etp-1 plan of tp > 1, 2 an etp-tp plan
 * of tp > 1, 4 an etp that is neither. */
static int screened_etps(int netp, int etp0)
{
	struct diag dg;
	diag_init(&dg, stderr);
	struct goal *g = goal_load(src_path(GOAL), &dg);
	cr_assert(g, "%s", diag_text(&dg));
	diag_finish(&dg);
	if (netp >= 0) {
		g->netp = netp;
		g->etp[0] = etp0;
	}
	g->top = 1000;
	struct search_stats st = { 0 };
	long n;
	struct candidate *c = search_screen(g, 0, &n, &st);
	int seen = 0;
	for (long i = 0; i < n; i++) {
		const struct plan *pl = &c[i].plan;
		int etp = plan_etp(pl);
		if (pl->parallel.tp > 1)
			seen |= etp == 1 ? 1 : etp == pl->parallel.tp ? 2 : 4;
		else if (etp != 1)
			seen |= 4;
	}
	free(c);
	goal_destroy(g);
	return seen;
}

Test(etp, plan_searches_etp_1_and_tp, .timeout = 120)
{
	cr_expect_eq(screened_etps(-1, 0), 3, "default search.etp: mask %x", screened_etps(-1, 0));
	cr_expect_eq(screened_etps(1, 0), 2, "search.etp [\"tp\"]");
	cr_expect_eq(screened_etps(1, 1), 1, "search.etp [1]");
}

/* A goal with "search": search on model; exit 3 and want in stderr. */
static void expect_goal_error(const char *model, const char *search, const char *want)
{
	char *d = tmp_dir(), *err = NULL, text[2048], args[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"bad\",\n"
		 " \"model\": \"%s\", \"seq_len\": 4096, \"train_tokens\": 1e11,\n"
		 " \"global_batch_tokens\": {\"min\": 1000000, \"max\": 4194304},\n"
		 " \"clusters\": [{\"topology\": \"%s\", \"nodes\": [8]}],\n"
		 " \"search\": %s}\n",
		 src_path(model), src_path(TOPO), search);
	char *g = write_file(d, "bad.json", text);
	snprintf(args, sizeof(args), "plan %s -j 2 --quiet --out %s/o", g, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, want), "want '%s' in: %s", want, err);
	free(g);
	free(err);
	free(d);
}

Test(etp, search_etp_errors_name_their_path)
{
	expect_goal_error(MODEL, "{\"etp\": [1, 2]}",
			  "bad.json: /search/etp: error: /1: expected 1 or \"tp\" (the expert-tensor-parallel "
			  "degrees modelled), got another integer");
	expect_goal_error("models/zoo/llama3-8b.json", "{\"etp\": [\"tp\", 1]}",
			  "bad.json: /search/etp: error: /1: expert tensor parallelism needs a mixture-of-experts "
			  "model");
}

/* tp 2 cp 1 ep 8 dp 8 pp 4 (64 ranks, 16 a stage): etp 2 keeps EP inside
 * DP (rank 0's EP group 0, 2, .., 14); etp 1 folds it onto ranks 0..7
 * (one DGX node) and the EDP group to 0, 8; stage 1 is offset by 16. */
Test(etp, etp_1_folds_the_expert_groups)
{
	struct placement pl;
	int g[64];
	cr_assert_eq(placement_init_ep(&pl, 2, 1, 8, 8, 4, NULL), 0);
	cr_assert_eq(placement_set_etp(&pl, 2), 0);
	cr_assert_eq(placement_group(&pl, GROUP_EP, 0, g), 8);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(g[i], 2 * i, "etp 2: EP member %d is %d", i, g[i]);
	cr_assert_eq(placement_set_etp(&pl, 1), 0);
	cr_assert_eq(placement_group_size(&pl, GROUP_EP), 8);
	cr_assert_eq(placement_group(&pl, GROUP_EP, 5, g), 8);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(g[i], i, "etp 1: EP member %d is %d", i, g[i]);
	cr_assert_eq(placement_group_size(&pl, GROUP_EDP), 2);
	cr_assert_eq(placement_group(&pl, GROUP_EDP, 16 + 3, g), 2);
	cr_expect_eq(g[0], 16 + 3);
	cr_expect_eq(g[1], 16 + 11);
	/* dense groups unchanged */
	cr_assert_eq(placement_group(&pl, GROUP_TP, 5, g), 2);
	cr_expect_eq(g[0], 4);
	cr_expect_eq(g[1], 5);
	/* pp not outermost: a stage is not a block of ranks */
	cr_assert_eq(placement_init_ep(&pl, 2, 1, 8, 8, 4, "tp,pp,dp"), 0);
	cr_expect_eq(placement_set_etp(&pl, 1), -1);
	static const char *const order[] = { "bad.json: /parallel/order: error: etp = 1 needs pp outermost, "
					     "got \"tp,pp,dp\"", NULL };
	expect_error(MODEL, ", \"etp\": 1, \"order\": \"tp,pp,dp\"", order);
}
