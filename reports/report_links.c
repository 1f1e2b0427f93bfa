/* report_links: report.json's links section and what the text summary
 * and report.html say of the links (see report-private.h).
 *
 * The engine counts every flow it simulated on every link of its route,
 * by the category of the task that posted it, and reads each link's
 * usage at every step of the clock (engine/engine_links.c): busy time
 * and peak utilisation are exact. A folded run counts the flows it
 * simulated (the representative ranks' and the mirror flows they post),
 * not the folded ranks': the section says so and extrapolates nothing.
 * The classes are the fabric's (platform_link_class(), fabric/platform.h):
 * their totals, and the top links by bytes. A switch's crossbar (the
 * FATPIPE "link" a non-blocking switch or a leaf is modelled by: every
 * flow through the switch crosses it, and it binds no rate) is in its
 * class's totals but never a top or the hottest link: it would fill the
 * list and say nothing of where the fabric is short. */
#include "report-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "xalloc.h"

/* The key of a communication category in bytes_by_category: its
 * task_cat_name() without "_comm" (the keys of communication.bytes_per_gpu). */
static void cat_key(int c, char *buf, size_t n)
{
	const char *s = task_cat_name(c), *e = strstr(s, "_comm");
	snprintf(buf, n, "%.*s", e ? (int)(e - s) : (int)strlen(s), s);
}

/* The categories with bytes, as an object of bytes. */
static json_t *by_cat_json(const double *bytes)
{
	json_t *o = json_object();
	char k[32];
	for (int c = 0; c < CAT_N; c++)
		if (bytes[c] != 0) {
			cat_key(c, k, sizeof(k));
			json_object_set_new(o, k, json_real(bytes[c]));
		}
	return o;
}

bool report_link_crossbar(const struct result_link *l)
{
	return l->crossbar;
}

int report_link_classes(const struct result *r, struct report_link_class **out)
{
	int n = 0, cap = 0, nl = result_nlinks(r);
	struct report_link_class *v = NULL;
	for (int i = 0; i < nl; i++) {
		struct result_link l = result_link(r, i);
		int k = 0;
		while (k < n && strcmp(v[k].cls, l.cls))
			k++;
		if (k == n) {
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				v = xreallocarray(v, (size_t)cap, sizeof(*v));
			}
			memset(&v[n], 0, sizeof(v[n]));
			v[n++].cls = l.cls;
		}
		struct report_link_class *c = &v[k];
		c->links++;
		c->bytes += l.bytes;
		for (int q = 0; q < CAT_N; q++)
			c->bytes_by_cat[q] += l.bytes_by_cat[q];
		c->timed |= l.timed;
		if (l.busy_s > c->busy_s_max)
			c->busy_s_max = l.busy_s;
		if (l.peak_util > c->peak_util_max)
			c->peak_util_max = l.peak_util;
	}
	/* most bytes first (the links came that way: the first link of a
	 * class is its hottest, but the class totals need sorting) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j].bytes > v[j - 1].bytes; j--) {
			struct report_link_class x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	*out = v;
	return n;
}

bool report_hottest_link(const struct result *r, struct result_link *out)
{
	bool found = false;
	for (int i = 0; i < result_nlinks(r); i++) {
		struct result_link l = result_link(r, i);
		if (report_link_crossbar(&l))
			continue;
		/* equal busy and peak: the first, most bytes */
		if (!found || l.busy_s > out->busy_s ||
		    (l.busy_s == out->busy_s && l.peak_util > out->peak_util))
			*out = l;
		found = true;
	}
	return found;
}

/* A busy time or peak: null where not measured (a switch's crossbar). */
static json_t *timed(bool measured, double x)
{
	return measured ? json_real(x) : json_null();
}

static json_t *link_json(const struct result_link *l)
{
	json_t *o = json_pack("{s:s, s:s, s:f, s:o, s:o, s:f}", "name", l->name, "class", l->cls,
			      "bytes", l->bytes, "busy_s", timed(l->timed, l->busy_s), "peak_util",
			      timed(l->timed, l->peak_util), "bw_Bps", l->bw_Bps);
	if (o)
		json_object_set_new(o, "bytes_by_category", by_cat_json(l->bytes_by_cat));
	return o;
}

json_t *report_links_json(const struct result *r, int top)
{
	struct report_link_class *cls;
	int ncls = report_link_classes(r, &cls), nl = result_nlinks(r);
	json_t *classes = json_array(), *tops = json_array();
	for (int k = 0; k < ncls; k++) {
		json_t *o = json_pack("{s:s, s:i, s:f, s:o, s:o}", "class", cls[k].cls, "links",
				      cls[k].links, "bytes", cls[k].bytes, "busy_s_max",
				      timed(cls[k].timed, cls[k].busy_s_max), "peak_util_max",
				      timed(cls[k].timed, cls[k].peak_util_max));
		if (o)
			json_object_set_new(o, "bytes_by_category", by_cat_json(cls[k].bytes_by_cat));
		json_array_append_new(classes, o);
	}
	free(cls);
	for (int i = 0, n = 0; i < nl && n < top; i++) {
		struct result_link l = result_link(r, i);
		if (report_link_crossbar(&l))
			continue;
		json_array_append_new(tops, link_json(&l));
		n++;
	}
	return json_pack("{s:s, s:b, s:s, s:i, s:i, s:o, s:o}", "measured",
			 plan_link_traffic_names[r->plan.simulation.link_traffic], "folded", r->folded,
			 "counted",
			 r->folded ? "the flows simulated: the representative ranks' and the mirror "
				     "flows they post, not the folded ranks' (not extrapolated)"
				   : "every flow of every rank",
			 "links", nl, "top_n", top, "classes", classes, "top", tops);
}
