/*
 * sort -- four sorting algorithms over pseudo-random arrays of different
 * element widths:
 *   - insertion sort of 80 signed 32-bit values (negative ones included),
 *   - heapsort of 200 unsigned 64-bit values,
 *   - bottom-up merge sort of 256 signed 16-bit values via a scratch array,
 *   - counting sort of 320 bytes, compared with a copy whose first quarter
 *     is insertion-sorted and the rest counting-sorted, then merged.
 * Each result is checked for order and for being a permutation of the
 * input (sum and xor of the elements; for the bytes, the two methods agree).
 * Exercises signed/unsigned compares of every width, sign-extending and
 * zero-extending loads, indexed addressing, and data-dependent branches.
 */
#include "rt.h"

#define N32 80
#define N64 200
#define N16 256
#define N8 320

static int32_t a32[N32];
static uint64_t a64[N64];
static int16_t a16[N16], tmp16[N16];
static uint8_t a8[N8], b8[N8];

static void insertion_i32(int32_t *v, int n)
{
	for (int i = 1; i < n; i++) {
		int32_t key = v[i];
		int j = i - 1;
		while (j >= 0 && v[j] > key) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = key;
	}
}

static void sift_down(uint64_t *v, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && v[child + 1] > v[child])
			child++;
		if (v[root] >= v[child])
			return;
		uint64_t t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

static void heapsort_u64(uint64_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (size_t end = n - 1; end > 0; end--) {
		uint64_t t = v[0];
		v[0] = v[end];
		v[end] = t;
		sift_down(v, 0, end);
	}
}

static void merge_sort_i16(int16_t *v, int16_t *scratch, int n)
{
	for (int width = 1; width < n; width *= 2) {
		for (int lo = 0; lo < n; lo += 2 * width) {
			int mid = lo + width < n ? lo + width : n;
			int hi = lo + 2 * width < n ? lo + 2 * width : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				scratch[k++] = v[i] <= v[j] ? v[i++] : v[j++];
			while (i < mid)
				scratch[k++] = v[i++];
			while (j < hi)
				scratch[k++] = v[j++];
		}
		memcpy(v, scratch, (size_t)n * sizeof *v);
	}
}

static void counting_u8(uint8_t *v, int n)
{
	uint16_t count[256];
	memset(count, 0, sizeof count);
	for (int i = 0; i < n; i++)
		count[v[i]]++;
	int k = 0;
	for (int b = 0; b < 256; b++)
		for (unsigned c = count[b]; c; c--)
			v[k++] = (uint8_t)b;
}

static void insertion_u8(uint8_t *v, int n)
{
	for (int i = 1; i < n; i++) {
		uint8_t key = v[i];
		int j = i;
		for (; j > 0 && v[j - 1] > key; j--)
			v[j] = v[j - 1];
		v[j] = key;
	}
}

int main(int argc, char **argv, char **envp)
{
	uint64_t rng = 0x5eed5011;
	uint64_t d = 0;

	/* signed 32-bit, insertion sort */
	int64_t sum32 = 0;
	for (int i = 0; i < N32; i++) {
		a32[i] = (int32_t)rng_next(&rng) >> 4;
		sum32 += a32[i];
	}
	insertion_i32(a32, N32);
	int ok = 1;
	int64_t after32 = a32[0];
	for (int i = 1; i < N32; i++) {
		ok &= a32[i - 1] <= a32[i];
		after32 += a32[i];
	}
	check("insertion sort order", ok);
	check_eq("insertion sort sum", (uint64_t)after32, (uint64_t)sum32);
	say_i("i32 min", a32[0]);
	say_i("i32 median", a32[N32 / 2]);
	say_i("i32 max", a32[N32 - 1]);
	for (int i = 0; i < N32; i++)
		d = digest_add(d, (uint64_t)(int64_t)a32[i]);

	/* unsigned 64-bit, heapsort */
	uint64_t sum64 = 0, xor64 = 0;
	for (int i = 0; i < N64; i++) {
		a64[i] = rng_next(&rng);
		if (i % 7 == 0)
			a64[i] = a64[i / 2];	/* some duplicates */
		sum64 += a64[i];
		xor64 ^= a64[i];
	}
	heapsort_u64(a64, N64);
	ok = 1;
	uint64_t s2 = a64[0], x2 = a64[0];
	for (int i = 1; i < N64; i++) {
		ok &= a64[i - 1] <= a64[i];
		s2 += a64[i];
		x2 ^= a64[i];
	}
	check("heapsort order", ok);
	check_eq("heapsort sum", s2, sum64);
	check_eq("heapsort xor", x2, xor64);
	say_x("u64 min", a64[0]);
	say_x("u64 max", a64[N64 - 1]);
	for (int i = 0; i < N64; i += 3)
		d = digest_add(d, a64[i]);

	/* signed 16-bit, merge sort */
	int32_t sum16 = 0;
	for (int i = 0; i < N16; i++) {
		a16[i] = (int16_t)rng_next(&rng);
		sum16 += a16[i];
	}
	merge_sort_i16(a16, tmp16, N16);
	ok = 1;
	int32_t s16 = a16[0];
	for (int i = 1; i < N16; i++) {
		ok &= a16[i - 1] <= a16[i];
		s16 += a16[i];
	}
	check("merge sort order", ok);
	check_eq("merge sort sum", (uint64_t)s16, (uint64_t)sum16);
	say_i("i16 min", a16[0]);
	say_i("i16 max", a16[N16 - 1]);
	for (int i = 0; i < N16; i++)
		d = digest_add(d, (uint64_t)a16[i]);

	/* bytes: counting sort vs insertion sort */
	for (int i = 0; i < N8; i++)
		a8[i] = b8[i] = (uint8_t)(rng_next(&rng) >> 56);
	counting_u8(a8, N8);
	insertion_u8(b8, N8 / 4);	/* the first quarter only: O(n^2) */
	counting_u8(b8 + N8 / 4, N8 - N8 / 4);
	/* merge the two sorted parts of b8 into tmp (as bytes) */
	uint8_t merged[N8];
	int i = 0, j = N8 / 4, k = 0;
	while (i < N8 / 4 && j < N8)
		merged[k++] = b8[i] <= b8[j] ? b8[i++] : b8[j++];
	while (i < N8 / 4)
		merged[k++] = b8[i++];
	while (j < N8)
		merged[k++] = b8[j++];
	check("byte sorts agree", memcmp(merged, a8, N8) == 0);
	say_u("u8 median", a8[N8 / 2]);
	for (int i = 0; i < N8; i += 8)
		d = digest_add(d, a8[i]);

	return rt_finish(d);
}
