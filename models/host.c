/* host: the host's issue time and the GPU's wait for it (see host.h). */
#include "host.h"
#include "cost.h"

#include <math.h>

double host_issue_time(const struct host_issue *h, const struct cost *c, const struct op_list *l)
{
	double t = 0;
	if (!h)
		return 0;
	for (int i = 0; i < l->n; i++) {
		int k = c ? cost_op_launches(c, &l->v[i]) : op_launches(&l->v[i]);
		t += k * (l->v[i].pass == PASS_BWD ? h->bwd_s : h->fwd_s);
	}
	return t;
}

double host_bound_time(double gpu_s, double issue_s)
{
	return fmax(gpu_s, issue_s);
}

double host_block_time(const struct host_issue *h, double gpu_s, double issue_s)
{
	if (!h)
		return gpu_s;
	return h->blocking ? gpu_s + issue_s : host_bound_time(gpu_s, issue_s);
}
