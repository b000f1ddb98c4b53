/* abort(): SIGABRT's default action ends the process with status 134,
 * after a handler that returns has run once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static void handler(int sig)
{
	printf("SIGABRT handler ran (sig %d)\n", sig);
	fflush(stdout);
}

int main(void)
{
	signal(SIGABRT, handler);
	printf("calling abort\n");
	fflush(stdout);
	abort();
}
