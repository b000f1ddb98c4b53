/*
 * interp -- a small stack-machine bytecode interpreter.
 *
 * A two-pass in-program assembler builds a bytecode program that counts
 * the primes below 50 by trial division, computes two gcds through a
 * subroutine (CALL/RET), and the Collatz step count of 27.  The program
 * runs twice: once in an interpreter whose dispatch is a dense switch
 * (a jump table), once in one that uses GNU computed goto (an indirect
 * branch per instruction, "threaded code").  Both must produce the same
 * outputs and step counts, and the outputs must be the known answers
 * (15 primes, gcd 21 and 1, 111 steps).  16-bit operands are decoded
 * byte by byte, so the bytecode is the same on either byte order.
 */
#include "rt.h"

enum op {
	OP_HALT, OP_PUSH, OP_LOAD, OP_STORE, OP_ADD, OP_SUB, OP_MUL, OP_DIV,
	OP_MOD, OP_LT, OP_LE, OP_EQ, OP_NOT, OP_DUP, OP_SWAP, OP_DROP, OP_OVER,
	OP_JMP, OP_JZ, OP_JNZ, OP_CALL, OP_RET, OP_OUT, OP_COUNT
};

/* ---- assembler ---- */

static uint8_t code[256];
static int here;
static int labels[16];

static void emit(enum op o)
{
	code[here++] = (uint8_t)o;
}

static void emit16(enum op o, int v)
{
	code[here++] = (uint8_t)o;
	code[here++] = (uint8_t)((unsigned)v >> 8);
	code[here++] = (uint8_t)v;
}

static void label(int n)
{
	labels[n] = here;
}

enum { L_NLOOP, L_DLOOP, L_PRIME, L_NEXTN, L_DONE, L_GCD, L_GCDEND,
       L_COLLATZ, L_CLOOP, L_CEVEN, L_CNEXT, L_CEND };
enum { V_N, V_COUNT, V_D, V_C, V_STEPS };

static void assemble(void)
{
	here = 0;
	/* primes below 50 */
	emit16(OP_PUSH, 2); emit16(OP_STORE, V_N);
	emit16(OP_PUSH, 0); emit16(OP_STORE, V_COUNT);
	label(L_NLOOP);
	emit16(OP_LOAD, V_N); emit16(OP_PUSH, 50); emit(OP_LT);
	emit16(OP_JZ, labels[L_DONE]);
	emit16(OP_PUSH, 2); emit16(OP_STORE, V_D);
	label(L_DLOOP);
	emit16(OP_LOAD, V_D); emit(OP_DUP); emit(OP_MUL);
	emit16(OP_LOAD, V_N); emit(OP_LE); emit16(OP_JZ, labels[L_PRIME]);
	emit16(OP_LOAD, V_N); emit16(OP_LOAD, V_D); emit(OP_MOD);
	emit16(OP_JZ, labels[L_NEXTN]);
	emit16(OP_LOAD, V_D); emit16(OP_PUSH, 1); emit(OP_ADD); emit16(OP_STORE, V_D);
	emit16(OP_JMP, labels[L_DLOOP]);
	label(L_PRIME);
	emit16(OP_LOAD, V_COUNT); emit16(OP_PUSH, 1); emit(OP_ADD);
	emit16(OP_STORE, V_COUNT);
	label(L_NEXTN);
	emit16(OP_LOAD, V_N); emit16(OP_PUSH, 1); emit(OP_ADD); emit16(OP_STORE, V_N);
	emit16(OP_JMP, labels[L_NLOOP]);
	label(L_DONE);
	emit16(OP_LOAD, V_COUNT); emit(OP_OUT);
	/* gcds */
	emit16(OP_PUSH, 1071); emit16(OP_PUSH, 462); emit16(OP_CALL, labels[L_GCD]);
	emit(OP_OUT);
	emit16(OP_PUSH, 270); emit16(OP_PUSH, -192); emit(OP_NOT); emit16(OP_PUSH, 193);
	emit(OP_SUB); emit(OP_SUB);	/* 270 - (!(-192) - 193) = 463 */
	emit16(OP_PUSH, 192); emit16(OP_CALL, labels[L_GCD]);
	emit(OP_OUT);
	/* Collatz */
	emit16(OP_PUSH, 27); emit16(OP_CALL, labels[L_COLLATZ]); emit(OP_OUT);
	emit(OP_HALT);

	label(L_GCD);			/* ( a b -- gcd ) */
	emit(OP_DUP); emit16(OP_JZ, labels[L_GCDEND]);
	emit(OP_SWAP); emit(OP_OVER); emit(OP_MOD);
	emit16(OP_JMP, labels[L_GCD]);
	label(L_GCDEND);
	emit(OP_DROP); emit(OP_RET);

	label(L_COLLATZ);		/* ( n -- steps ) */
	emit16(OP_STORE, V_C); emit16(OP_PUSH, 0); emit16(OP_STORE, V_STEPS);
	label(L_CLOOP);
	emit16(OP_LOAD, V_C); emit16(OP_PUSH, 1); emit(OP_EQ);
	emit16(OP_JNZ, labels[L_CEND]);
	emit16(OP_LOAD, V_C); emit16(OP_PUSH, 2); emit(OP_MOD);
	emit16(OP_JZ, labels[L_CEVEN]);
	emit16(OP_LOAD, V_C); emit16(OP_PUSH, 3); emit(OP_MUL); emit16(OP_PUSH, 1);
	emit(OP_ADD); emit16(OP_STORE, V_C); emit16(OP_JMP, labels[L_CNEXT]);
	label(L_CEVEN);
	emit16(OP_LOAD, V_C); emit16(OP_PUSH, 2); emit(OP_DIV); emit16(OP_STORE, V_C);
	label(L_CNEXT);
	emit16(OP_LOAD, V_STEPS); emit16(OP_PUSH, 1); emit(OP_ADD);
	emit16(OP_STORE, V_STEPS); emit16(OP_JMP, labels[L_CLOOP]);
	label(L_CEND);
	emit16(OP_LOAD, V_STEPS); emit(OP_RET);
}

