/*
 * switchy -- switch statements.
 *   - dense: 24 consecutive cases, which gcc compiles to a jump table
 *     (aarch64: adr + ldrb/ldrh + add + br; s390x: larl + lg/lgf + br)
 *     at -O0 and -O2;
 *   - sparse: 12 scattered case values (including negative and large
 *     ones), compiled to a tree of compares and branches;
 *   - a switch with fall-through chains, and a character classifier
 *     driven by a switch with case ranges (GNU "case 'a' ... 'z'");
 *   - a small state machine (a switch on the state inside a loop) that
 *     scans numbers and identifiers out of a text.
 * The results are compared with table-driven or known answers.
 */
#include "rt.h"

/* wrapping arithmetic in u; signed operations only where they cannot overflow */
NOIPA static int64_t dense(unsigned op, int64_t x)
{
	uint64_t u = (uint64_t)x;
	switch (op) {
	case 0: return (int64_t)(u + 1);
	case 1: return (int64_t)(u - 3);
	case 2: return (int64_t)(u * 5);
	case 3: return x ^ 0x55;
	case 4: return (int64_t)(u << 3);
	case 5: return x >> 2;
	case 6: return (int64_t)(0 - u);
	case 7: return ~x;
	case 8: return x & 0xff0;
	case 9: return x | 0x100;
	case 10: return (int64_t)(u * u);
	case 11: return x / 3;
	case 12: return x % 11;
	case 13: return (int64_t)(u + 1000);
	case 14: return (int64_t)(u - 77777);
	case 15: return (uint32_t)x;
	case 16: return (int32_t)x;
	case 17: return (int16_t)x;
	case 18: return (uint8_t)x;
	case 19: return x > 0 ? x : (int64_t)(0 - u);
	case 20: return (int64_t)(u * 12345);
	case 21: return (int64_t)(u << 32 | (u & 0xffffffff));
	case 22: return x == 0;
	case 23: return x < 0 ? -1 : 1;
	default: return 424242;
	}
}

NOIPA static int sparse(int64_t key)
{
	switch (key) {
	case -1000000: return 1;
	case -5: return 2;
	case 0: return 3;
	case 7: return 4;
	case 64: return 5;
	case 99: return 6;
	case 1000: return 7;
	case 4096: return 8;
	case 65537: return 9;
	case 1000003: return 10;
	case 0x100000000ll: return 11;
	case 0x7fffffffffffffffll: return 12;
	default: return 0;
	}
}

static const int64_t sparse_keys[] = {
	-1000000, -5, 0, 7, 64, 99, 1000, 4096, 65537, 1000003,
	0x100000000ll, 0x7fffffffffffffffll,
};

/* Duff-style fall-through: case n adds n, n-1, ..., 1 */
NOIPA static int falls(int n)
{
	int s = 0;
	switch (n) {
	case 6: s += 6; /* fall through */
	case 5: s += 5; /* fall through */
	case 4: s += 4; /* fall through */
	case 3: s += 3; /* fall through */
	case 2: s += 2; /* fall through */
	case 1: s += 1; break;
	default: s = -1;
	}
	return s;
}

enum cls { SPACE, DIGIT, LOWER, UPPER, PUNCT, OTHER };

NOIPA static enum cls classify(unsigned char c)
{
	switch (c) {
	case ' ': case '\t': case '\n': return SPACE;
	case '0' ... '9': return DIGIT;
	case 'a' ... 'z': return LOWER;
	case 'A' ... 'Z': return UPPER;
	case '!': case '(': case ')': case ',': case '.': case ';': case '+':
	case '-': case '*': case '/': case '=': return PUNCT;
	default: return OTHER;
	}
}

static const char text[] =
	"x1 = 42 + foo(7, 300) * BAR_9;\n"
	"while (n != 0) { n = n - 1; total = total + n * 13; }\n"
	"return 65535 + 0 + y2k;\t# end";

