/*
 * rt.h -- the simrun guest runtime.
 *
 * Guest programs are built with -nostdlib -ffreestanding: the only headers
 * available are gcc's freestanding ones (stdint.h, stddef.h, stdarg.h,
 * limits.h ...).  This header declares everything else they may use:
 *
 *   - raw Linux syscalls: write and exit_group only, so that a simulator
 *     needs nothing more to run the whole suite;
 *   - line-buffered output of strings and numbers (there is no printf);
 *   - a result digest and self-check helpers: a program feeds its results
 *     into a digest, checks them against independently computed or
 *     known values, and returns rt_finish(digest) from main;
 *   - a small deterministic PRNG;
 *   - the mem and str functions gcc may call on its own.
 */
#ifndef SIMRUN_RT_H
#define SIMRUN_RT_H

#include <stddef.h>
#include <stdint.h>

#define NOINLINE __attribute__((noinline))
/* not inlined and not specialised for constant arguments either */
#define NOIPA __attribute__((noipa))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* syscalls */
long sys_write(int fd, const void *buf, size_t len);
__attribute__((noreturn)) void sys_exit_group(int status);

/*
 * Output to fd 1.  Bytes collect in a small buffer that is written out at
 * every newline, when it fills up, and by out_flush / rt_finish.
 */
void out_char(int c);
void out_str(const char *s);
void out_u64(uint64_t v);              /* unsigned decimal */
void out_i64(int64_t v);               /* signed decimal */
void out_hex(uint64_t v, int digits);  /* "0x" + exactly `digits` hex digits (1..16) */
void out_nl(void);
void out_flush(void);

/* One "label value" line each. */
void say_u(const char *label, uint64_t v);
void say_i(const char *label, int64_t v);
void say_x(const char *label, uint64_t v);      /* 16 hex digits */
void say_x32(const char *label, uint32_t v);    /* 8 hex digits */

/*
 * Self-checks.  A failing check prints "FAIL <what>: got ... want ..." and
 * is counted; the exit status then has bit 7 set (see rt_finish).
 */
extern int rt_failures;
int check_eq(const char *what, uint64_t got, uint64_t want);
int check(const char *what, int ok);

/* Fold a 64-bit value into a running digest (order sensitive). */
uint64_t digest_add(uint64_t d, uint64_t v);

/*
 * Print the digest and the verdict and return the exit status:
 * bits 0..6 are the folded digest, bit 7 is set if any check failed.
 * Use as `return rt_finish(d);` at the end of main.
 */
int rt_finish(uint64_t digest);

/* argv[idx] as an unsigned decimal number, or dflt if absent/invalid. */
uint64_t arg_u64(int argc, char **argv, int idx, uint64_t dflt);

/* splitmix64: deterministic pseudo-random numbers from a 64-bit state. */
uint64_t rng_next(uint64_t *state);
/* uniform-ish value in [0, bound), bound > 0 */
uint64_t rng_below(uint64_t *state, uint64_t bound);

/* gcc may emit calls to these even in freestanding code. */
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);

#endif
