/* test-dp-path: each framework's data-parallel path, built by the
 * transformer builder and held against closed forms: ZeRO-3's gathers per
 * preset (DeepSpeed per tensor with its reuse distance, FSDP per unit, the
 * replay paying each collective), and Megatron-Core's distributed
 * optimizer (the per-bucket parameter all-gathers gating the first
 * forward, each bucket's NaN check and 1/dp scaling, the whole gradient
 * buffer zeroed). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "framework.h"
#include "gpu.h"
#include "inputs.h"
#include "model.h"
#include "precision.h"
#include "simulate.h"
#include "testutil.h"

/* ---- ZeRO-3 granularity per framework preset ------------------------ */


static int framework_id(const char *name)
{
	bool known;
	const struct framework *f = framework_find(name, &known);
	cr_assert_not_null(f, "%s", name);
	return framework_index(f);
}

/* ZeRO-3 collectives of stage 0's program: all-gathers on the PARAM
 * stream, reductions on the DP stream; every one carries the preset's
 * launch cost. */
static void zero3_counts(struct inputs *in, const struct plan *pl, int *ag, int *rs,
			 double *ag_bytes, double launch_s)
{
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, pl, 0, &p, NULL), 0);
	*ag = *rs = 0;
	*ag_bytes = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->kind != TASK_COLL || (t->stream != STREAM_PARAM && t->stream != STREAM_DP))
			continue;
		cr_assert_float_eq(t->launch_s, launch_s, 1e-15, "task %d launch %g", i, t->launch_s);
		if (t->stream == STREAM_PARAM) {
			cr_assert_eq(t->op, COLL_ALLGATHER);
			*ag += t->count;
			*ag_bytes += t->bytes * t->count;
		} else
			*rs += t->count;
	}
	program_finish(&p);
}

static struct inputs *wide_inputs(const char *dir)
{
	/* h 4096, MHA, GELU, ffn 16384, 4 layers: qkv 3h^2, out h^2, up and
	 * down 4h^2 each = 201,326,592 weight elements per layer */
	char model[1024];
	snprintf(model, sizeof(model),
		 "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"wide\",\"source\":\"test\","
		 "\"architecture\":\"decoder_transformer\",\"layers\":4,\"hidden_size\":4096,\"heads\":32,"
		 "\"ffn_size\":16384,\"vocab_size\":32000}");
	char *path = write_file(dir, "wide.json", model);
	struct inputs *in = load_inputs(path, "topologies/dgx-a100.json");
	free(path);
	return in;
}

/* The wide model on `nodes` DGX A100 (dp 8 per node) at ZeRO stage z,
 * sequence 1024, global batch mbs micro-batches per rank; framework fw
 * (NULL: none); both data-parallel overlaps on where overlap. */