/* scan: count numbers (and sum them), identifiers, punctuation */
static void scan(const char *s, int *nums, int64_t *numsum, int *idents, int *puncts,
		 int *others)
{
	enum { START, IN_NUM, IN_IDENT } state = START;
	int64_t cur = 0;
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		enum cls k = c ? classify(c) : SPACE;
		if (c == '_')
			k = LOWER;
		switch (state) {
		case IN_NUM:
			if (k == DIGIT) {
				cur = cur * 10 + (c - '0');
				continue;
			}
			(*nums)++;
			*numsum += cur;
			state = START;
			break;
		case IN_IDENT:
			if (k == DIGIT || k == LOWER || k == UPPER)
				continue;
			(*idents)++;
			state = START;
			break;
		case START:
			break;
		}
		if (!c)
			return;
		switch (k) {
		case DIGIT: state = IN_NUM; cur = c - '0'; break;
		case LOWER: case UPPER: state = IN_IDENT; break;
		case PUNCT: (*puncts)++; break;
		case OTHER: (*others)++; break;
		case SPACE: break;
		}
	}
}

int main(int argc, char **argv, char **envp)
{
	uint64_t d = 0, rng = 0x5717c4;

	/* dense: every case, several operands, plus defaults */
	uint64_t acc = 0;
	for (int rep = 0; rep < 30; rep++) {
		int64_t x = (int64_t)rng_next(&rng) >> (rep % 40);
		for (unsigned op = 0; op < 26; op++) {
			int64_t r = dense(op, x);
			acc = acc * 3 + (uint64_t)r;
			d = digest_add(d, (uint64_t)r);
		}
	}
	say_x("dense accumulator", acc);
	check_eq("dense default", (uint64_t)dense(99, 5), 424242);
	check_eq("dense case 17", (uint64_t)dense(17, 0x18000), 0x8000ull ^ 0xffffffffffff0000ull);
	check_eq("dense case 11", (uint64_t)dense(11, -10), (uint64_t)-3);

	/* sparse: hits and misses */
	int hits = 0, sum = 0;
	for (unsigned i = 0; i < ARRAY_LEN(sparse_keys); i++) {
		int r = sparse(sparse_keys[i]);
		check_eq("sparse hit", (uint64_t)r, i + 1);
		for (int64_t delta = -2; delta <= 2; delta++) {
			/* wrapping add: INT64_MAX + 1 must not overflow */
			int m = sparse((int64_t)((uint64_t)sparse_keys[i] + (uint64_t)delta));
			hits += m != 0;
			sum += m;
		}
	}
	for (int64_t k = -20; k < 200; k++)
		sum += sparse(k) * (int)k;
	say_u("sparse hits", (uint64_t)hits);
	say_i("sparse weighted sum", sum);
	check_eq("sparse hits", (uint64_t)hits, 12);
	d = digest_add(d, (uint64_t)sum);

	/* fall-through */
	int64_t f = 0;
	for (int n = -1; n <= 8; n++)
		f = f * 7 + falls(n);
	say_i("fall-through fold", f);
	check_eq("falls(6)", (uint64_t)falls(6), 21);
	check_eq("falls(0)", (uint64_t)(int64_t)falls(0), (uint64_t)-1);
	d = digest_add(d, (uint64_t)f);

	/* classifier over all bytes */
	int counts[6] = { 0 };
	for (int c = 0; c < 256; c++)
		counts[classify((unsigned char)c)]++;
	check_eq("digits", (uint64_t)counts[DIGIT], 10);
	check_eq("lower", (uint64_t)counts[LOWER], 26);
	check_eq("upper", (uint64_t)counts[UPPER], 26);
	check_eq("space", (uint64_t)counts[SPACE], 3);
	check_eq("punct", (uint64_t)counts[PUNCT], 11);

	int nums = 0, idents = 0, puncts = 0, others = 0;
	int64_t numsum = 0;
	for (int rep = 0; rep < 6; rep++)
		scan(text, &nums, &numsum, &idents, &puncts, &others);
	say_u("numbers", (uint64_t)nums);
	say_i("number sum", numsum);
	say_u("identifiers", (uint64_t)idents);
	say_u("punctuation", (uint64_t)puncts);
	say_u("other", (uint64_t)others);
	/* per pass: numbers 42 7 300 0 1 13 65535 0; identifiers x1 foo BAR_9
	   while n n n total total n return y2k end; { } # are "other" */
	check_eq("numbers", (uint64_t)nums, 6 * 8);
	check_eq("number sum", (uint64_t)numsum, 6 * 65898);
	check_eq("identifiers", (uint64_t)idents, 6 * 13);
	check_eq("punctuation", (uint64_t)puncts, 6 * 21);
	check_eq("other", (uint64_t)others, 6 * 3);
	d = digest_add(d, (uint64_t)(nums | idents << 8 | puncts << 16 | others << 24));
	d = digest_add(d, (uint64_t)numsum);
	return rt_finish(d);
}
