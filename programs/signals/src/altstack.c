/* sigaltstack: a handler with SA_ONSTACK runs on the alternate stack
 * (and sees SS_ONSTACK), one without it on the normal stack; a stack
 * overflow is caught on the alternate stack. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char altbuf[65536] __attribute__((aligned(16)));
static sigjmp_buf env;

static int on_alt(void *p)
{
	return (char *)p >= altbuf && (char *)p < altbuf + sizeof altbuf;
}

static void handler(int sig)
{
	int local;
	stack_t ss;
	sigaltstack(NULL, &ss);
	printf("sig %d: on alternate stack %d, ss_flags %d\n", sig, on_alt(&local), ss.ss_flags);
}

static void overflow_handler(int sig, siginfo_t *si, void *uc)
{
	int local;
	printf("overflow: sig %d code %d, handler on alternate stack %d\n", sig, si->si_code, on_alt(&local));
	siglongjmp(env, 1);
}

static volatile int forever = 1;

static int recurse(volatile char *p)
{
	volatile char buf[4096];
	buf[0] = p ? p[0] + 1 : 0;
	return forever ? recurse(buf) + buf[1] : 0;
}

int main(void)
{
	stack_t ss = {.ss_sp = altbuf, .ss_size = sizeof altbuf, .ss_flags = 0};
	stack_t old;
	printf("sigaltstack: %d\n", sigaltstack(&ss, &old));
	printf("old: flags %d size %zu\n", old.ss_flags, old.ss_size);
	stack_t tiny = {.ss_sp = altbuf, .ss_size = 100};
	printf("too small: %d\n", sigaltstack(&tiny, NULL));

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR1);
	raise(SIGUSR2);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = overflow_handler;
	sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1) == 0)
		recurse(NULL);
	printf("survived the overflow\n");
	return 0;
}
