/* topology_power: the "power" object of a GPU description (topology.h's
 * key table, gpu.power.*): the board's TDP and idle power, and a power
 * limit below the TDP with the measured clock-versus-limit table that
 * prices it (models/gpu.h gpu_power_cap_clock_ratio). */
#include "topology-private.h"

#include <stdio.h>

#include "diag.h"

/* cap_clock_ratio [[W, ratio], ...] of pw into g; the path of a bad item
 * in its message. */
static void load_cap_table(struct jobj *pw, struct gpu_spec *g)
{
	json_t *arr;
	char ap[300], p[340];

	if (jobj_array(pw, "cap_clock_ratio", &arr, ap, sizeof(ap), 0) != 1)
		return;
	size_t n = json_array_size(arr);
	if (n < 2 || n > GPU_CAP_POINTS_MAX) {
		jobj_err(pw, "cap_clock_ratio", "expected 2 to %d [power_W, clock_ratio] points, got %zu",
			 GPU_CAP_POINTS_MAX, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *pt = json_array_get(arr, i);
		snprintf(p, sizeof(p), "%s/%zu", ap, i);
		if (!json_is_array(pt) || json_array_size(pt) != 2 ||
		    !json_is_number(json_array_get(pt, 0)) || !json_is_number(json_array_get(pt, 1))) {
			diag_err(pw->d, pw->file, p, "expected [power_W, clock_ratio], two numbers, "
				 "got %s", jload_type_name(pt));
			return;
		}
		double w = json_number_value(json_array_get(pt, 0));
		double r = json_number_value(json_array_get(pt, 1));
		if (!(w > 0 && w <= 1e8)) {
			diag_err(pw->d, pw->file, p, "power_W must be in (0, 1e8] W, got %g", w);
			return;
		}
		if (!(r > 0 && r <= 1)) {
			diag_err(pw->d, pw->file, p, "clock_ratio must be in (0, 1], got %g", r);
			return;
		}
		if (i > 0 && w <= g->cap_W[i - 1]) {
			diag_err(pw->d, pw->file, p, "power_W must rise point to point: %g W after %g W",
				 w, g->cap_W[i - 1]);
			return;
		}
		if (i > 0 && r < g->cap_clock[i - 1]) {
			diag_err(pw->d, pw->file, p, "clock_ratio must not fall as the limit rises: %g "
				 "after %g", r, g->cap_clock[i - 1]);
			return;
		}
		g->cap_W[i] = w;
		g->cap_clock[i] = r;
	}
	/* the ratios are clocks over the clock at the TDP, which every
	 * efficiency of the preset was measured at */
	if (g->cap_W[n - 1] != g->tdp_W || g->cap_clock[n - 1] != 1) {
		snprintf(p, sizeof(p), "%s/%zu", ap, n - 1);
		diag_err(pw->d, pw->file, p, "the last point must be [tdp_W, 1] = [%g, 1] (clocks over "
			 "the clock at the TDP), got [%g, %g]", g->tdp_W, g->cap_W[n - 1], g->cap_clock[n - 1]);
		return;
	}
	g->cap_n = (int)n;
}

int topology_gpu_cap_check(const struct gpu_spec *g, double cap_W, char *msg, size_t n)
{
	if (cap_W > g->tdp_W && g->tdp_W > 0)
		snprintf(msg, n, "must not exceed tdp_W %g, got %g", g->tdp_W, cap_W);
	else if (g->cap_n < 2)
		snprintf(msg, n, "needs cap_clock_ratio, the measured compute clock at power limits of "
			 "this GPU (gpus/README.md); none given");
	else if (cap_W < g->cap_W[0])
		snprintf(msg, n, "is below the lowest limit cap_clock_ratio measured (%g W), got %g: no "
			 "clock is extrapolated", g->cap_W[0], cap_W);
	else if (cap_W < g->idle_W)
		snprintf(msg, n, "must not be below idle_W %g (a busy GPU would draw less than an idle "
			 "one), got %g", g->idle_W, cap_W);
	else
		return 0;
	return -1;
}

void topology_load_power(struct jobj *jo, struct gpu_spec *g, int minor)
{
	struct jobj pw;
	const char *src;

	if (!jobj_has(jo, "power"))
		return;
	if (minor < 3) {
		jobj_err(jo, "power", "needs schema_version \"1.3\" (the file says \"1.%d\")", minor);
		return;
	}
	if (jobj_child(jo, "power", &pw, 0) != 1)
		return;
	jobj_num(&pw, "tdp_W", &g->tdp_W, JREQ | JPOS);
	jobj_num(&pw, "idle_W", &g->idle_W, JREQ | JNONNEG);
	jobj_str(&pw, "source", &src, JREQ);
	if (g->idle_W > g->tdp_W && g->tdp_W > 0)
		jobj_err(&pw, "idle_W", "must not exceed tdp_W %g, got %g", g->tdp_W, g->idle_W);
	static const char *const keys_15[] = { "power_cap_W", "cap_clock_ratio", "cap_source" };
	for (size_t i = 0; i < sizeof(keys_15) / sizeof(keys_15[0]); i++)
		if (jobj_has(&pw, keys_15[i]) && minor < 5)
			jobj_err(&pw, keys_15[i], "needs schema_version \"1.5\" (a GPU preset: \"1.1\"), "
				 "the file says \"1.%d\"", minor);
	if (minor < 5) {
		jobj_end(&pw);
		return;
	}
	load_cap_table(&pw, g);
	if (jobj_has(&pw, "cap_clock_ratio"))
		jobj_str(&pw, "cap_source", &src, JREQ);
	else if (jobj_has(&pw, "cap_source"))
		jobj_err(&pw, "cap_source", "names the source of cap_clock_ratio, which is absent");
	char why[256];
	/* a table present but refused is reported at its own path already */
	if (jobj_num(&pw, "power_cap_W", &g->power_cap_W, JPOS) == 1 &&
	    (g->cap_n >= 2 || !jobj_has(&pw, "cap_clock_ratio") ||
	     (g->power_cap_W > g->tdp_W && g->tdp_W > 0)) &&
	    topology_gpu_cap_check(g, g->power_cap_W, why, sizeof(why)))
		jobj_err(&pw, "power_cap_W", "%s", why);
	jobj_end(&pw);
}
