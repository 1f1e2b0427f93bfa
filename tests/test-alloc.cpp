/* test-alloc: the process's operator new and delete (engine/engine_alloc.cpp):
 * small freed blocks stay allocated on their class's list and come back
 * on the next new of that class; large ones go back to malloc.
 *
 * glibc's own counters tell the two apart: mallinfo2().uordblks (bytes in
 * chunks malloc has handed out) does not fall when a pooled block is
 * deleted, and does not rise when it is taken again. */
#include <criterion/criterion.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <new>

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
