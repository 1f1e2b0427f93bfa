/* human: numbers and durations for tables, without exponents (see
 * human.h). */
#include "human.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* x to 4 significant digits in fixed notation, trailing zeros cut. */
static void fixed4(double x, char *buf, size_t n)
{
	if (x == 0) {
		snprintf(buf, n, "0");
		return;
	}
	int dec = 3 - (int)floor(log10(fabs(x)));
	dec = dec < 0 ? 0 : dec > 12 ? 12 : dec;
	snprintf(buf, n, "%.*f", dec, x);
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	if (!strcmp(buf, "-0"))
		snprintf(buf, n, "0");
}

static const char prefix[] = "kMGTPE";

/* The prefix of x: -1 none, else an index into prefix[]. */
static int prefix_of(double x)
{
	int p = -1;
	/* 9999.5 rounds to 4 digits as 10000: scale it too */
	while (fabs(x) >= 9999.5 && p + 1 < (int)sizeof(prefix) - 1) {
		x /= 1000;
		p++;
	}
	return p;
}

/* x scaled to prefix p (-1: none), 4 significant digits, and the prefix
 * after a space. */
static void scaled(double x, int p, char *buf, size_t n)
{
	char num[64];
	for (int k = 0; k <= p; k++)   /* divided step by step, as it always was */
		x /= 1000;
	fixed4(x, num, sizeof(num));
	if (p < 0)
		snprintf(buf, n, "%s", num);
	else
		snprintf(buf, n, "%s %c", num, prefix[p]);
}

char *human_number(double x, char *buf, size_t n)
{
	if (!isfinite(x)) {
		snprintf(buf, n, "-");
		return buf;
	}
	scaled(x, prefix_of(x), buf, n);
	return buf;
}

char *human_scaled(double x, double like, char *buf, size_t n)
{
	if (!isfinite(x) || !isfinite(like)) {
		snprintf(buf, n, "-");
		return buf;
	}
	scaled(x, prefix_of(like), buf, n);
	return buf;
}

char *human_range(double lo, double hi, const char *pre, const char *unit, char *buf, size_t n)
{
	if (!isfinite(lo) || !isfinite(hi)) {
		snprintf(buf, n, "-");
		return buf;
	}
	char a[64], b[64];
	int p = prefix_of(fabs(lo) > fabs(hi) ? lo : hi);
	scaled(lo, p, a, sizeof(a));
	scaled(hi, p, b, sizeof(b));
	pre = pre ? pre : "";
	snprintf(buf, n, "%s%s – %s%s%s", pre, a, pre, b, unit ? unit : "");
	return buf;
}

char *human_duration(double s, char *buf, size_t n)
{
	if (!isfinite(s) || s < 0)
		snprintf(buf, n, "-");
	else if (s < 9.95)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 59.5)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 3600 - 3)
		snprintf(buf, n, "%.1f min", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, n, "%.1f h", s / 3600);
	else
		snprintf(buf, n, "%.1f d", s / 86400);
	return buf;
}
