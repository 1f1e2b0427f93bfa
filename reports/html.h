/* html: report.html, one self-contained page per simulation.
 *
 * Inline CSS and inline SVG (plot.h), no script from anywhere else, no
 * font, image or style sheet fetched: the file opens offline and can be
 * mailed. Sections, each a <section> with a fixed id that the browser
 * test looks for: decision (first: the headline figures, each a card
 * with an id d-gpus, d-days, d-cost, d-tokens-per-usd, d-energy,
 * d-iteration, d-mfu, d-memory, with the error band of the plan's nearest
 * validation family, sim/band.h; the band line d-band), then the
 * appendix: summary, published (only when the scenario publishes a
 * figure), breakdown, schedule, links (the link classes and the hottest
 * links, their busy time and peak as heat), memory, ops, provenance. A one-line inline
 * script sets data-rendered="ok" on <body> once the page has run, and any
 * script error raises data-errors, so a headless browser's DOM dump
 * shows both (tests/test-report.c). */
#ifndef DDLSIM_HTML_H
#define DDLSIM_HTML_H

#include "result.h"

/* The page for r (caller frees), NULL when a plot or the stream failed. */
char *html_render(const struct result *r);

#endif
