/* test-zero3: DeepSpeed ZeRO-3's traffic per GPU, worked by hand, against
 * the simulator, and what that traffic costs at 1,024 GPUs.
 *
 * DeepSpeed 0.15 (models/framework.c cites deepspeed/runtime/zero/
 * parameter_offload.py L439-480 and zero/config.py): every micro-batch
 * all-gathers each submodule's 16-bit weight when the submodule runs, in
 * forward and again in backward, and releases it after use, unless the
 * weight is used again within stage3_max_reuse_distance (1e9) gathered
 * elements; tensors below stage3_param_persistence_threshold (1e5: the
 * norms) stay whole. Gradients are reduce-scattered every micro-batch
 * (a ZeRO-3 rank keeps only its shard).
 *
 * Llama 2 70B has 80 layers of W = 2 h^2 + 2 h kv + 3 h f = 0.856 G
 * weight elements in its 7 Linear modules (h 8192, kv 1024, f 28672), so
 * only a layer used last is within the reuse distance of its next use
 * (two layers apart already take 2 W = 1.7e9 > 1e9 elements): the last
 * layer is not gathered again at the start of backward, and the first
 * layer is not gathered again at the start of the next micro-batch's
 * forward. Over M micro-batches that is M L - (M - 1) forward gathers
 * and M (L - 1) backward ones, 2 M L - 2 M + 1 layers of W elements.
 * A ring all-gather of S bytes over d ranks sends S (d - 1) / d from
 * each rank, as does a reduce-scatter of the gradients, M times the
 * whole model's P parameters (16-bit gradients here). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#define H 8192.0
#define KV 1024.0
#define F 28672.0
#define L 80.0
#define V 32000.0

static json_t *run_zero3(int nodes, int dp, int global_batch, int seq)
{
	char *dir = tmp_dir(), text[2048], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\","
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": %d, \"framework\": \"deepspeed\","
		 " \"parallel\": { \"dp\": %d, \"zero\": 3 },"
		 " \"training\": { \"seq_len\": %d, \"global_batch\": %d, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\", \"grad_reduce_dtype\": \"bf16\" } }\n",
		 src_path("models/zoo/llama2-70b.json"), src_path("topologies/dgx-h100.json"), nodes,
		 dp, seq, global_batch);
	char *path = write_file(dir, "z3.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err ? err : "");
	char out[1100];
	snprintf(out, sizeof(out), "%s/o", dir);
	json_t *r = load_report(out);
	cr_assert(r);
	free(err);
	free(path);
	free(dir);
	return r;
}

static void expect_closed_form(json_t *r, int dp, double M)
{
	double W = 2 * H * H + 2 * H * KV + 3 * H * F;
	double P = L * (W + 2 * H) + 2 * V * H + H;  /* + norms, embedding, head, final norm */
	double ring = (dp - 1.0) / dp;
	double gathers = 2 * M * L - 2 * M + 1;
	double param = gathers * W * 2 * ring, grads = M * P * 2 * ring;
	double got_p = jnum(r, "communication/bytes_per_gpu/param");
	double got_g = jnum(r, "communication/bytes_per_gpu/dp");
	cr_expect_lt(fabs(got_p / param - 1), 1e-9, "parameters: %.17g vs %.17g", got_p, param);
	cr_expect_lt(fabs(got_g / grads - 1), 1e-9, "gradients: %.17g vs %.17g", got_g, grads);
}

Test(zero3, deepspeed_bytes_per_gpu_match_the_closed_form)
{
	/* 16 GPUs, 2 micro-batches: 2 x 2 x 80 - 4 + 1 = 317 layer gathers */
	json_t *r = run_zero3(2, 16, 32, 4096);
	expect_closed_form(r, 16, 2);
	json_decref(r);
	/* 1,024 GPUs, one micro-batch: 159 layer gathers */
	r = run_zero3(128, 1024, 1024, 4096);
	expect_closed_form(r, 1024, 1);
	json_decref(r);
}

/* At 1,024 GPUs and 1,024 tokens per GPU the gathers and reduce-scatters
 * cannot hide behind compute: a DGX H100 node receives and sends through
 * 8 NICs of 400 Gb/s, so a rank's bytes take at least bytes / (8 x 50
 * GB/s) (a ring whose 8 channels each cross nodes through their own NIC),
 * and whatever of that exceeds the compute is exposed; the 1,120
 * per-tensor collectives over a 1,024-rank ring add their latency. */
Test(zero3, traffic_that_cannot_hide_is_exposed_at_1024_gpus)
{
	json_t *r = run_zero3(128, 1024, 1024, 1024);
	double bytes = jnum(r, "communication/bytes_per_gpu/param") +
		       jnum(r, "communication/bytes_per_gpu/dp");
	double compute = jnum(r, "breakdown/mean/compute_s");
	double exposed = jnum(r, "breakdown/mean/exposed_comm_s");
	double it = jnum(r, "summary/iteration_time_s");
	cr_expect_gt(exposed, bytes / (8 * 50e9) - compute, "exposed %g s, bytes %g, compute %g s",
		     exposed, bytes, compute);
	cr_expect_gt(exposed, 0.5 * it, "exposed %g of %g s", exposed, it);
	cr_expect_gt(exposed, compute, "exposed %g s, compute %g s", exposed, compute);
	json_decref(r);
}
