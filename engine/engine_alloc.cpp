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
 * with exactly that usable size), so delete finds the class from
 * malloc_usable_size() and sized and unsized delete agree; a block malloc
 * rounded up serves a larger class. Larger blocks go straight to malloc
 * and free. Blocks on the lists stay allocated (the peak of each class,
 * not returned to the system before the process ends); a list is its
 * thread's, so no lock (a block freed on another thread joins that
 * thread's lists). The aligned forms (std::align_val_t) stay the
 * library's: they pair with each other only.
 *
 * Replacing these functions is the C++ standard's own hook
 * ([new.delete]): the definitions in the executable serve every library
 * it loads, SimGrid included. */
#include <malloc.h>

#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t NCLASS = 32;                    /* classes 1..NCLASS */
constexpr std::size_t MAX_BYTES = 16 * NCLASS + 8;    /* 520 */

struct free_block {
	free_block *next;
};

thread_local free_block *g_free[NCLASS + 1];

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
	return std::malloc(16 * k + 8);
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

void *pool_new(std::size_t n)
{
	void *p = pool_alloc(n);
	if (!p)
		throw std::bad_alloc();
	return p;
}

} // namespace

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

void operator delete(void *p, std::size_t) noexcept
{
	pool_free(p);
}

void operator delete[](void *p, std::size_t) noexcept
{
	pool_free(p);
}

void operator delete(void *p, const std::nothrow_t &) noexcept
{
	pool_free(p);
}

void operator delete[](void *p, const std::nothrow_t &) noexcept
{
	pool_free(p);
}
