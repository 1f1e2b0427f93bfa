/* kineto-private: what kineto.c and kineto_stream.c share. */
#ifndef DDLSIM_KINETO_PRIVATE_H
#define DDLSIM_KINETO_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Read the JSON text buf[0..len) as a trace's top-level object one event
 * at a time (kineto_stream.c): each element of "traceEvents" is decoded
 * alone, given to on_event(ctx, event, index) and released, so the text
 * and the events kept by on_event are all that is held; the other
 * top-level keys are returned in a new object ("traceEvents" there only
 * when it is not an array). Returns NULL when the text is not an object
 * read so (a syntax error, a duplicate key, another top level): then the
 * caller decodes it whole, which says what is wrong where. */
json_t *kineto_stream(const char *buf, size_t len, void (*on_event)(void *ctx, json_t *e, int i),
		      void *ctx, bool *had_events);

#endif
