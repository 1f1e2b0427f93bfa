/* test-alloc: the process's operator new and delete (engine/engine_alloc.cpp):
 * small freed blocks stay allocated on their class's list and come back
 * on the next new of that class; large ones go back to malloc.
 *
 * glibc's own counters tell the two apart: mallinfo2().uordblks (bytes in
 * chunks malloc has handed out) does not fall when a pooled block is
 * deleted, and does not rise when it is taken again.
 *
 * Huge pages: after engine_alloc_huge_pages the heap a block of new
 * comes from, and the heap malloc grew to for an actor's stack (SimGrid
 * takes it from malloc), are advised huge pages: their mapping's
 * VmFlags in /proc/self/smaps carry "hg" (the kernel's proc(5)). */
#include <criterion/criterion.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <unistd.h>

#include "sanitizer.h"

static size_t in_use(void)
{
	return mallinfo2().uordblks;
}

/* Under AddressSanitizer its allocator, not glibc's, serves malloc (and
 * its own operator new may be the one linked): the counters and the
 * reuse checked here are glibc's, so the tests say they were skipped. */
#define SKIP_UNDER_SANITIZER() \
	do { \
		if (TEST_ASAN) \
			cr_skip_test("AddressSanitizer's allocator serves this build"); \
	} while (0)

/* Sized delete where the compiler declares it (clang needs
 * -fsized-deallocation before C++14's sized forms are visible). */
static void delete_sized(void *p, std::size_t n)
{
#if defined(__cpp_sized_deallocation)
	::operator delete(p, n);
#else
	(void)n;
	::operator delete(p);
#endif
}

static void delete_sized_array(void *p, std::size_t n)
{
#if defined(__cpp_sized_deallocation)
	::operator delete[](p, n);
#else
	(void)n;
	::operator delete[](p);
#endif
}

Test(alloc, keeps_small_freed_blocks_for_the_next_new)
{
	SKIP_UNDER_SANITIZER();
	enum { N = 1000 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = ::operator new(200);
	size_t held = in_use();
	for (int i = 0; i < N; i++)
		::operator delete(p[i]);
	cr_assert_eq(in_use(), held, "deleting %d blocks of 200 bytes gave %zu bytes back to malloc",
		     N, held - in_use());
	for (int i = 0; i < N; i++)
		p[i] = ::operator new(200);
	cr_assert_eq(in_use(), held, "taking them again asked malloc for %zu bytes", in_use() - held);
	for (int i = 0; i < N; i++)
		delete_sized(p[i], 200);
	cr_assert_eq(in_use(), held);
}

Test(alloc, returns_large_blocks_to_malloc)
{
	SKIP_UNDER_SANITIZER();
	void *p = ::operator new(4096);
	size_t held = in_use();
	::operator delete(p);
	cr_assert_lt(in_use() + 4096, held + 1, "a 4,096-byte block stayed with the pool");
}

Test(alloc, a_class_serves_every_size_it_covers)
{
	SKIP_UNDER_SANITIZER();
	/* 8 and 24 bytes share the first class (a 24-byte block), 100 and
	 * 104 the seventh (120 bytes): the block deleted is the one taken */
	void *a = ::operator new(8);
	uintptr_t was = reinterpret_cast<uintptr_t>(a);
	::operator delete(a);
	a = ::operator new(24);
	cr_assert_eq(reinterpret_cast<uintptr_t>(a), was);
	void *b = ::operator new[](100);
	was = reinterpret_cast<uintptr_t>(b);
	delete_sized_array(b, 100);
	void *c = ::operator new(104, std::nothrow);
	cr_assert_eq(reinterpret_cast<uintptr_t>(c), was);
	cr_assert_geq(malloc_usable_size(c), 104);
	::operator delete(c, std::nothrow);
	::operator delete(a);
}

Test(alloc, a_block_holds_what_was_asked)
{
	for (size_t n = 1; n <= 600; n++) {
		unsigned char *p = static_cast<unsigned char *>(::operator new(n));
		cr_assert_geq(malloc_usable_size(p), n, "%zu bytes asked", n);
		for (size_t i = 0; i < n; i++)
			p[i] = (unsigned char)i;
		delete_sized(p, n);
	}
}

extern "C" void engine_alloc_huge_pages(void);

/* Whether the mapping that holds address a is advised huge pages: its
 * VmFlags line in /proc/self/smaps has the flag "hg". */
static bool advised_huge(const void *a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	cr_assert(f, "cannot read /proc/self/smaps");
	auto x = reinterpret_cast<uintptr_t>(a);
	char line[512];
	bool in = false, found = false, hg = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
			in = x >= lo && x < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			found = true;
			hg = strstr(line, " hg") != nullptr;
			break;
		}
	}
	fclose(f);
	cr_assert(found, "no mapping holds %p", a);
	return hg;
}

Test(alloc, huge_pages_back_the_heap_it_grows)
{
	SKIP_UNDER_SANITIZER();
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		cr_skip_test("this kernel has no transparent huge pages");
	engine_alloc_huge_pages();
	void *o = ::operator new(64);
	cr_assert(advised_huge(o), "a block of new after engine_alloc_huge_pages is not advised");
	/* 160 MiB of 32 KiB stacks, a new after each (SimGrid allocates an
	 * actor's objects beside its stack): the heap grows past the first
	 * 64 MiB it was advised with, and what it grew by is advised too */
	enum { N = 5120 };
	static void *stk[N], *obj[N];
	for (int i = 0; i < N; i++) {
		stk[i] = malloc(32 << 10);
		obj[i] = ::operator new(200 + i % 7 * 16);
	}
	cr_assert(advised_huge(stk[N - 1]), "the last stack's heap is not advised");
	cr_assert(advised_huge(obj[N - 1]), "the last object's heap is not advised");
	for (int i = 0; i < N; i++) {
		free(stk[i]);
		::operator delete(obj[i]);
	}
	::operator delete(o);
}
