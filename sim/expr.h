/* expr: the small expression language of sweep and goal files.
 *
 * Derived values and constraints are expressions over numbers and named
 * variables (a sweep point's axes and plan keys, see sweep.h):
 *
 *   numbers     64, 0.5, 1e6
 *   variables   tp, dp, nodes, gpus, micro_batch, ... (names [A-Za-z_][A-Za-z0-9_.]*)
 *   arithmetic  + - * / % (remainder of integers), unary -, parentheses
 *   comparison  < <= > >= == != (1 or 0)
 *   logic       && || ! (0 is false, anything else true)
 *   functions   min(a, b)  max(a, b)  floor(x)  ceil(x)  round(x)  abs(x)
 *               div(a, b)      integer division, floor(a / b)
 *               round_to(m, x) the multiple of m nearest x (ties up), at least m:
 *                              global_batch = round_to(dp * micro_batch, 1024)
 *                              is the batch closest to 1024 that dp x micro_batch
 *                              divides
 *               if(c, a, b)    a when c is true, else b
 *               log2(x)  pow(a, b)
 *
 * Evaluation is in doubles; integers up to 2^53 are exact. */
#ifndef DDLSIM_EXPR_H
#define DDLSIM_EXPR_H

#include <stdbool.h>
#include <stddef.h>

/* Look up variable name (len bytes, not NUL-terminated): set *out and
 * return true, or return false when unknown. */
typedef bool (*expr_var_fn)(void *ctx, const char *name, size_t len, double *out);

/* Evaluate src. Returns 0 and sets *out, or -1 with a message in err
 * ("unknown variable 'x' at column 5", "expected ')' at column 9", ...). */
int expr_eval(const char *src, expr_var_fn var, void *ctx, double *out, char *err, size_t errn);

#endif
