/* sanitizer: whether this test binary is built with a sanitizer (.ci/run's
 * ASan/UBSan suite), for the few checks that only hold in an ordinary
 * build. Header-only; C and C++.
 *   TEST_ASAN       AddressSanitizer: its allocator, not glibc's, serves
 *                   malloc (test-alloc.cpp);
 *   TEST_SANITIZED  AddressSanitizer or UndefinedBehaviorSanitizer: the
 *                   build runs several times slower than the optimized one
 *                   the CPU model describes (test-estimate.c). */
#ifndef DDLSIM_TEST_SANITIZER_H
#define DDLSIM_TEST_SANITIZER_H

#define TEST_ASAN 0
#define TEST_SANITIZED 0
#if defined(__SANITIZE_ADDRESS__)
#undef TEST_ASAN
#undef TEST_SANITIZED
#define TEST_ASAN 1
#define TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#undef TEST_ASAN
#define TEST_ASAN 1
#endif
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#undef TEST_SANITIZED
#define TEST_SANITIZED 1
#endif
#endif

#endif