static struct plan dp_plan(struct inputs *in, const char *fw, enum zero_stage z, int nodes, long mbs,
			   bool overlap)
{
	struct plan pl;
	plan_init(&pl);
	pl.nodes = nodes;
	pl.parallel.zero = z;
	pl.given |= PLAN_GIVEN_ZERO;
	if (overlap) {
		pl.communication.overlap_grad_reduce = true;
		pl.communication.overlap_param_gather = true;
		pl.given |= PLAN_GIVEN_OVERLAP_GRAD | PLAN_GIVEN_OVERLAP_PARAM;
	}
	pl.training.seq = 1024;
	pl.training.global_batch = mbs * 8 * nodes;
	pl.framework = fw ? framework_id(fw) : -1;
	plan_resolve(&pl, in);
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(plan_check(&pl, in, "t", &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	return pl;
}

static struct plan zero3_plan(struct inputs *in, const char *fw, int nodes, long mbs)
{
	return dp_plan(in, fw, ZERO_3, nodes, mbs, false);
}

/* DeepSpeed ZeRO-3: one all-gather per weight tensor (k = 4 here), each
 * the tensor's 16-bit elements; a layer used again within 1e9 gathered
 * elements (stage3_max_reuse_distance) stays. With 4 layers of 201.3M
 * elements and 2 micro-batches: forward 0 gathers all 4 layers (16);
 * backward 0 keeps layers 3, 2, 1 (0, 402M, 805M elements since their
 * last use) and gathers layer 0 (1208M); forward 1 keeps 0..2, gathers 3;
 * backward 1 keeps 3..1, gathers 0: 16 + 3 x 4 = 28 all-gathers. */
Test(dp_path, deepspeed_zero3_gathers_every_tensor_and_keeps_reused_layers)
{
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	struct plan pl = zero3_plan(in, "deepspeed", 1, 2);
	int ag, rs;
	double bytes;
	zero3_counts(in, &pl, &ag, &rs, &bytes, 75.7e-6);
	cr_assert_eq(ag, 28, "%d all-gathers", ag);
	double h = 4096, layer = 3 * h * h + h * h + 2 * 4 * h * h;
	cr_assert_float_eq(bytes, 7 * layer * 2, 1e-6 * bytes, "%.17g", bytes);
	inputs_destroy(in);
}

/* FSDP2 / TorchTitan: one all-gather per unit (layer) in forward and again
 * in backward (reshard after forward), per micro-batch; without a preset
 * the same granularity with no launch cost. The torchtitan stack (FSDP2's
 * copies, stack.h fsdp2_copies) also gathers its root unit, the
 * embedding, final norm and output layer, once per micro-batch before
 * the forward: 3 x (2 x 4 + 1). */
Test(dp_path, fsdp_gathers_per_unit_twice_per_microbatch)
{
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	const char *fws[] = { "fsdp2", "torchtitan", NULL };
	for (int i = 0; i < 3; i++) {
		struct plan pl = zero3_plan(in, fws[i], 1, 3);
		int ag, rs;
		double bytes;
		zero3_counts(in, &pl, &ag, &rs, &bytes, fws[i] ? 75.7e-6 : 0);
		int root = fws[i] && !strcmp(fws[i], "torchtitan");
		cr_assert_eq(ag, 3 * (2 * 4 + root), "%s: %d all-gathers", fws[i] ? fws[i] : "none", ag);
	}
	inputs_destroy(in);
}

/* The replay pays every call: per rank, the PARAM stream is busy at least
 * the gathers' count times (launch cost + the ring all-gather over P
 * ranks alone: NCCL's latency for its P - 1 steps plus the bytes), and at
 * most twice the transfer where backward's reduce-scatters share the
 * links; the report counts them. One micro-batch, FSDP2, P = 8 and 16. */
Test(dp_path, zero3_replay_pays_each_collective_and_its_steps)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	for (int nodes = 1; nodes <= 2; nodes++) {
		struct plan pl = zero3_plan(in, "fsdp2", nodes, 1);
		snprintf(pl.communication.coll_algo, sizeof(pl.communication.coll_algo), "ring");
		struct result r;
		struct diag dg;
		diag_init(&dg, stderr);
		pid_t pid = fork();
		if (pid == 0) {   /* one SimGrid simulation per process */
			int rc = simulate_run(in, &pl, &r, &dg);
			if (rc)
				_exit(2);
			const struct engine_rank_stats *st = &r.eng->rank[0];
			int P = 8 * nodes, ranks[16];
			for (int i = 0; i < P; i++)
				ranks[i] = i;
			double h = 4096, bytes = (3 * h * h + h * h + 2 * 4 * h * h) * 2;
			struct coll_plan *cp = coll_plan_create(inputs_topology(in), "ring", COLL_ALLGATHER,
								ranks, P, bytes);
			int n = st->collectives[CAT_PARAM_COMM];
			double want = n * (75.7e-6 + cp->ideal_time_s);
			double busy = st->comm_s[CAT_PARAM_COMM];
			bool ok = n == 2 * 4 && cp->steps == P - 1 && busy >= want * (1 - 1e-9) &&
				  busy <= n * (75.7e-6 + 2 * cp->ideal_time_s);
			if (!ok)
				fprintf(stderr, "P %d: %d gathers, %d steps, %.9g s vs %.9g s\n", P, n,
					cp->steps, st->comm_s[CAT_PARAM_COMM], want);
			coll_plan_destroy(cp);
			_exit(ok ? 0 : 1);
		}
		int status;
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nodes %d", nodes);
		diag_finish(&dg);
	}
	inputs_destroy(in);
}

/* ---- Megatron-Core's distributed optimizer (ZeRO-1) ----------------- */


/* The wide model under ZeRO-1 on one DGX A100 (dp 8), two micro-batches,
 * both data-parallel overlaps on; framework fw (NULL: none). */
static struct plan zero1_plan(struct inputs *in, const char *fw)
{
	return dp_plan(in, fw, ZERO_1, 1, 2, true);
}

static bool depends_on(const struct program *p, int task, int on)
{
	const struct task *t = &p->t[task];
	for (int i = 0; i < t->ndeps; i++)
		if (p->deps[t->dep0 + i] == on)
			return true;
	return false;
}

/* overlap_param_gather as Megatron-Core runs it (distrib_optimizer.py at
 * f2e5db40): one all-gather per gradient bucket of max(40e6, 1e6 dp) =
 * 40e6 parameters, n = ceil(P / 40e6) of them back to back on the PARAM
 * stream, P x 2 / n bf16 bytes each; the first forward's embedding, each
 * layer and the head wait for the all-gather of the bucket their
 * parameters end in, bucket ceil(n f) - 1 with f the share of the
 * stage's parameters up to their end (embedding E, layers L each);
 * the second micro-batch waits for none. */
Test(dp_path, overlapped_param_gather_gates_each_layer_of_the_first_forward)
{
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	const struct model *m = inputs_model(in);
	struct plan pl = zero1_plan(in, "megatron-core");
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, &pl, 0, &p, NULL), 0);
	double E = model_embedding_params(m), L = model_layer_params(m);
	double P = E + 4 * L + model_head_params(m);
	int n = (int)ceil(P / 40e6), ag[64], nag = 0, fwd[2][6], nf[2] = { 0, 0 };
	cr_assert_lt(n, 64);
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->stream == STREAM_PARAM) {
			cr_assert_eq(t->op, COLL_ALLGATHER);
			cr_assert_eq(t->count, 1);
			cr_assert_float_eq(t->bytes, P * 2 / n, 1e-9 * t->bytes, "%.17g", t->bytes);
			ag[nag++] = i;
		} else if (t->stream == STREAM_COMPUTE && t->cat == CAT_FORWARD && t->mb >= 0 &&
			   t->mb < 2 && nf[t->mb] < 6)
			fwd[t->mb][nf[t->mb]++] = i;
	}
	cr_assert_eq(nag, n, "%d all-gathers, want %d", nag, n);
	cr_assert_eq(nf[0], 6);
	double end[6] = { E, E + L, E + 2 * L, E + 3 * L, E + 4 * L, P };
	for (int j = 0; j < 6; j++) {
		int want = (int)ceil(end[j] / P * n - 1e-9) - 1;
		cr_assert(depends_on(&p, fwd[0][j], ag[want]), "forward piece %d: bucket %d", j, want);
		for (int k = 0; k < n; k++)
			cr_assert(k == want || !depends_on(&p, fwd[0][j], ag[k]), "piece %d waits for %d", j, k);
		for (int k = 0; k < n; k++)
			cr_assert(!depends_on(&p, fwd[1][j], ag[k]), "micro-batch 1 piece %d", j);
	}
	program_finish(&p);
	inputs_destroy(in);
}

