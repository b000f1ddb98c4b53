/*
 * fib -- naive recursive Fibonacci: a call/return benchmark.
 *
 *   fib [N]      (default N = 18)
 *
 * fib_rec(N) makes 2*F(N+1)-1 calls, each a frame push/pop with a
 * compare-and-branch, so the run is dominated by bl/ret (brasl/br %r14),
 * stack stores/loads of the link register and callee-saved registers.
 * The result is checked against an iterative loop (and, for N <= 93,
 * against a table of known values at a few points).  Exit status is
 * derived from F(N).
 */
#include "rt.h"

NOINLINE static uint64_t fib_rec(unsigned n)
{
	if (n < 2)
		return n;
	return fib_rec(n - 1) + fib_rec(n - 2);
}

static uint64_t fib_iter(unsigned n)
{
	uint64_t a = 0, b = 1;
	while (n--) {
		uint64_t t = a + b;
		a = b;
		b = t;
	}
	return a;
}

static const struct {
	unsigned n;
	uint64_t f;
} known[] = {
	{ 0, 0 }, { 1, 1 }, { 2, 1 }, { 10, 55 }, { 18, 2584 }, { 20, 6765 },
	{ 25, 75025 }, { 30, 832040 }, { 40, 102334155 },
	{ 90, 2880067194370816120ull },
};

int main(int argc, char **argv, char **envp)
{
	unsigned n = (unsigned)arg_u64(argc, argv, 1, 18);

	for (unsigned i = 0; i < ARRAY_LEN(known); i++)
		check_eq("fib_iter known value", fib_iter(known[i].n), known[i].f);

	uint64_t r = fib_rec(n);
	out_str("fib(");
	out_u64(n);
	out_str(") = ");
	out_u64(r);
	out_nl();
	check_eq("fib_rec == fib_iter", r, fib_iter(n));
	return rt_finish(digest_add(n, r));
}
