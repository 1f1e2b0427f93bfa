/* stack-util.h: the helpers test-stack.c and test-stack-engines.c share:
 * a model loaded, a workload shape of one micro-batch under a stack, the
 * op a block emits (found by name or by prefix), a byte count to 1e-9.
 * Static inline: each suite is its own executable. */
#ifndef DDLSIM_TESTS_STACK_UTIL_H
#define DDLSIM_TESTS_STACK_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "op.h"
#include "stack.h"
#include "testutil.h"
#include "workload.h"

/* One micro-batch of s tokens, TP t, the stack named, fp32 main gradients. */
static inline struct wl_shape shape(const char *stack, double s, int t)
{
	struct wl_shape w = { 1, s, t, false, DTYPE_BF16, ATTN_FLASH, 1, false, 1, false, 0, 0, 0,
			      stack_find(stack), { ATTN_BE_FA2, ATTN_BE_CUDNN }, true, { 0 }, false, { 0 }, false, 0, 0 };
	cr_assert(w.stack, "no stack '%s'", stack);
	return w;
}

/* The op named name in block blk, pass ps; fails if absent. */
static inline struct op find_op(const struct model *m, const struct wl_shape *w, enum wl_block blk,
			 enum op_pass ps, const char *name)
{
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, w, blk, ps, RECOMPUTE_NONE, &l), 0);
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, name)) {
			struct op o = l.v[i];
			op_list_finish(&l);
			return o;
		}
	op_list_finish(&l);
	cr_assert_fail("no op '%s'", name);
	return (struct op){ 0 };
}

static inline bool has_op(const struct model *m, const struct wl_shape *w, enum wl_block blk,
		   enum op_pass ps, const char *prefix)
{
	struct op_list l;
	bool found = false;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, w, blk, ps, RECOMPUTE_NONE, &l), 0);
	for (int i = 0; i < l.n; i++)
		found |= !strncmp(l.v[i].name, prefix, strlen(prefix));
	op_list_finish(&l);
	return found;
}

#define EXPECT_BYTES(o, want) \
	cr_expect_float_eq((o).bytes, (want), 1e-9 * (want), "%s: %.17g vs %.17g", (o).name, \
			   (o).bytes, (double)(want))

#endif
