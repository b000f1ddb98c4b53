/* Faults become signals: each is caught by a SA_SIGINFO handler that
 * prints si_signo, si_code and si_addr (relative to what it should be)
 * and siglongjmps out. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static sigjmp_buf env;
static volatile uintptr_t expect;

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
#if defined(__aarch64__)
	uintptr_t pc = uc->uc_mcontext.pc;
#else
	uintptr_t pc = uc->uc_mcontext.psw.addr;
#endif
	printf("  sig=%d signo=%d code=%d addr-expected=%ld pc-addr=%ld\n", sig, si->si_signo,
	       si->si_code, (long)((uintptr_t)si->si_addr - expect), (long)(pc - (uintptr_t)si->si_addr));
	siglongjmp(env, sig);
}

static int attempt(const char *what, void (*fn)(void))
{
	int sig = sigsetjmp(env, 1);
	if (sig == 0) {
		printf("%s\n", what);
		fn();
		printf("  no signal\n");
	}
	return sig;
}

static char *page;
static volatile uintptr_t low16 = 16, low8 = 8;

static void read_null(void) { expect = 16; printf("%d\n", *(volatile int *)low16); }
static void write_ro(void) { expect = (uintptr_t)page + 100; page[100] = 1; }
static void write_far(void) { expect = 0x1234567000; *(volatile long *)0x1234567000 = 1; }
static void jump_null(void) { expect = 0; ((void (*)(void))0)(); }

static void illegal(void)
{
#if defined(__aarch64__)
	extern char ill_here[];
	expect = (uintptr_t)ill_here;
	__asm__ volatile("ill_here: udf #0");
#else
	extern char ill_here[];
	expect = (uintptr_t)ill_here;
	__asm__ volatile("ill_here: .short 0");
#endif
}

#if defined(__aarch64__)
static void breakpoint(void)
{
	extern char brk_here[];
	expect = (uintptr_t)brk_here;
	__asm__ volatile("brk_here: brk #7");
}

static void misaligned_pc(void)
{
	extern char mis_target[];
	expect = (uintptr_t)mis_target + 2;
	__asm__ volatile("adr x9, mis_target\n add x9, x9, #2\n br x9\n mis_target: nop\n nop" ::: "x9");
}
#else
static volatile int zero;
static void divide(void)
{
	extern char div_here[];
	expect = (uintptr_t)div_here;
	long a = 7, d = zero;
	register long r0 __asm__("r0") = 0;
	register long r1 __asm__("r1") = a;
	__asm__ volatile("div_here: dsgr %0,%2" : "+r"(r0), "+r"(r1) : "r"(d));
	printf("%ld\n", r1);
}
#endif

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	int sigs[] = {SIGSEGV, SIGILL, SIGBUS, SIGTRAP, SIGFPE};
	for (int i = 0; i < 5; i++)
		sigaction(sigs[i], &sa, NULL);
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	int total = 0;
	total += attempt("read of address 16", read_null);
	total += attempt("write to a read-only page", write_ro);
	total += attempt("write to an unmapped page", write_far);
	total += attempt("call through a null pointer", jump_null);
	total += attempt("undefined instruction", illegal);
#if defined(__aarch64__)
	total += attempt("brk", breakpoint);
	total += attempt("misaligned pc", misaligned_pc);
#else
	total += attempt("divide by zero", divide);
#endif
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("total %d, mask after siglongjmp %lx\n", total, ((unsigned long *)&now)[0]);

	/* A synchronous signal that is blocked kills the process, as Linux
	 * does: the handler does not run. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("blocked SIGSEGV\n");
	fflush(stdout);
	*(volatile int *)low8 = 1;
	return 0;
}