/* ---- interpreters ---- */

struct result {
	int64_t out[8];
	int nout;
	uint64_t steps;
	int error;
};

static int operand(const uint8_t *p)	/* signed 16-bit, high byte first */
{
	return (int16_t)(p[0] << 8 | p[1]);
}

NOINLINE static void run_switch(const uint8_t *prog, struct result *res)
{
	int64_t stack[32], vars[8] = { 0 };
	int rstack[8];
	int sp = 0, rsp = 0, pc = 0;
	uint64_t steps = 0;
	res->nout = 0;
	res->error = 0;
	for (;;) {
		uint8_t op = prog[pc];
		int arg = op == OP_PUSH || op == OP_LOAD || op == OP_STORE ||
				  (op >= OP_JMP && op <= OP_CALL)
			  ? operand(prog + pc + 1) : 0;
		steps++;
		switch (op) {
		case OP_HALT: res->steps = steps; return;
		case OP_PUSH: stack[sp++] = arg; pc += 3; break;
		case OP_LOAD: stack[sp++] = vars[arg]; pc += 3; break;
		case OP_STORE: vars[arg] = stack[--sp]; pc += 3; break;
		case OP_ADD: sp--; stack[sp - 1] += stack[sp]; pc++; break;
		case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; pc++; break;
		case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; pc++; break;
		case OP_DIV: sp--; stack[sp - 1] /= stack[sp]; pc++; break;
		case OP_MOD: sp--; stack[sp - 1] %= stack[sp]; pc++; break;
		case OP_LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; pc++; break;
		case OP_LE: sp--; stack[sp - 1] = stack[sp - 1] <= stack[sp]; pc++; break;
		case OP_EQ: sp--; stack[sp - 1] = stack[sp - 1] == stack[sp]; pc++; break;
		case OP_NOT: stack[sp - 1] = !stack[sp - 1]; pc++; break;
		case OP_DUP: stack[sp] = stack[sp - 1]; sp++; pc++; break;
		case OP_SWAP: {
			int64_t t = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = t;
			pc++;
			break;
		}
		case OP_DROP: sp--; pc++; break;
		case OP_OVER: stack[sp] = stack[sp - 2]; sp++; pc++; break;
		case OP_JMP: pc = arg; break;
		case OP_JZ: pc = stack[--sp] == 0 ? arg : pc + 3; break;
		case OP_JNZ: pc = stack[--sp] != 0 ? arg : pc + 3; break;
		case OP_CALL: rstack[rsp++] = pc + 3; pc = arg; break;
		case OP_RET: pc = rstack[--rsp]; break;
		case OP_OUT: res->out[res->nout++ & 7] = stack[--sp]; pc++; break;
		default: res->error = 1; res->steps = steps; return;
		}
		if (sp < 0 || sp > 30 || rsp < 0 || rsp > 7) {
			res->error = 2;
			res->steps = steps;
			return;
		}
	}
}

