/* svg: a minimal SVG writer and chart frame (see svg.h).
 *
 * Numbers are printed with %.2f (pixels) so files are small and stable;
 * text goes through xml_escape() so a scenario name with '<' or '&'
 * cannot break the document. */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct svg {
	FILE *f;
	char *buf;
	size_t len;
};

const char *const svg_palette[12] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#8c564b",
};

void svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* control characters are not allowed in XML 1.0 (nor
			 * DEL and C1 in HTML): U+FFFD shows where one was */
			if ((unsigned char)*s == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f) {
				fputs("\xef\xbf\xbd", f);
				s++;
			} else if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
				fputs("\xef\xbf\xbd", f);
			else
				fputc(*s, f);
		}
}

static void esc(FILE *f, const char *s)
{
	svg_escape(f, s);
}

struct svg *svg_create(double w, double h, const char *title)
{
	struct svg *s = xcalloc(1, sizeof(*s));
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f) {
		fprintf(stderr, "ddlsim: fatal: out of memory opening an SVG stream\n");
		exit(1);
	}
	fprintf(s->f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n<title>", w, h, w, h);
	esc(s->f, title ? title : "");
	fputs("</title>\n", s->f);
	fprintf(s->f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
	return s;
}

void svg_destroy(struct svg *s)
{
	if (!s)
		return;
	fclose(s->f);
	free(s->buf);
	free(s);
}

char *svg_finish(struct svg *s, size_t *len)
{
	fputs("</svg>\n", s->f);
	bool bad = ferror(s->f) != 0;
	fclose(s->f);
	char *out = s->buf;
	if (len)
		*len = s->len;
	free(s);
	if (bad) {
		free(out);
		return NULL;
	}
	return out;
}

static void tip_close(struct svg *s, const char *elem, const char *tip)
{
	if (!tip) {
		fputs("/>\n", s->f);
		return;
	}
	fputs("><title>", s->f);
	esc(s->f, tip);
	fprintf(s->f, "</title></%s>\n", elem);
}

void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill,
	      const char *tip)
{
	if (w < 0) {
		x += w;
		w = -w;
	}
	if (h < 0) {
		y += h;
		h = -h;
	}
	fprintf(s->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"", x, y, w, h);
	esc(s->f, fill);
	fputc('"', s->f);
	tip_close(s, "rect", tip);
}

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
	      double width, bool dashed)
{
	fprintf(s->f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"", x1, y1, x2, y2);
	esc(s->f, stroke);
	fprintf(s->f, "\" stroke-width=\"%.2f\"%s/>\n", width, dashed ? " stroke-dasharray=\"4 3\"" : "");
}

void svg_circle(struct svg *s, double cx, double cy, double r, const char *fill, const char *stroke,
		const char *tip)
{
	fprintf(s->f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"", cx, cy, r);
	esc(s->f, fill);
	fputc('"', s->f);
	if (stroke) {
		fputs(" stroke=\"", s->f);
		esc(s->f, stroke);
		fputs("\" stroke-width=\"1.5\"", s->f);
	}
	tip_close(s, "circle", tip);
}

void svg_group_begin(struct svg *s, const char *tip)
{
	fputs("<g><title>", s->f);
	esc(s->f, tip);
	fputs("</title>\n", s->f);
}

void svg_group_end(struct svg *s)
{
	fputs("</g>\n", s->f);
}

void svg_polyline(struct svg *s, const double *xy, int n, const char *stroke, double width)
{
	fputs("<polyline fill=\"none\" stroke=\"", s->f);
	esc(s->f, stroke);
	fprintf(s->f, "\" stroke-width=\"%.2f\" points=\"", width);
	for (int i = 0; i < n; i++)
		fprintf(s->f, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	fputs("\"/>\n", s->f);
}

void svg_text(struct svg *s, double x, double y, const char *anchor, double size,
	      double rotate, const char *fmt, ...)
{
	va_list ap;
	char *t;
	va_start(ap, fmt);
	int n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "ddlsim: fatal: out of memory formatting SVG text\n");
		exit(1);
	}
	fprintf(s->f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" font-size=\"%.1f\"", x, y,
		anchor, size);
	if (rotate != 0)
		fprintf(s->f, " transform=\"rotate(%.1f %.2f %.2f)\"", rotate, x, y);
	fputc('>', s->f);
	esc(s->f, t);
	fputs("</text>\n", s->f);
	free(t);
}

/* ---- chart frame ---------------------------------------------------- */

