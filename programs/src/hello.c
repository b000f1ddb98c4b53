/*
 * hello -- the smallest program of the suite: prints a greeting, argc, the
 * arguments and the number of environment strings (0 under `env -i`), and
 * exits with 42 + (argc - 1).  A first target for a new simulator: two
 * syscalls, a few calls, byte loads, no arithmetic to speak of.
 */
#include "rt.h"

int main(int argc, char **argv, char **envp)
{
	out_str("hello, world\n");
	say_i("argc", argc);
	for (int i = 1; i < argc; i++) {
		out_str("arg ");
		out_str(argv[i]);
		out_nl();
	}
	int nenv = 0;
	while (envp[nenv])
		nenv++;
	say_i("envc", nenv);
	return 42 + argc - 1;
}
