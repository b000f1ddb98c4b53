/*
 * pacret -- return-address signing on aarch64 (for stack-tracer and
 * unwinder work; built and checked in every configuration like the other
 * programs, where it is an ordinary call-heavy program).
 *
 * On aarch64 every function below the pragma is compiled as with
 * -mbranch-protection=pac-ret+leaf: "paciasp" signs x30 with the A key and
 * SP as modifier before x30 is saved (or, in a leaf, used), "autiasp"
 * authenticates it before "ret"; the CFI marks the signed region with
 * DW_CFA_AARCH64_negate_ra_state (SFrame rows "[s]").  bkey_chain uses the
 * B key (pacibsp / autibsp, .cfi_b_key_frame, SFrame "pauth = B key");
 * unsigned_mid is compiled without branch protection, so signed and
 * unsigned frames alternate on the stack.  The hints are NOPs on a CPU
 * without pointer authentication (qemu pauth=off, simrun without
 * --pauth), so the program runs the same everywhere; with simrun --pauth
 * the return addresses in x30 and in the frame records really carry a
 * PAC, and an unwinder has to strip it.  (No retaa/braa: those would be
 * undefined without the feature.)
 *
 * What to look for (aarch64-linux-gnu-objdump -d bin/aarch64-O2/pacret):
 * paciasp/autiasp in walk, mix_leaf, apply_all, main; pacibsp/autibsp in
 * bkey_chain; neither in unsigned_mid or in the runtime (rt.c).
 */
#include "rt.h"

#if defined(__aarch64__)
#pragma GCC target("branch-protection=pac-ret+leaf")
#define B_KEY __attribute__((target("branch-protection=pac-ret+leaf+b-key")))
#define UNSIGNED __attribute__((target("branch-protection=none")))
#else
#define B_KEY
#define UNSIGNED
#endif

struct node {
	struct node *left, *right;
	uint64_t value;
};

static struct node pool[63];

/* a signed leaf: x30 is signed and authenticated without being saved */
NOIPA static uint64_t mix_leaf(uint64_t x)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 32);
}

static struct node *build(int lo, int hi)
{
	if (lo > hi)
		return 0;
	int mid = (lo + hi) / 2;
	struct node *n = &pool[mid];
	n->value = (uint64_t)mid * 7 + 1;
	n->left = build(lo, mid - 1);
	n->right = build(mid + 1, hi);
	return n;
}

/* recursion through signed frames, depth up to 6 */
NOIPA static uint64_t walk(const struct node *n, uint64_t acc)
{
	if (!n)
		return mix_leaf(acc);
	acc = walk(n->left, acc + n->value);
	return walk(n->right, acc ^ n->value);
}

NOIPA static uint64_t bkey_chain(uint64_t x, int n);

/* no branch protection: an unsigned frame between signed ones */
NOIPA UNSIGNED static uint64_t unsigned_mid(uint64_t x, int n)
{
	return bkey_chain(x * 3 + 1, n - 1) + 1;
}

/* B-key signed recursion through unsigned_mid */
NOIPA B_KEY static uint64_t bkey_chain(uint64_t x, int n)
{
	if (n <= 0)
		return mix_leaf(x);
	return unsigned_mid(x ^ (uint64_t)n, n) * 5;
}

typedef uint64_t (*op_fn)(uint64_t);

NOIPA static uint64_t op_a(uint64_t x) { return walk(&pool[31], x); }
NOIPA static uint64_t op_b(uint64_t x) { return bkey_chain(x, 4); }
NOIPA static uint64_t op_c(uint64_t x) { return mix_leaf(x + 3); }

static op_fn const ops[] = { op_a, op_b, op_c };

/* indirect calls (blr) from a signed frame */
NOIPA static uint64_t apply_all(uint64_t x, int rounds)
{
	uint64_t d = 0;
	for (int r = 0; r < rounds; r++)
		for (unsigned i = 0; i < ARRAY_LEN(ops); i++)
			d = digest_add(d, ops[i](x + (uint64_t)r));
	return d;
}

int main(int argc, char **argv, char **envp)
{
	uint64_t d = 0;
	struct node *root = build(0, (int)ARRAY_LEN(pool) - 1);
	check_eq("root", (uint64_t)(root - pool), 31);
	uint64_t w = walk(root, 1);
	say_x("walk", w);
	d = digest_add(d, w);
	uint64_t b = bkey_chain(5, 6);
	say_x("bkey_chain", b);
	d = digest_add(d, b);
	uint64_t a = apply_all(11, 20);
	say_x("apply_all", a);
	d = digest_add(d, a);
	check_eq("mix_leaf(0)", mix_leaf(0), 0);
	check_eq("walk is deterministic", walk(root, 1), w);
	return rt_finish(d);
}