static double nice_step(double span, int want)
{
	double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

int svg_nice_ticks(double lo, double hi, int want, double *ticks, int max, double *step)
{
	int n = 0;
	double st = hi > lo && want > 0 ? nice_step(hi - lo, want) : 0;
	if (step)
		*step = st;
	if (!(st > 0) || !isfinite(st))
		return 0;
	/* k x step, not a running sum: 0.1 + 0.2 is not 0.3 */
	for (double k = ceil(lo / st - 1e-9); k <= floor(hi / st + 1e-9) && n < max; k++)
		ticks[n++] = k == 0 ? 0 : k * st;
	return n;
}

void svg_axes_nice(double *lo, double *hi, bool log)
{
	if (log) {
		if (!(*lo > 0))
			*lo = *hi > 0 ? *hi / 10 : 1;
		if (!(*hi > *lo))
			*hi = *lo * 10;
		*lo = pow(10, floor(log10(*lo)));
		*hi = pow(10, ceil(log10(*hi)));
		if (*hi <= *lo)
			*hi = *lo * 10;
		return;
	}
	if (!(*hi > *lo)) {
		double m = fabs(*hi) > 0 ? fabs(*hi) : 1;
		*lo -= m / 2;
		*hi += m / 2;
		if (*lo < 0 && *lo + m / 2 >= 0)
			*lo = 0;
	}
	double st = nice_step(*hi - *lo, 5);
	*lo = floor(*lo / st) * st;
	*hi = ceil(*hi / st) * st;
}

double svg_ax_x(const struct svg_axes *a, double x)
{
	double t = a->xlog ? (log10(x) - log10(a->x0)) / (log10(a->x1) - log10(a->x0))
			   : (x - a->x0) / (a->x1 - a->x0);
	return a->px + t * a->pw;
}

double svg_ax_y(const struct svg_axes *a, double y)
{
	return a->py + a->ph - (y - a->y0) / (a->y1 - a->y0) * a->ph;
}

/* A tick label: short, no trailing zeros, SI suffix for large values. */
static void tick_label(double v, double step, char *out, size_t n)
{
	double av = fabs(v);
	if (av >= 1e6 && step >= 1e5)
		snprintf(out, n, "%gM", v / 1e6);
	else if (av >= 1e4 && step >= 1e3)
		snprintf(out, n, "%gk", v / 1e3);
	else
		snprintf(out, n, "%g", fabs(v) < step * 1e-9 ? 0.0 : v);
}

void svg_axes_draw(struct svg *s, const struct svg_axes *a, const char *xlabel, const char *ylabel)
{
	char lab[32];
	double tk[SVG_MAX_TICKS], st;
	/* y grid and ticks */
	int n = svg_nice_ticks(a->y0, a->y1, 5, tk, SVG_MAX_TICKS, &st);
	for (int i = 0; i < n; i++) {
		double y = svg_ax_y(a, tk[i]);
		svg_line(s, a->px, y, a->px + a->pw, y, "#e0e0e0", 1, false);
		tick_label(tk[i], st, lab, sizeof(lab));
		svg_text(s, a->px - 6, y + 4, "end", 11, 0, "%s", lab);
	}
	if (!a->xcat) {
		if (a->xlog) {
			for (double v = a->x0; v <= a->x1 * 1.000001; v *= 10) {
				double x = svg_ax_x(a, v);
				svg_line(s, x, a->py, x, a->py + a->ph, "#e0e0e0", 1, false);
				tick_label(v, v, lab, sizeof(lab));
				svg_text(s, x, a->py + a->ph + 16, "middle", 11, 0, "%s", lab);
			}
		} else {
			n = svg_nice_ticks(a->x0, a->x1, 6, tk, SVG_MAX_TICKS, &st);
			for (int i = 0; i < n; i++) {
				double x = svg_ax_x(a, tk[i]);
				svg_line(s, x, a->py, x, a->py + a->ph, "#e0e0e0", 1, false);
				tick_label(tk[i], st, lab, sizeof(lab));
				svg_text(s, x, a->py + a->ph + 16, "middle", 11, 0, "%s", lab);
			}
		}
	}
	svg_line(s, a->px, a->py + a->ph, a->px + a->pw, a->py + a->ph, "#333333", 1.2, false);
	svg_line(s, a->px, a->py, a->px, a->py + a->ph, "#333333", 1.2, false);
	svg_text(s, a->px + a->pw / 2, a->py + a->ph + 36, "middle", 12, 0, "%s", xlabel);
	svg_text(s, a->px - 46, a->py + a->ph / 2, "middle", 12, -90, "%s", ylabel);
}

void svg_legend(struct svg *s, double x, double y, const char *const *names,
		const char *const *colors, int n)
{
	fputs("<g class=\"legend\">\n", s->f);
	for (int i = 0; i < n; i++) {
		svg_rect(s, x, y + 18 * i, 12, 12, colors[i], NULL);
		svg_text(s, x + 18, y + 18 * i + 10, "start", 11, 0, "%s", names[i]);
	}
	fputs("</g>\n", s->f);
}
