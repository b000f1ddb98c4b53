/*
 * strings -- byte-string processing, each routine checked against known
 * answers or an inverse:
 *   own strlen/strcpy/strcat/strchr/strrchr/strstr (compared with rt's
 *   strlen/strcmp), in-place reversal, case conversion, signed decimal and
 *   hex formatting and parsing (round trips over edge values), an
 *   insertion sort of words by strcmp, FNV-1a hashes (known values),
 *   word and vowel counts, palindromes, run-length encoding and decoding,
 *   and a Caesar cipher with its inverse.
 * Mostly byte loads/stores (ldrb/strb; llc/stc/ic), compares with zero
 * and char constants, and short data-dependent loops.
 */
#include "rt.h"

static size_t my_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static char *my_strcpy(char *d, const char *s)
{
	char *r = d;
	while ((*d++ = *s++))
		;
	return r;
}

static char *my_strcat(char *d, const char *s)
{
	my_strcpy(d + my_strlen(d), s);
	return d;
}

static const char *my_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return s;
		if (!*s)
			return NULL;
	}
}

static const char *my_strrchr(const char *s, int c)
{
	const char *last = NULL;
	do {
		if (*s == (char)c)
			last = s;
	} while (*s++);
	return last;
}

static const char *my_strstr(const char *hay, const char *needle)
{
	if (!*needle)
		return hay;
	for (; *hay; hay++) {
		const char *h = hay, *n = needle;
		while (*h && *h == *n) {
			h++;
			n++;
		}
		if (!*n)
			return hay;
	}
	return NULL;
}

static void reverse(char *s)
{
	size_t n = my_strlen(s);
	for (size_t i = 0; i < n / 2; i++) {
		char t = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = t;
	}
}

static void upcase(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
}

static int to_dec(char *buf, int64_t v)
{
	char tmp[24];
	int n = 0, len = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[len++] = '-';
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = 0;
	return len;
}

static int64_t from_dec(const char *s)
{
	int neg = *s == '-';
	if (neg || *s == '+')
		s++;
	uint64_t u = 0;
	while (*s >= '0' && *s <= '9')
		u = u * 10 + (uint64_t)(*s++ - '0');
	return neg ? (int64_t)(0 - u) : (int64_t)u;
}

static void to_hex(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789ABCDEF";
	int started = 0, n = 0;
	for (int sh = 60; sh >= 0; sh -= 4) {
		int nib = (int)(v >> sh) & 15;
		if (nib || started || sh == 0) {
			buf[n++] = digits[nib];
			started = 1;
		}
	}
	buf[n] = 0;
}

