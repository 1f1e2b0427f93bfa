/* expr: the small expression language of sweep and goal files.
 *
 * Derived values and constraints are expressions over numbers and named
 * variables (a sweep point's axes and plan keys, see sweep.h):
 *
 *   numbers     64, 0.5, 1e6
 *   booleans    true, false (1 and 0 in arithmetic)
 *   variables   tp, dp, nodes, gpus, micro_batch, ... (names [A-Za-z_][A-Za-z0-9_.]*);
 *               a boolean key of the scenario reads 1 or 0
 *   arithmetic  + - * / % (remainder of integers), unary -, parentheses
 *   comparison  < <= > >= == != (true or false)
 *   logic       && || ! (0 is false, anything else true; the result is true or false)
 *   precedence  lowest first: ||, &&, comparisons (one per level: "a < b < c" is an
 *               error; write "a < b && b < c"), + -, * / %, unary - !, calls and ( )
 *   functions   min(a, b)  max(a, b)  floor(x)  ceil(x)  round(x)  abs(x)
 *               div(a, b)      integer division, floor(a / b)
 *               round_to(m, x) the multiple of m nearest x (ties up), at least m:
 *                              global_batch = round_to(dp * micro_batch, 1024)
 *                              is the batch closest to 1024 that dp x micro_batch
 *                              divides
 *               if(c, a, b)    a when c is true, else b
 *               log2(x)  pow(a, b)
 *
 * Evaluation is in doubles; integers up to 2^53 are exact.
 *
 * Types: a comparison, &&, ||, !, true, false and if(c, a, b) of two
 * truth values give a truth value; anything else a number. A derived
 * value that is a truth value is written into the scenario as a JSON
 * boolean ("parallel.sp": "tp > 1"), as is a 0 or 1 written over a key
 * that is a boolean in the base scenario.
 *
 * Limits (so no input can crash or stall the evaluator): an expression
 * has at most EXPR_MAX_LEN bytes and nests parentheses, calls and unary
 * operators at most EXPR_MAX_DEPTH deep; every intermediate result must be
 * a finite number (1e308 * 10, log2(0), pow(-1, 0.5) and a variable that
 * is not finite are errors, never NaN or infinity: NaN would make a
 * comparison read as true). */
#ifndef DDLSIM_EXPR_H
#define DDLSIM_EXPR_H

#include <stdbool.h>
#include <stddef.h>

/* Look up variable name (len bytes, not NUL-terminated): set *out and
 * return true, or return false when unknown. */
typedef bool (*expr_var_fn)(void *ctx, const char *name, size_t len, double *out);

#define EXPR_MAX_LEN 4096
#define EXPR_MAX_DEPTH 64

/* Evaluate src. Returns 0 and sets *out, or -1 with a message in err
 * ("unknown variable 'x' at column 5", "expected ')' at column 9",
 * "result inf is not a finite number at column 7", ...). */
int expr_eval(const char *src, expr_var_fn var, void *ctx, double *out, char *err, size_t errn);

/* The same, and *boolean (when not NULL) says whether the result is a
 * truth value (see Types above). */
int expr_eval_typed(const char *src, expr_var_fn var, void *ctx, double *out, bool *boolean,
		    char *err, size_t errn);

/* What a message may quote of an expression: at most EXPR_EXCERPT bytes. */
#define EXPR_EXCERPT 80

/* src quoted for a message, into buf (n bytes): "src" when at most
 * EXPR_EXCERPT bytes, else EXPR_EXCERPT bytes around the column an error
 * message err names ("... at column 9"; NULL or none: the start), cut
 * ends marked "...", and the bytes quoted said ("...a + b..." (bytes
 * 4000..4080 of 500000)), so an over-long expression never fills
 * stderr. Returns buf. */
const char *expr_excerpt(const char *src, const char *err, char *buf, size_t n);

#endif
