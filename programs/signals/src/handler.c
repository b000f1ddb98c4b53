/* Handlers reading their siginfo and ucontext: raise (tgkill), kill,
 * sigqueue (rt_sigqueueinfo), a signal left pending while blocked, a
 * handler without SA_SIGINFO, SA_RESETHAND and SA_NODEFER. The frame is
 * dumped byte for byte (less si_pid and si_uid, which are the host's under
 * qemu), so any difference in its layout shows in stdout. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include "dump.h"

static volatile int hits, depth, maxdepth, calls;

static void show(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	printf("handler sig=%d signo=%d code=%d errno=%d uc-info=%ld\n", sig, si->si_signo,
	       si->si_code, si->si_errno, (long)((char *)uc - (char *)si));
	if (si->si_code == SI_QUEUE)
		printf("  sigval=%d\n", si->si_value.sival_int);
	printf("  uc_flags=%lx uc_link=%p ss_flags=%d ss_size=%zu\n", (unsigned long)uc->uc_flags,
	       (void *)uc->uc_link, uc->uc_stack.ss_flags, uc->uc_stack.ss_size);
	printf("  mask in frame: %lx\n", ((unsigned long *)&uc->uc_sigmask)[0]);
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("  mask in handler: %lx\n", ((unsigned long *)&now)[0]);
	if (hits > 0 && si->si_code != SI_QUEUE) { /* one full dump, and sigqueue's */
		hits++;
		return;
	}
	dump("  siginfo head", si, 16);
	dump("  siginfo tail", (char *)si + 24, 128 - 24);
#if defined(__aarch64__)
	mcontext_t *mc = &uc->uc_mcontext;
	printf("  pc-handler=%ld sp-frame=%ld pstate=%llx fault_address=%llx\n",
	       (long)(mc->pc - (unsigned long)show), (long)(mc->sp - (unsigned long)si),
	       mc->pstate, mc->fault_address);
	dump("  uc up to __reserved", uc, offsetof(ucontext_t, uc_mcontext.__reserved));
	dump("  __reserved records", mc->__reserved, 528 + 16);
#elif defined(__s390x__)
	dump("  ucontext", uc, 1024);
#endif
	hits++;
}

static void plain(int sig)
{
	printf("plain handler sig=%d\n", sig);
	hits++;
}

static void nested(int sig)
{
	depth++;
	if (depth > maxdepth)
		maxdepth = depth;
	if (++calls < 3)
		raise(sig);
	depth--;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = show;
	sa.sa_flags = SA_SIGINFO;
	sigaddset(&sa.sa_mask, SIGUSR2);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;

	printf("raise: %d\n", raise(SIGUSR1));
	printf("kill: %d\n", kill(getpid(), SIGUSR1));
	union sigval v = {.sival_int = 42};
	printf("sigqueue: %d\n", sigqueue(getpid(), SIGUSR1, v));

	/* Blocked: pending until unblocked, then delivered once. */
	sigset_t set, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
	raise(SIGUSR1);
	sigpending(&pend);
	printf("pending while blocked: %d (hits %d)\n", sigismember(&pend, SIGUSR1), hits);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	sigpending(&pend);
	printf("after unblock: pending %d hits %d\n", sigismember(&pend, SIGUSR1), hits);

	/* Without SA_SIGINFO (s390x: the old sigframe and sigreturn). */
	signal(SIGUSR2, plain);
	raise(SIGUSR2);

	/* SA_RESETHAND: the second raise finds the default action, which
	 * for SIGWINCH is to ignore it. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = plain;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGWINCH, &sa, NULL);
	raise(SIGWINCH);
	raise(SIGWINCH);
	struct sigaction old;
	sigaction(SIGWINCH, NULL, &old);
	printf("after SA_RESETHAND: handler is default %d\n", old.sa_handler == SIG_DFL);

	/* SA_NODEFER: the handler is entered again from inside itself. */
	sa.sa_handler = nested;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGHUP, &sa, NULL);
	raise(SIGHUP);
	printf("SA_NODEFER depth %d\n", maxdepth);
	depth = maxdepth = calls = 0;
	sa.sa_flags = 0;
	sigaction(SIGHUP, &sa, NULL);
	raise(SIGHUP);
	printf("without it depth %d\n", maxdepth);

	/* Ignored signals and one whose default is to ignore. */
	signal(SIGTERM, SIG_IGN);
	raise(SIGTERM);
	raise(SIGCHLD);
	printf("hits %d\n", hits);
	return 0;
}
