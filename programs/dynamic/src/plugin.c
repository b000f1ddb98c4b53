/* plugin: loads libplug.so (found through the program's DT_RUNPATH,
   $ORIGIN) with dlopen, runs its hot loop with a callback into the
   program, unloads it, loads it again, and at last unloads it from a
   callback the library called: the rest of the run has a return address
   into the unmapped library on its stack (profilers and unwinders must
   stop there, not fail). Deterministic output; arguments are ignored. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef long (*work_fn)(long (*)(long), long);

static void *lib;

__attribute__((noinline)) long square_mod(long x)
{
	return (x * x + 7) % 1000003;
}

/* Called by plug_drive: unloads the library under its caller's frame,
   works, and exits without returning into it. */
__attribute__((noinline)) long unload(long x)
{
	if (dlclose(lib) != 0) {
		printf("dlclose: %s\n", dlerror());
		exit(1);
	}
	long s = 0;
	for (long i = 0; i < 100000; i++)
		s += square_mod(i + x);
	printf("after unload: %ld\n", s);
	fflush(stdout);
	exit(0);
}

static void *load(void)
{
	void *h = dlopen("libplug.so", RTLD_NOW);
	if (h == NULL) {
		printf("dlopen: %s\n", dlerror());
		exit(1);
	}
	return h;
}

int main(void)
{
	for (int round = 0; round < 2; round++) {
		lib = load();
		work_fn work = (work_fn)dlsym(lib, "plug_work");
		if (work == NULL) {
			printf("dlsym: %s\n", dlerror());
			return 1;
		}
		printf("round %d: %ld\n", round, work(square_mod, 100000));
		if (round == 0 && dlclose(lib) != 0) {
			printf("dlclose: %s\n", dlerror());
			return 1;
		}
	}
	work_fn drive = (work_fn)dlsym(lib, "plug_drive");
	return (int)drive(unload, 3); /* unload exits */
}
