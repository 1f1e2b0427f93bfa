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

char *human_number(double x, char *buf, size_t n)
{
	static const char prefix[] = "kMGTPE";
	if (!isfinite(x)) {
		snprintf(buf, n, "-");
		return buf;
	}
	int p = -1;
	double v = x;
	/* 9999.5 rounds to 4 digits as 10000: scale it too */
	while (fabs(v) >= 9999.5 && p + 1 < (int)sizeof(prefix) - 1) {
		v /= 1000;
		p++;
	}
	char num[64];
	fixed4(v, num, sizeof(num));
	if (p < 0)
		snprintf(buf, n, "%s", num);
	else
		snprintf(buf, n, "%s %c", num, prefix[p]);
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
