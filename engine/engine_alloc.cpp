/* engine_alloc: the process's operator new and delete, which keep small
 * freed blocks on free lists for the engine's next event.
 *
 * SimGrid allocates and frees a handful of small C++ objects for every
 * simulated event: the s4u and kernel halves of a transfer, its network
 * action, a semaphore or barrier acquisition, a sleep, the observer of
 * each simcall. glibc's thread cache holds 7 free blocks of a size; the
 * rest go through its bins (split, coalesced, consolidated), and
 * malloc/free took 20 % of an unfolded run (Llama-2 70B TP 8 x PP 4 on
 * 256 GPUs). Here a freed block of up to MAX_BYTES goes onto its size
 * class's list, per thread, and the next new of that class takes it back:
 * the same as an unbounded thread cache (GLIBC_TUNABLES
 * glibc.malloc.tcache_count), without the environment.
 *
 * A block comes from malloc in its class's size (16 k + 8 bytes: a chunk
 * with exactly that usable size), so unsized delete finds the class from
 * malloc_usable_size(); a block malloc rounded up serves a larger class.
 * Sized delete (what SimGrid's objects get: 2 million calls of an
 * unfolded 64-GPU run) takes the class of the size its new asked for,
 * which is at most the block's (a block of class k was taken from list
 * k, or made of 16 k + 8 bytes, or rounded up): 13 instructions of
 * malloc_usable_size fewer a call, 1 % of the run's. Larger blocks go
 * straight to malloc and free. Blocks on the lists stay allocated (the peak of each class,
 * not returned to the system before the process ends); a list is its
 * thread's, so no lock (a block freed on another thread joins that
 * thread's lists). The aligned forms (std::align_val_t) stay the
 * library's: they pair with each other only.
 *
 * Replacing these functions is the C++ standard's own hook
 * ([new.delete]): the definitions in the executable serve every library
 * it loads, SimGrid included.
 *
 * Huge pages (engine_alloc_huge_pages, called once before SimGrid
 * starts): the heap the engine's objects and its actors' stacks come
 * from (SimGrid 3.32 takes an actor's stack from malloc when it has no
 * guard pages, ContextSwapped.cpp) is advised transparent huge pages
 * (madvise MADV_HUGEPAGE, which the kernel's THP mode "madvise"
 * honours), as glibc's tunable glibc.malloc.hugetlb=1 does, without the
 * environment: malloc grows the heap 16 MiB at a time (M_TOP_PAD; it
 * also fixes glibc's mmap threshold at its 128 KiB) and the slow path of
 * new advises what it grew by. An unfolded run's cost per event grew
 * with its ranks while its instructions per event did not (callgrind,
 * Llama 2 70B TP 8 x PP 4 on the 2:1 tree, 4 micro-batches a replica:
 * 9,348 instructions per event at 256 GPUs, 9,715 at 1,024; with 16,
 * 1.6 and 3.0 CPU us per event): the time goes to memory accesses over
 * a resident set of hundreds of megabytes (this machine exposes no cache
 * or TLB counters to say which). With huge pages, the user CPU of
 * that 1,024-GPU run went from 20.6 to 18.2 s and from 17.5 to 16.3,
 * the bench's unfolded 256-GPU row of that model from 19.0 to 17.1,
 * GPT-3 175B DP 2,048 unfolded from 16.2 to 14.9 (each pair run side by
 * side on a loaded 2-core machine, 2026-12-07; system CPU up by up to
 * 0.6 s, the kernel zeroing 2 MiB pages; peak RSS up 1 to 4 %), their
 * reports the same. The figures do not depend on where objects lie.
 * Where the kernel has no THP, madvise fails and nothing changes. */
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t NCLASS = 32;                    /* classes 1..NCLASS */
constexpr std::size_t MAX_BYTES = 16 * NCLASS + 8;    /* 520 */

struct free_block {
	free_block *next;
};

thread_local free_block *g_free[NCLASS + 1];

constexpr int HEAP_PAD_B = 16 << 20;      /* M_TOP_PAD: the heap grows by that */
bool g_huge;                              /* engine_alloc_huge_pages was called */
std::uintptr_t g_advised;                 /* the heap below this is advised */

/* Advise huge pages over what the heap grew by since the last call
 * (sbrk(0) reads glibc's break, no system call). */
void huge_cover()
{
	auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
	if (top <= g_advised)
		return;
	auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
	std::uintptr_t from = g_advised & ~(page - 1);
	(void)madvise(reinterpret_cast<void *>(from), top - from, MADV_HUGEPAGE);
	g_advised = top;
}

/* The class of a request of n bytes (n <= MAX_BYTES): the least k >= 1
 * with 16 k + 8 >= n. */
inline std::size_t class_of(std::size_t n)
{
	return n <= 24 ? 1 : (n - 8 + 15) / 16;
}

void *pool_alloc(std::size_t n)
{
	if (n > MAX_BYTES)
		return std::malloc(n ? n : 1);
	std::size_t k = class_of(n);
	free_block *b = g_free[k];
	if (b) {
		g_free[k] = b->next;
		return b;
	}
	void *p = std::malloc(16 * k + 8);
	if (g_huge)
		huge_cover();
	return p;
}

void pool_free(void *p)
{
	if (!p)
		return;
	std::size_t k = (malloc_usable_size(p) - 8) / 16;
	if (k > NCLASS) {
		std::free(p);
		return;
	}
	free_block *b = static_cast<free_block *>(p);
	b->next = g_free[k];
	g_free[k] = b;
}

/* A block of n bytes (the size its new asked for: sized delete) goes
 * to the class it was taken from, without asking malloc its size. */
void pool_free_sized(void *p, std::size_t n)
{
	if (!p)
		return;
	if (n > MAX_BYTES) {
		std::free(p);
		return;
	}
	free_block *b = static_cast<free_block *>(p);
	std::size_t k = class_of(n);
	b->next = g_free[k];
	g_free[k] = b;
}

void *pool_new(std::size_t n)
{
	void *p = pool_alloc(n);
	if (!p)
		throw std::bad_alloc();
	return p;
}

} // namespace

extern "C" void engine_alloc_huge_pages(void)
{
	if (g_huge)
		return;
	g_huge = true;
	(void)mallopt(M_TOP_PAD, HEAP_PAD_B);
	/* the heap's first block: what lies before it stays as it was */
	void *p = std::malloc(1);
	g_advised = reinterpret_cast<std::uintptr_t>(p);
	huge_cover();
	std::free(p);
}

void *operator new(std::size_t n)
{
	return pool_new(n);
}

void *operator new[](std::size_t n)
{
	return pool_new(n);
}

void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
	return pool_alloc(n);
}

void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
	return pool_alloc(n);
}

void operator delete(void *p) noexcept
{
	pool_free(p);
}

void operator delete[](void *p) noexcept
{
	pool_free(p);
}

void operator delete(void *p, std::size_t n) noexcept
{
	pool_free_sized(p, n);
}

void operator delete[](void *p, std::size_t n) noexcept
{
	pool_free_sized(p, n);
}

void operator delete(void *p, const std::nothrow_t &) noexcept
{
	pool_free(p);
}

void operator delete[](void *p, const std::nothrow_t &) noexcept
{
	pool_free(p);
}
