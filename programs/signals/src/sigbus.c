/* A file mapping past the file's end: the page holding the end reads as
 * zeros after it, a page wholly past it raises SIGBUS (BUS_ADRERR at the
 * address), before and after mprotect; with the default action the
 * process dies of SIGBUS. The file is the program itself, mapped from
 * its last page. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile uintptr_t expect;

static void handler(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	long off = 0;
#if defined(__s390x__)
	/* Linux names the page (the translation-exception identification);
	 * qemu 7.2 fills SIGBUS's si_addr with unrelated bits: not read. */
	if (sig != SIGBUS)
#endif
		off = (long)((uintptr_t)*(void *volatile *)&si->si_addr - expect);
	printf("  sig=%d signo=%d code=%d addr-expected=%ld\n", sig, si->si_signo, si->si_code, off);
	siglongjmp(env, sig);
}

static volatile char *map;
static volatile long off_in_page;

static void touch(const char *what, volatile char *p, int write)
{
	if (sigsetjmp(env, 1) == 0) {
		printf("%s\n", what);
		expect = (uintptr_t)p;
		if (write)
			*p = 1;
		else
			printf("  read %d\n", *p);
		printf("  no signal\n");
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	/* The size from lseek, not fstat: struct stat holds times that differ
	 * between runs, and the lockstep test compares all memory reads. */
	int fd = open(argv[0], O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	if (size < 0)
		return perror("open"), 1;
	off_t base = size & ~(off_t)4095;
	off_in_page = size - base;
	map = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, base);
	if (map == MAP_FAILED)
		return perror("mmap"), 1;
	struct sigaction sa = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO};
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);

	touch("the file's last byte", map + off_in_page - 1, 0);
	if (off_in_page < 4096)
		touch("after the end, same page", map + off_in_page, 0);
	touch("the next page", map + 4096 + 8, 0);
	touch("the page after", map + 2 * 4096 + 4095, 0);
	touch("writing to a read-only page past the end", map + 4096, 1);
	printf("mprotect: %d\n", mprotect((void *)map, 3 * 4096, PROT_READ | PROT_WRITE));
	touch("writing past the end after mprotect", map + 4096 + 100, 1);
	touch("writing the last page", map + off_in_page - 1, 1);
	printf("munmap: %d\n", munmap((void *)(map + 4096), 4096));
	touch("unmapped now", map + 4096, 0);

	/* sigaction, not signal: glibc's signal copies the old action's
	 * mask through a buffer the kernel fills only 8 bytes of, and the
	 * rest, stale stack, differs between implementations. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(SIGBUS, &dfl, NULL);
	fflush(stdout);
	return map[2 * 4096];
}
