/* hash: a 64-bit key's bits mixed into every bit of the result
 * (splitmix64's finaliser, Steele, Lea and Flood 2014), for the
 * open-addressing tables indexed by a key's low bits: link loads
 * (fabric/coll_build.c), folding's links (engine/fold.c), the engine's
 * mailboxes (engine/engine_rank.c) and class plans (engine/engine_classes.c),
 * the plan screen's collective prices (sim/search.c). Header only. */
#ifndef DDLSIM_HASH_H
#define DDLSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_mix64(uint64_t k)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return k;
}

/* The slot of key k in a table of cap slots, cap a power of two. */
static inline size_t hash_slot(uint64_t k, size_t cap)
{
	return (size_t)(hash_mix64(k) & (cap - 1));
}

#endif