/* Before each bucket's reduce-scatter the data-parallel wrapper runs, on
 * the compute stream, the NaN check's norm (reads the bucket's B bytes)
 * and, without average_in_collective, the 1/dp scaling (reads and writes
 * them): Megatron-Core 3 B in 2 kernels, NeMo (averaging in the
 * collective) B in 1; without a framework nothing. Memory-bound at the
 * GPU's element-wise rate: t = k B / (bw mem_max) + kernels x launch. */
Test(dp_path, megatron_ddp_checks_and_scales_each_bucket_before_reducing)
{
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	const struct gpu_spec *g = &inputs_topology(in)->gpu;
	const char *fws[] = { "megatron-core", "nemo", NULL };
	int passes[] = { 3, 1, 0 }, kernels[] = { 2, 1, 0 };
	for (int f = 0; f < 3; f++) {
		struct plan pl = zero1_plan(in, fws[f]);
		struct program p;
		program_init(&p);
		cr_assert_eq(simulate_build_program(in, &pl, 0, &p, NULL), 0);
		int nrs = 0;
		for (int i = 0; i < p.n; i++) {
			const struct task *t = &p.t[i];
			if (t->stream != STREAM_DP || t->op != COLL_REDUCE_SCATTER)
				continue;
			nrs++;
			double want = passes[f] * t->bytes / (g->hbm_bw_Bps * g->mem_eff_max) +
				      kernels[f] * g->kernel_launch_s;
			int found = 0;
			for (int k = 0; k < t->ndeps; k++) {
				const struct task *c = &p.t[p.deps[t->dep0 + k]];
				if (c->stream == STREAM_COMPUTE && c->mb < 0 &&
				    fabs(c->time_s - want) <= 1e-12 * want)
					found++;
			}
			cr_assert_eq(found, passes[f] ? 1 : 0, "%s: reduce-scatter %d", fws[f] ? fws[f] : "none", i);
		}
		cr_assert_gt(nrs, 1);
		program_finish(&p);
	}
	inputs_destroy(in);
}

/* Megatron-Core's step zeroes its whole contiguous gradient buffer (P
 * fp32 main gradients, not the optimizer's 1/dp shard) beside Adam on the
 * shard: t = (P/8) (step bytes + 4) / (bw mem_max) + 3 launches +
 * 4 P / (bw mem_max) + 1 launch. */
Test(dp_path, megatron_step_zeroes_the_whole_gradient_buffer)
{
	char *d = tmp_dir();
	struct inputs *in = wide_inputs(d);
	const struct model *m = inputs_model(in);
	const struct gpu_spec *g = &inputs_topology(in)->gpu;
	struct plan pl = zero1_plan(in, "megatron-core");
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, &pl, 0, &p, NULL), 0);
	double P = model_embedding_params(m) + 4 * model_layer_params(m) + model_head_params(m);
	struct precision pr;
	precision_init(&pr, pl.training.precision, false);
	double bw = g->hbm_bw_Bps * g->mem_eff_max;
	double want = P / 8 * (pr.optimizer_step_bytes + 4) / bw + 3 * g->kernel_launch_s +
		      4 * P / bw + g->kernel_launch_s;
	int nopt = 0;
	for (int i = 0; i < p.n; i++)
		if (p.t[i].cat == CAT_OPTIMIZER && p.t[i].stream == STREAM_COMPUTE) {
			cr_assert_float_eq(p.t[i].time_s, want, 1e-12 * want, "%.17g vs %.17g",
					   p.t[i].time_s, want);
			nopt++;
		}
	cr_assert_eq(nopt, 1);
	program_finish(&p);
	inputs_destroy(in);
}
