/* A guest that corrupts its own stack (sim/unwind bad-input tests): main
 * calls victim, which overwrites its saved return address with 0x1234
 * and its saved frame pointer (aarch64) or back chain (s390x) with the
 * address of the slot itself (a cycle), calls a leaf, and returns into
 * 0x1234: SIGSEGV. */
long victim(long x);

int main(void)
{
	return (int)victim(41);
}
