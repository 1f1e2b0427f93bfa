/* build_transformer_task: a task added to the stage's program by the
 * transformer builder's files (the bottom of them: the step and the
 * gradient reductions both add through here, neither through the
 * other): after its dependency, the stream's last task and, on the
 * compute stream, the gate a pipeline receive or a parameter gather set. */
#include "build_transformer-private.h"

int builder_add(struct builder *b, const struct task *t, int dep)
{
	int deps[3] = { dep, b->stream.last, b->stream.gate };
	int id = program_add(b->p, t, deps, t->stream == STREAM_COMPUTE ? 3 : 2);
	if (t->stream == STREAM_COMPUTE)
		b->stream.gate = -1;
	return id;
}

int builder_compute(struct builder *b, enum task_cat cat, double time_s, double flops,
		    int mb, int chunk, int dep)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = cat,
			  .time_s = time_s, .flops = flops, .mb = mb, .chunk = chunk };
	b->stream.last = builder_add(b, &t, dep);
	return b->stream.last;
}
