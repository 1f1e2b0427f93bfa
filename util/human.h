/* human: numbers as a reader of a table wants them.
 *
 * A count, a rate or an amount of money of any size reads as written, with
 * an SI prefix past ten thousand and never an exponent: 1.5e13 tokens ->
 * "15 T", 10100541 $ -> "10.1 M", 12345 -> "12.35 k", 0.000032 ->
 * "0.000032". Four significant digits, trailing zeros cut. A duration
 * reads in seconds, minutes, hours or days. */
#ifndef DDLSIM_HUMAN_H
#define DDLSIM_HUMAN_H

#include <stddef.h>

/* Write x into buf (n bytes, cut if too small): below 10,000 in absolute
 * value in plain decimals (4 significant digits, at most 12 decimals);
 * above, scaled to a prefix k, M, G, T, P, E followed by a space ("15 T",
 * "10.1 M"). Not finite: "-". Returns buf. */
char *human_number(double x, char *buf, size_t n);

/* x in the unit human_number() gives `like` (a column's largest, a
 * range's end): 8393000 like 11.4e6 -> "8.393 M", not "8393 k". Not
 * finite: "-". Returns buf. */
char *human_scaled(double x, double like, char *buf, size_t n);

/* A range lo .. hi in one unit: both numbers scaled by the prefix
 * human_number() gives the larger in absolute value, so a range never
 * mixes prefixes: "$9.8 M – $11.4 M", "$8 M – $12 M" (not "8000 k – 12 M"),
 * "82.6 – 104".
 * pre goes before each number ("$"), unit after the second (" days");
 * either may be "" (NULL: ""). Not finite: "-". Returns buf. */
char *human_range(double lo, double hi, const char *pre, const char *unit, char *buf, size_t n);

/* Write a duration of s seconds into buf (n bytes) in the unit a reader
 * wants: "3.5 s" below 10 s, "45 s" below a minute, "2.1 min", "1.5 h"
 * below two days, "3.2 d". Not finite or negative: "-". Returns buf. */
char *human_duration(double s, char *buf, size_t n);

#endif
