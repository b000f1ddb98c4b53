/*
 * listchase -- pointer chasing through structures laid out in static
 * arrays in shuffled order:
 *   - a singly linked list of 512 nodes whose link order is a random
 *     permutation of the array (every step is a dependent load from a
 *     far-away slot), traversed several times, reversed in place, and
 *     traversed again;
 *   - a binary search tree of 300 nodes allocated from a pool, built from
 *     random keys, then looked up (hits and misses), walked in order
 *     (recursively) and measured.
 * Node fields have mixed widths (pointer, u32, s16, u8) to get loads and
 * stores of every size with both extensions.
 */
#include "rt.h"

#define NNODES 512
#define NTREE 300

struct node {
	struct node *next;
	uint32_t key;
	int16_t delta;
	uint8_t tag;
};

struct tnode {
	struct tnode *left, *right;
	uint32_t key;
	uint16_t count;
};

static struct node nodes[NNODES];
static uint16_t perm[NNODES];
static struct tnode pool[NTREE];
static int pool_used;

static struct node *build_list(uint64_t *rng)
{
	for (int i = 0; i < NNODES; i++)
		perm[i] = (uint16_t)i;
	for (int i = NNODES - 1; i > 0; i--) {	/* Fisher-Yates */
		int j = (int)rng_below(rng, (uint64_t)i + 1);
		uint16_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < NNODES; i++) {
		struct node *n = &nodes[perm[i]];
		n->key = (uint32_t)i * 2654435761u;
		n->delta = (int16_t)(i % 3 == 0 ? -i : i);
		n->tag = (uint8_t)(i * 37);
		n->next = i + 1 < NNODES ? &nodes[perm[i + 1]] : NULL;
	}
	return &nodes[perm[0]];
}

static uint64_t walk(const struct node *n, int64_t *delta_sum, int *len)
{
	uint64_t h = 0;
	int64_t ds = 0;
	int count = 0;
	for (; n; n = n->next) {
		h = (h << 5 | h >> 59) ^ n->key;
		ds += n->delta;
		h += n->tag;
		count++;
	}
	*delta_sum = ds;
	*len = count;
	return h;
}

static struct node *reverse(struct node *n)
{
	struct node *prev = NULL;
	while (n) {
		struct node *next = n->next;
		n->next = prev;
		prev = n;
		n = next;
	}
	return prev;
}

static struct tnode *tree_insert(struct tnode *root, uint32_t key)
{
	struct tnode **link = &root;
	while (*link) {
		struct tnode *t = *link;
		if (key == t->key) {
			t->count++;
			return root;
		}
		link = key < t->key ? &t->left : &t->right;
	}
	struct tnode *t = &pool[pool_used++];
	t->left = t->right = NULL;
	t->key = key;
	t->count = 1;
	*link = t;
	return root;
}

static const struct tnode *tree_find(const struct tnode *t, uint32_t key)
{
	while (t && t->key != key)
		t = key < t->key ? t->left : t->right;
	return t;
}

static int tree_height(const struct tnode *t)
{
	if (!t)
		return 0;
	int l = tree_height(t->left), r = tree_height(t->right);
	return 1 + (l > r ? l : r);
}

static uint32_t inorder_prev;
static int inorder_ok;
static unsigned inorder_total;

static void inorder(const struct tnode *t)
{
	if (!t)
		return;
	inorder(t->left);
	if (inorder_total && t->key <= inorder_prev)
		inorder_ok = 0;
	inorder_prev = t->key;
	inorder_total += t->count;
	inorder(t->right);
}

int main(int argc, char **argv, char **envp)
{
	uint64_t rng = 0x11572c4a5e;
	uint64_t d = 0;

	struct node *head = build_list(&rng);
	int64_t ds = 0;
	int len = 0;
	uint64_t h = 0;
	for (int pass = 0; pass < 3; pass++)
		h ^= walk(head, &ds, &len) + (uint64_t)pass;
	check_eq("list length", (uint64_t)len, NNODES);
	/* sum of +-i for i < 512, minus for multiples of 3 */
	int64_t want_ds = 0;
	for (int i = 0; i < NNODES; i++)
		want_ds += i % 3 == 0 ? -i : i;
	check_eq("list delta sum", (uint64_t)ds, (uint64_t)want_ds);
	say_x("list hash", h);
	say_i("list delta sum", ds);
	d = digest_add(d, h);

	head = reverse(head);
	check("reversed head is last node", head == &nodes[perm[NNODES - 1]]);
	uint64_t hr = walk(head, &ds, &len);
	check_eq("reversed length", (uint64_t)len, NNODES);
	say_x("reversed hash", hr);
	d = digest_add(d, hr);
	head = reverse(head);
	check("double reverse", head == &nodes[perm[0]]);

	/* binary search tree */
	struct tnode *root = NULL;
	uint32_t keys[NTREE];
	for (int i = 0; i < NTREE; i++) {
		keys[i] = (uint32_t)rng_below(&rng, 1000);
		root = tree_insert(root, keys[i]);
	}
	inorder_ok = 1;
	inorder(root);
	check("tree in-order is sorted", inorder_ok);
	check_eq("tree counts", inorder_total, NTREE);
	int found = 0;
	for (int i = 0; i < NTREE; i++)
		found += tree_find(root, keys[i]) != NULL;
	check_eq("all inserted keys found", (uint64_t)found, NTREE);
	int hits = 0;
	for (uint32_t k = 0; k < 1000; k += 7)
		hits += tree_find(root, k) != NULL;
	say_u("distinct keys", (uint64_t)pool_used);
	say_u("tree height", (uint64_t)tree_height(root));
	say_u("hits among multiples of 7", (uint64_t)hits);
	say_u("largest key", inorder_prev);
	d = digest_add(d, (uint64_t)pool_used << 32 | (uint64_t)hits);
	d = digest_add(d, (uint64_t)tree_height(root));
	return rt_finish(d);
}
