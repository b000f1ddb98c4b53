/* crash: a program that dereferences a null pointer three calls deep, for
 * the test of the fault message (function, file:line, the stack). */
#include <stdio.h>

struct node {
	struct node *next;
	int value;
};

__attribute__((noinline)) static int last_value(struct node *n) {
	while (n->next)
		n = n->next;
	return n->value;
}

__attribute__((noinline)) static int sum_lists(struct node **lists, int count) {
	int s = 0;
	for (int i = 0; i < count; i++)
		s += last_value(lists[i]);
	return s;
}

int main(void) {
	struct node c = {0, 3}, b = {&c, 2}, a = {&b, 1};
	struct node *lists[] = {&a, &b, 0};
	printf("sum %d\n", sum_lists(lists, 3));
	return 0;
}
