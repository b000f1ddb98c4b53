/* backtrace() from inside signal handlers: glibc's backtrace walks with
 * libgcc's unwinder, which steps through the signal frame by recognising
 * the signal-return trampoline and reading the saved registers from the
 * frame. Each frame found is named by the nearest of the program's own
 * functions below it, so the output shows whether the walk crossed the
 * signal frame into the interrupted code and on up to main: after a
 * raise() (the frame of raise itself and libc's internals show as
 * "libc"), after a fault, and from a handler on an alternate stack. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

static sigjmp_buf env;
static volatile int sink;
static int *volatile nowhere = (int *)16; /* an unmapped address */

NOINLINE static void on_signal(int sig, siginfo_t *si, void *ctx);
NOINLINE static void leaf_raise(int depth);
NOINLINE static void leaf_fault(int depth);
NOINLINE static void middle(void (*leaf)(int), int depth);
int main(void);

static const struct {
	const char *name;
	uintptr_t addr;
} known[] = {
	{"on_signal", (uintptr_t)on_signal}, {"leaf_raise", (uintptr_t)leaf_raise},
	{"leaf_fault", (uintptr_t)leaf_fault}, {"middle", (uintptr_t)middle},
	{"main", (uintptr_t)main},
};

/* name names the function holding pc: the known function starting at
 * or below it within 1 KiB, else "libc" (raise, the trampoline, start). */
static const char *name(uintptr_t pc)
{
	const char *best = "libc";
	uintptr_t at = 0;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].addr <= pc && pc - known[i].addr < 1024 && known[i].addr >= at)
			best = known[i].name, at = known[i].addr;
	return best;
}

NOINLINE static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)si, (void)ctx;
	void *pcs[64];
	int n = backtrace(pcs, 64);
	printf("signal %d:", sig);
	const char *last = "";
	for (int i = 0; i < n; i++) {
		const char *f = name((uintptr_t)pcs[i]);
		if (strcmp(f, last) != 0) /* a run of libc frames prints once */
			printf(" %s", f);
		last = f;
		if (strcmp(f, "main") == 0)
			break; /* what lies above main is libc's start-up */
	}
	printf("\n");
	if (sig != SIGUSR1)
		siglongjmp(env, 1);
}

NOINLINE static void leaf_raise(int depth)
{
	sink = depth;
	raise(SIGUSR1);
	sink++;
}

NOINLINE static void leaf_fault(int depth)
{
	sink = depth;
	*nowhere = 1; /* SIGSEGV */
	sink++;
}

NOINLINE static void middle(void (*leaf)(int), int depth)
{
	if (depth > 0)
		middle(leaf, depth - 1);
	else
		leaf(depth);
	sink++;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	middle(leaf_raise, 2);
	if (sigsetjmp(env, 1) == 0)
		middle(leaf_fault, 1);

	/* The same on an alternate signal stack. */
	static char stack[64 * 1024];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	middle(leaf_raise, 0);
	if (sigsetjmp(env, 1) == 0)
		middle(leaf_fault, 3);
	return 0;
}
