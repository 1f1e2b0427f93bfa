/* kineto_comm: the NCCL kernels of a PyTorch profiler trace, read and
 * summed up for people.
 *
 * A kernel whose name starts "nccl" (ncclKernel_AllReduce_RING_LL_Sum_float,
 * ncclDevKernel_AllGather_RING_LL, ...) is a collective or a send/recv; the
 * token after the first '_' names it. Where the trace recorded the call's
 * parameters (PyTorch's record_param_comms, from 2.1: args "In msg nelems",
 * "Out msg nelems", "dtype" on the kernel, as HTA tests/data/nccl_parser_config
 * holds them) the message sizes are nelems x the c10 ScalarType's size.
 *
 * They are not written to the profile: schema ddlsim.profile 1.1 has no
 * section for collectives, and ddlsim prices a collective from the
 * topology's links and NCCL's algorithms (fabric/, models/nccl), not from a
 * kernel time of one job on one fabric; the summary shows them so a user
 * can compare the run's collectives with `ddlsim collective`. */
#include "kineto.h"
#include "xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *kernel, *coll;
} coll_names[] = {
	{ "AllReduce", "all_reduce" }, { "AllGather", "all_gather" },
	{ "ReduceScatter", "reduce_scatter" }, { "SendRecv", "send_recv" },
	{ "Broadcast", "broadcast" }, { "Reduce", "reduce" }, { "AllToAll", "all_to_all" },
};

/* c10::ScalarType names (c10/core/ScalarType.h) and their sizes */
static const struct {
	const char *name;
	double bytes;
} dtype_sizes[] = {
	{ "Float", 4 }, { "Half", 2 }, { "BFloat16", 2 }, { "Double", 8 }, { "Long", 8 },
	{ "Int", 4 }, { "Short", 2 }, { "Byte", 1 }, { "Char", 1 }, { "Bool", 1 },
	{ "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
};

static double msg_bytes(json_t *args, const char *key, double size)
{
	json_t *v = json_object_get(args, key);
	return size > 0 && json_is_integer(v) && json_integer_value(v) >= 0
	       ? (double)json_integer_value(v) * size : -1;
}

void kineto_comm_add(struct kineto_trace *t, const char *name, json_t *args, double ts_us, double dur_us)
{
	const char *u = strchr(name, '_');
	size_t n = u ? strcspn(u + 1, "_(") : 0;
	double size = 0;
	const char *dt = json_string_value(json_object_get(args, "dtype"));
	XGROW(t->comm, t->ccomm, t->ncomm + 1);
	struct kineto_comm *c = &t->comm[t->ncomm++];
	snprintf(c->coll, sizeof(c->coll), "%.*s", (int)(n < sizeof(c->coll) ? n : 0), u ? u + 1 : "");
	for (size_t i = 0; i < sizeof(coll_names) / sizeof(coll_names[0]); i++)
		if (strlen(coll_names[i].kernel) == n && !strncmp(u + 1, coll_names[i].kernel, n))
			snprintf(c->coll, sizeof(c->coll), "%s", coll_names[i].coll);
	if (!c->coll[0])
		snprintf(c->coll, sizeof(c->coll), "?");
	for (size_t i = 0; dt && i < sizeof(dtype_sizes) / sizeof(dtype_sizes[0]); i++)
		if (!strcmp(dt, dtype_sizes[i].name))
			size = dtype_sizes[i].bytes;
	c->in_bytes = msg_bytes(args, "In msg nelems", size);
	c->out_bytes = msg_bytes(args, "Out msg nelems", size);
	c->dur_s = dur_us * 1e-6;
	c->ts_us = ts_us;
}

static int by_class(const void *a, const void *b)
{
	const struct kineto_comm *x = a, *y = b;
	int c = strcmp(x->coll, y->coll);
	if (c)
		return c;
	if (x->in_bytes != y->in_bytes)
		return x->in_bytes < y->in_bytes ? -1 : 1;
	if (x->out_bytes != y->out_bytes)
		return x->out_bytes < y->out_bytes ? -1 : 1;
	return x->dur_s < y->dur_s ? -1 : x->dur_s > y->dur_s;
}

void kineto_comm_summary(const struct kineto_trace *t, bool drop_first, FILE *f)
{
	struct kineto_comm *c = xcalloc((size_t)t->ncomm + 1, sizeof(*c));
	int n = 0;
	for (int i = 0; i < t->ncomm; i++)
		if (!drop_first || t->comm[i].ts_us >= t->first_step_end_us)
			c[n++] = t->comm[i];
	if (n == 0)
		goto out;
	qsort(c, (size_t)n, sizeof(*c), by_class);
	fprintf(f, "collectives: %d NCCL kernels%s (not in the profile: it has no section for them; "
		"ddlsim prices collectives from the topology)\n", n, drop_first ? " after the warm-up step" : "");
	for (int i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(c[j].coll, c[i].coll) && c[j].in_bytes == c[i].in_bytes &&
				c[j].out_bytes == c[i].out_bytes; j++)
			;
		int k = j - i;
		double med = k % 2 ? c[i + k / 2].dur_s : (c[i + k / 2 - 1].dur_s + c[i + k / 2].dur_s) / 2;
		fprintf(f, "  %s", c[i].coll);
		if (c[i].in_bytes >= 0)
			fprintf(f, " in %.0f B out %.0f B", c[i].in_bytes, c[i].out_bytes);
		else
			fprintf(f, " (no message size in the trace)");
		fprintf(f, ": %d calls, median %.4g ms", k, med * 1e3);
		if (c[i].in_bytes > 0 && med > 0)
			fprintf(f, ", %.2f GB/s of input", c[i].in_bytes / med * 1e-9);
		fputc('\n', f);
	}
out:
	free(c);
}
