# The extended (128-bit) BFP instructions, for the lockstep test against
# qemu (TestQemuBFP128 assembles this file and runs it with the data image
# of bfp128Data at 0x410000).
#
# The data starts with a header: at 0 the number of cases, at 8 the number
# of FPC rounding modes, from 16 those modes. A case is 64 bytes: the
# extended operands A (0) and B (16), a long C (32), a short D (40) and a
# 64-bit integer G (48). Every instruction runs with the FPC set afresh
# (flags clear) and all operands reloaded: A in the pair f0/f2, B in
# f1/f3, C in f4, D in f5, G in r8; efpc then copies the FPC into r9, so
# that the lockstep, which compares the registers and the condition code
# after every instruction, sees the flags each instruction set.
#
# mxdbr and mxdb are left out: qemu 7.2 takes their first operand as an
# extended pair, where the architecture (and qemu since 8.0) takes a long;
# TestMultiplyLongToExtended checks them against exact products instead.

	.text
	.globl _start
_start:
	llilf	%r13,0x410000
	lg	%r11,0(%r13)
	la	%r12,64(%r13)

	.macro	op insn
	sfpc	%r7
	ld	%f0,0(%r12)
	ld	%f2,8(%r12)
	ld	%f1,16(%r12)
	ld	%f3,24(%r12)
	ld	%f4,32(%r12)
	le	%f5,40(%r12)
	lg	%r8,48(%r12)
	\insn
	efpc	%r9
	.endm

.Lcase:
	# Section 1: the instructions that round by the FPC, in every mode.
	lg	%r10,8(%r13)
	la	%r6,16(%r13)
.Lmode:
	lg	%r7,0(%r6)
	op	"axbr %f0,%f1"
	op	"sxbr %f0,%f1"
	op	"sxbr %f1,%f0"
	op	"mxbr %f0,%f1"
	op	"dxbr %f0,%f1"
	op	"dxbr %f1,%f0"
	op	"sqxbr %f4,%f0"
	op	"sqxbr %f8,%f1"
	op	"fixbra %f4,0,%f0,0"
	op	"fixbra %f12,0,%f1,4"
	op	"ldxbra %f4,0,%f0,0"
	op	"ldxbra %f4,0,%f1,0"
	op	"lexbra %f4,0,%f0,0"
	op	"lexbra %f4,0,%f1,4"
	op	"cfxbra %r2,0,%f0,0"
	op	"cgxbra %r2,0,%f1,0"
	op	"clfxbr %r2,0,%f0,0"
	op	"clgxbr %r2,0,%f1,0"
	la	%r6,8(%r6)
	brctg	%r10,.Lmode

	# Section 2: exact operations and explicit rounding modes.
	lghi	%r7,0
	op	"lxr %f4,%f1"
	op	"lzxr %f8"
	op	"ltxbr %f4,%f0"
	op	"ltxbr %f4,%f1"
	op	"lcxbr %f4,%f1"
	op	"lpxbr %f4,%f1"
	op	"lnxbr %f4,%f1"
	op	"cxbr %f0,%f1"
	op	"cxbr %f1,%f0"
	op	"kxbr %f0,%f1"
	op	"kxbr %f1,%f0"
	.irp	m,0x800,0x400,0x200,0x100,0x80,0x40,0x20,0x10,8,4,2,1,0xfff,0
	op	"tcxb %f0,\m"
	op	"tcxb %f1,\m"
	.endr
	op	"lxdbr %f4,%f4"
	op	"lxebr %f8,%f5"
	op	"lxdb %f8,0(%r12)"
	op	"lxdb %f12,16(%r12)"
	op	"lxeb %f8,40(%r12)"
	op	"lxeb %f8,0(%r12)"
	op	"cxfbra %f4,0,%r8,0"
	op	"cxgbra %f4,0,%r8,0"
	op	"cxlfbr %f4,0,%r8,0"
	op	"cxlgbr %f12,0,%r8,0"
	.irp	m,1,3,4,5,6,7
	op	"fixbra %f4,\m,%f0,0"
	op	"fixbra %f4,\m,%f1,4"
	op	"ldxbra %f4,\m,%f0,0"
	op	"ldxbra %f4,\m,%f1,4"
	op	"lexbra %f4,\m,%f0,4"
	op	"lexbra %f4,\m,%f1,0"
	op	"cfxbra %r2,\m,%f0,0"
	op	"cfxbra %r2,\m,%f1,4"
	op	"cgxbra %r2,\m,%f0,4"
	op	"cgxbra %r2,\m,%f1,0"
	op	"clfxbr %r2,\m,%f0,0"
	op	"clfxbr %r2,\m,%f1,4"
	op	"clgxbr %r2,\m,%f0,4"
	op	"clgxbr %r2,\m,%f1,0"
	.endr

	la	%r12,64(%r12)
	brctg	%r11,.Lcase

	lghi	%r2,0
	svc	1			# exit(0)
