/* plan_check-private: what plan_check.c's files share (plan.h
 * plan_check()). */
#ifndef DDLSIM_PLAN_CHECK_PRIVATE_H
#define DDLSIM_PLAN_CHECK_PRIVATE_H

#include "diag.h"
#include "model.h"
#include "plan.h"

/* The pipeline's checks (plan_check_pipe.c): the layers' split over the
 * stages and virtual stages, interleaving, and ZB-H1's refusals; each
 * problem into d with its JSON path. */
void plan_check_pipeline(const struct plan *p, const struct model *m, const char *f, struct diag *d);

/* The parallel groups' checks (plan_check_groups.c): context, expert and
 * expert tensor parallelism, shard groups; each problem into d. */
void plan_check_groups(const struct plan *p, const struct model *m, const char *f, struct diag *d);

#endif