NOINLINE static void run_threaded(const uint8_t *prog, struct result *res)
{
	static const void *const dispatch[OP_COUNT] = {
		[OP_HALT] = &&do_halt, [OP_PUSH] = &&do_push, [OP_LOAD] = &&do_load,
		[OP_STORE] = &&do_store, [OP_ADD] = &&do_add, [OP_SUB] = &&do_sub,
		[OP_MUL] = &&do_mul, [OP_DIV] = &&do_div, [OP_MOD] = &&do_mod,
		[OP_LT] = &&do_lt, [OP_LE] = &&do_le, [OP_EQ] = &&do_eq,
		[OP_NOT] = &&do_not, [OP_DUP] = &&do_dup, [OP_SWAP] = &&do_swap,
		[OP_DROP] = &&do_drop, [OP_OVER] = &&do_over, [OP_JMP] = &&do_jmp,
		[OP_JZ] = &&do_jz, [OP_JNZ] = &&do_jnz, [OP_CALL] = &&do_call,
		[OP_RET] = &&do_ret, [OP_OUT] = &&do_out,
	};
	int64_t stack[32], vars[8] = { 0 };
	const uint8_t *rstack[8];
	int64_t *sp = stack;
	const uint8_t **rsp = rstack;
	const uint8_t *pc = prog;
	uint64_t steps = 0;
	res->nout = 0;
	res->error = 0;

#define NEXT do { steps++; if (*pc >= OP_COUNT) goto bad; goto *dispatch[*pc]; } while (0)
#define ARG operand(pc + 1)
	NEXT;
do_halt: res->steps = steps; return;
do_push: *sp++ = ARG; pc += 3; NEXT;
do_load: *sp++ = vars[ARG]; pc += 3; NEXT;
do_store: vars[ARG] = *--sp; pc += 3; NEXT;
do_add: sp--; sp[-1] += sp[0]; pc++; NEXT;
do_sub: sp--; sp[-1] -= sp[0]; pc++; NEXT;
do_mul: sp--; sp[-1] *= sp[0]; pc++; NEXT;
do_div: sp--; sp[-1] /= sp[0]; pc++; NEXT;
do_mod: sp--; sp[-1] %= sp[0]; pc++; NEXT;
do_lt: sp--; sp[-1] = sp[-1] < sp[0]; pc++; NEXT;
do_le: sp--; sp[-1] = sp[-1] <= sp[0]; pc++; NEXT;
do_eq: sp--; sp[-1] = sp[-1] == sp[0]; pc++; NEXT;
do_not: sp[-1] = !sp[-1]; pc++; NEXT;
do_dup: sp[0] = sp[-1]; sp++; pc++; NEXT;
do_swap: { int64_t t = sp[-1]; sp[-1] = sp[-2]; sp[-2] = t; } pc++; NEXT;
do_drop: sp--; pc++; NEXT;
do_over: sp[0] = sp[-2]; sp++; pc++; NEXT;
do_jmp: pc = prog + ARG; NEXT;
do_jz: pc = *--sp == 0 ? prog + ARG : pc + 3; NEXT;
do_jnz: pc = *--sp != 0 ? prog + ARG : pc + 3; NEXT;
do_call: *rsp++ = pc + 3; pc = prog + ARG; NEXT;
do_ret: pc = *--rsp; NEXT;
do_out: res->out[res->nout++ & 7] = *--sp; pc++; NEXT;
bad:
	res->error = 1;
	res->steps = steps;
#undef NEXT
#undef ARG
}

int main(int argc, char **argv, char **envp)
{
	assemble();		/* pass 1: label addresses */
	assemble();		/* pass 2: resolved jumps */
	say_u("bytecode bytes", (uint64_t)here);

	struct result a, b;
	run_switch(code, &a);
	run_threaded(code, &b);
	say_u("switch steps", a.steps);
	say_u("threaded steps", b.steps);
	check_eq("switch error", (uint64_t)a.error, 0);
	check_eq("threaded error", (uint64_t)b.error, 0);
	check_eq("same step count", a.steps, b.steps);
	check_eq("output count", (uint64_t)a.nout, 4);
	check_eq("threaded output count", (uint64_t)b.nout, 4);

	static const char *const what[4] = { "primes below 50", "gcd(1071, 462)",
					     "gcd(463, 192)", "collatz steps of 27" };
	static const int64_t want[4] = { 15, 21, 1, 111 };
	uint64_t d = digest_add(0, a.steps);
	for (int i = 0; i < 4 && i < a.nout; i++) {
		say_i(what[i], a.out[i]);
		check_eq(what[i], (uint64_t)a.out[i], (uint64_t)want[i]);
		check_eq("threaded agrees", (uint64_t)b.out[i], (uint64_t)a.out[i]);
		d = digest_add(d, (uint64_t)a.out[i]);
	}
	return rt_finish(d);
}