static uint64_t from_hex(const char *s)
{
	uint64_t v = 0;
	for (;; s++) {
		int c = *s, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return v;
		v = v << 4 | (uint64_t)d;
	}
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int is_palindrome(const char *s)
{
	size_t i = 0, j = my_strlen(s);
	while (j > i + 1) {
		char a = s[i], b = s[j - 1];
		if (a == ' ') { i++; continue; }
		if (b == ' ') { j--; continue; }
		if ((a | 0x20) != (b | 0x20))
			return 0;
		i++;
		j--;
	}
	return 1;
}

/* "aaabcc" -> "3a1b2c" (counts up to 9 per run) */
static void rle_encode(char *out, const char *s)
{
	while (*s) {
		char c = *s;
		int n = 0;
		while (*s == c && n < 9) {
			s++;
			n++;
		}
		*out++ = (char)('0' + n);
		*out++ = c;
	}
	*out = 0;
}

static void rle_decode(char *out, const char *s)
{
	for (; s[0] && s[1]; s += 2)
		for (int n = s[0] - '0'; n > 0; n--)
			*out++ = s[1];
	*out = 0;
}

static void caesar(char *s, int k)
{
	for (; *s; s++) {
		if (*s >= 'a' && *s <= 'z')
			*s = (char)('a' + (*s - 'a' + k) % 26);
		else if (*s >= 'A' && *s <= 'Z')
			*s = (char)('A' + (*s - 'A' + k) % 26);
	}
}

static const char fox[] = "The quick brown fox jumps over the lazy dog";

static uint64_t d;

static void basics(void)
{
	char buf[128];
	check_eq("my_strlen", my_strlen(fox), 43);
	check_eq("rt strlen", strlen(fox), 43);
	my_strcpy(buf, "Hello");
	my_strcat(buf, ", ");
	my_strcat(buf, "world");
	check("strcpy/strcat", strcmp(buf, "Hello, world") == 0);
	check("strcmp order", strcmp("abc", "abd") < 0 && strcmp("b", "abc") > 0 &&
			      strcmp("", "") == 0 && strcmp("ab", "abc") < 0);
	check_eq("strchr", (uint64_t)(my_strchr(fox, 'q') - fox), 4);
	check_eq("strrchr", (uint64_t)(my_strrchr(fox, 'o') - fox), 41);
	check("strchr miss", my_strchr(fox, '!') == NULL);
	check("strchr nul", my_strchr(fox, 0) == fox + 43);
	check_eq("strstr", (uint64_t)(my_strstr(fox, "over") - fox), 26);
	check("strstr miss", my_strstr(fox, "cat") == NULL);
	check_eq("strstr partial", (uint64_t)(my_strstr("aaab", "aab") - "aaab" + 0), 1);

	my_strcpy(buf, fox);
	reverse(buf);
	out_str(buf);
	out_nl();
	d = digest_add(d, fnv1a(buf));
	reverse(buf);
	check("reverse twice", strcmp(buf, fox) == 0);
	upcase(buf);
	out_str(buf);
	out_nl();
	d = digest_add(d, fnv1a(buf));
}

static void numbers(void)
{
	static const int64_t vals[] = {
		0, 1, -1, 9, 10, -10, 99999, -100000, 2147483647, -2147483648ll,
		4294967296ll, INT64_MAX, INT64_MIN, -1234567890123456789ll,
	};
	char buf[32];
	int bad = 0;
	for (unsigned i = 0; i < ARRAY_LEN(vals); i++) {
		int len = to_dec(buf, vals[i]);
		bad += (size_t)len != my_strlen(buf);
		bad += from_dec(buf) != vals[i];
		d = digest_add(d, fnv1a(buf));
		to_hex(buf, (uint64_t)vals[i]);
		bad += from_hex(buf) != (uint64_t)vals[i];
		d = digest_add(d, fnv1a(buf));
	}
	check_eq("number round trips", (uint64_t)bad, 0);
	to_dec(buf, INT64_MIN);
	check("INT64_MIN text", strcmp(buf, "-9223372036854775808") == 0);
	to_hex(buf, 0xdeadbeef0ull);
	check("hex text", strcmp(buf, "DEADBEEF0") == 0);
	check_eq("from_hex lower", from_hex("7fffFFFFffffffff"), INT64_MAX);
	check_eq("from_dec +", (uint64_t)from_dec("+42xyz"), 42);
	out_str("decimal ");
	out_str(buf);
	out_nl();
}

static void words(void)
{
	/* split the fox sentence into words, sort them */
	char text[64], *w[16];
	int n = 0;
	my_strcpy(text, fox);
	for (char *p = text; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		w[n++] = p;
		while (*p && *p != ' ')
			p++;
		if (*p)
			*p++ = 0;
	}
	check_eq("word count", (uint64_t)n, 9);
	for (int i = 1; i < n; i++) {
		char *key = w[i];
		int j = i - 1;
		while (j >= 0 && strcmp(w[j], key) > 0) {
			w[j + 1] = w[j];
			j--;
		}
		w[j + 1] = key;
	}
	out_str("sorted:");
	for (int i = 0; i < n; i++) {
		out_char(' ');
		out_str(w[i]);
		d = digest_add(d, fnv1a(w[i]));
	}
	out_nl();
	check("sorted first", strcmp(w[0], "The") == 0);
	check("sorted last", strcmp(w[n - 1], "the") == 0);

	int vowels = 0;
	for (const char *p = fox; *p; p++)
		vowels += my_strchr("aeiouAEIOU", *p) != NULL && *p;
	check_eq("vowels", (uint64_t)vowels, 11);
}

static void transforms(void)
{
	check_eq("fnv1a(hello)", fnv1a("hello"), 0xa430d84680aabd0bull);
	check_eq("fnv1a()", fnv1a(""), 0xcbf29ce484222325ull);
	check_eq("fnv1a(fox)", fnv1a(fox), 0xf3f9b7f5e7e47110ull);
	say_x("fnv1a(fox)", fnv1a(fox));

	check("palindrome 1", is_palindrome("A man a plan a canal Panama"));
	check("palindrome 2", !is_palindrome("A man a plan a canal Panamx"));
	check("palindrome 3", is_palindrome("x"));

	char enc[128], dec[128];
	static const char *const samples[] = {
		"aaabccddddddddddddde", "abc", "", "zzzzzzzzzzzzzzzzzzzzzzzzzz",
	};
	for (unsigned i = 0; i < ARRAY_LEN(samples); i++) {
		rle_encode(enc, samples[i]);
		rle_decode(dec, enc);
		check("rle round trip", strcmp(dec, samples[i]) == 0);
		d = digest_add(d, fnv1a(enc));
	}
	rle_encode(enc, samples[0]);
	out_str("rle ");
	out_str(enc);
	out_nl();
	check("rle text", strcmp(enc, "3a1b2c9d4d1e") == 0);

	char msg[64];
	my_strcpy(msg, fox);
	caesar(msg, 13);
	out_str(msg);
	out_nl();
	check("rot13", strcmp(msg, "Gur dhvpx oebja sbk whzcf bire gur ynml qbt") == 0);
	caesar(msg, 13);
	check("rot13 twice", strcmp(msg, fox) == 0);
	caesar(msg, 3);
	caesar(msg, 23);
	check("caesar 3+23", strcmp(msg, fox) == 0);
}

int main(int argc, char **argv, char **envp)
{
	basics();
	numbers();
	words();
	transforms();
	return rt_finish(d);
}
