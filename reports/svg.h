/* svg: a minimal SVG 1.1 writer and the chart frame the plots share.
 *
 * No plotting dependency: a document is text appended to a memory
 * stream, every string escaped for XML, every element closed, so the
 * output is well-formed by construction (tests/test-report.c parses each
 * plot with python3's xml module). Coordinates are in CSS pixels with the
 * origin at the top left. A chart frame (struct svg_axes) maps data to a
 * plot area and draws the axes with "nice" ticks (1, 2 or 5 times a
 * power of ten), their labels with units, and a legend: every plot
 * carries axes, units and a legend. Colours are fixed per quantity
 * (svg_color_*) so the same quantity looks the same in every plot. */
#ifndef DDLSIM_SVG_H
#define DDLSIM_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct svg;

/* Write s as XML / HTML text (attributes are double-quoted): & < > " as
 * entities; a control character (C0 but tab and newline, DEL, C1), which
 * XML 1.0 forbids, as U+FFFD. NULL writes nothing. The one escaper of
 * svg.c and html.c. */
void svg_escape(FILE *f, const char *s);

/* A new document width x height px with a <title> (tooltip and the
 * accessible name); the caller finishes it with svg_finish() or frees it
 * with svg_destroy(). Aborts when out of memory (xalloc). */
struct svg *svg_create(double width_px, double height_px, const char *title);
/* Free s without producing text; NULL is a no-op. */
void svg_destroy(struct svg *s);
/* Close the document and return its text (caller frees) and its length
 * in *len when len is not NULL; s is freed. NULL when the stream failed. */
char *svg_finish(struct svg *s, size_t *len);

/* Shapes. fill/stroke are CSS colours; tip, when not NULL, becomes a
 * <title> child shown as a tooltip. */
void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill,
	      const char *tip);
void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke,
	      double width_px, bool dashed);
void svg_circle(struct svg *s, double cx, double cy, double r, const char *fill, const char *stroke,
		const char *tip);
/* A group of shapes sharing one tooltip (tip, escaped): begin, the
 * shapes, end. */
void svg_group_begin(struct svg *s, const char *tip);
void svg_group_end(struct svg *s);
/* An open polyline through n points xy[2i], xy[2i+1]. */
void svg_polyline(struct svg *s, const double *xy, int n, const char *stroke, double width_px);
/* Text at (x, y) anchored "start", "middle" or "end", size in px, rotated
 * by rotate_deg about its anchor; printf-formatted, escaped. */
void svg_text(struct svg *s, double x, double y, const char *anchor, double size_px,
	      double rotate_deg, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* A chart frame: data ranges [x0, x1] x [y0, y1] on the plot area at
 * (px, py) of pw x ph px. svg_axes_fit() widens a range to nice ticks. */
struct svg_axes {
	double x0, x1, y0, y1;
	double px, py, pw, ph;
	bool xlog;                  /* log10 x axis (x0 > 0) */
	bool xcat;                  /* categorical x: no x ticks, the caller labels */
};
/* The ticks of a linear axis over [lo, hi]: the multiples of a nice step
 * (1, 2 or 5 times a power of ten, about `want` steps over the span) that
 * lie in [lo, hi], each computed as k x step (0, 0.1, 0.2, 0.3: no
 * running sum's 0.30000000000000004), into ticks[0..max). Returns their
 * number (0 when hi <= lo) and the step in *step (NULL: not wanted).
 * 0..11.7 for 5 steps: 0, 2, 4, 6, 8, 10 (step 2). */
#define SVG_MAX_TICKS 64
int svg_nice_ticks(double lo, double hi, int want, double *ticks, int max, double *step);
/* Round [*lo, *hi] out to nice tick values (hi > lo afterwards). */
void svg_axes_nice(double *lo, double *hi, bool log);
/* Data to pixels. */
double svg_ax_x(const struct svg_axes *a, double x);
double svg_ax_y(const struct svg_axes *a, double y);
/* Draw the frame, grid, ticks and the axis labels (with their units). */
void svg_axes_draw(struct svg *s, const struct svg_axes *a, const char *xlabel, const char *ylabel);
/* A legend box of n entries (swatch + name) starting at (x, y), one entry
 * per row. */
void svg_legend(struct svg *s, double x, double y, const char *const *names,
		const char *const *colors, int n);

/* The palette: compute, exposed communication per dimension, bubble,
 * idle, memory terms. */
extern const char *const svg_palette[12];

#endif
