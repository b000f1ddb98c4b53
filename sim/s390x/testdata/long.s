# The move-long and compare-long instructions, the TOD clock and ecag,
# for the lockstep test against qemu (TestQemuLong assembles this file and
# runs it with the data image of longData at 0x410000).
#
# The data starts with a header: at 8*k the number of cases of kind k, at
# 0x80+8*k the offset of their table (kinds in the order of the code
# below). A case is 64 bytes: the offset of the first operand (from the
# data's start), R1+1, the offset of the second operand, R3+1 (R2+1 for
# mvcl and clcl: the pad and garbage in bits 0-39 too), the pad register
# (the instruction adds its displacement), the offset and the number of
# doublewords of the area a move changes. Each instruction repeats while
# it sets condition code 3; a move is then followed by a checksum of the
# area it changed (r10), so that the lockstep, which compares registers
# and the condition code after every instruction, sees the memory too.
# mvcl and clcl always complete: they run once (mvcl's condition code 3
# is a destructive overlap, where repeating would change nothing).

	.text
	.globl _start
_start:
	llilf	%r13,0x410000

	.macro	cases k, insn, rep=1
	lg	%r11,8*\k(%r13)
	lg	%r12,0x80+8*\k(%r13)
	agr	%r12,%r13
.Lcase\@:
	lg	%r2,0(%r12)
	agr	%r2,%r13
	lg	%r3,8(%r12)
	lg	%r4,16(%r12)
	agr	%r4,%r13
	lg	%r5,24(%r12)
	lg	%r6,32(%r12)
	lgr	%r0,%r2			# the same case in r0, r1, r14, r15
	lgr	%r1,%r3
	lgr	%r14,%r4
	lgr	%r15,%r5
.Lrep\@:
	\insn
	.if	\rep
	jo	.Lrep\@			# cc 3: not done yet
	.endif
	lg	%r8,40(%r12)
	agr	%r8,%r13
	lg	%r9,48(%r12)
	lghi	%r10,0
	ltgr	%r9,%r9
	jz	.Lsummed\@
.Lsum\@:
	rllg	%r10,%r10,7
	xg	%r10,0(%r8)
	la	%r8,8(%r8)
	brctg	%r9,.Lsum\@
.Lsummed\@:
	la	%r12,64(%r12)
	brctg	%r11,.Lcase\@
	.endm

	cases	0, "clcle %r2,%r4,0x123(%r6)"
	cases	1, "clclu %r2,%r4,-0x2468(%r6)"
	cases	2, "clcl %r2,%r4", 0		# complete; cc 3 is mvcl's overlap
	cases	3, "mvcle %r2,%r4,0x123(%r6)"
	cases	4, "mvclu %r2,%r4,0x7ffff(%r6)"
	cases	5, "mvcl %r2,%r4", 0
	cases	6, "mvcle %r2,%r2,0x5a"	# one register pair for both operands
	cases	7, "clcle %r4,%r4,0(%r6)"
	cases	8, "mvcle %r0,%r14,0(%r6)"	# r0 and r14: operands in registers 0, 1, 14, 15
	cases	9, "clcle %r0,%r14,0"

	# The TOD clock: the values differ from qemu's (host time), the
	# condition code (set to 2 first) and the registers must not.
	lay	%r9,0x1f00(%r13)
	lhi	%r7,1
	chi	%r7,0			# cc 2
	stck	0(%r9)
	chi	%r7,0
	stckf	8(%r9)
	chi	%r7,0
	stcke	16(%r9)
	stck	32(%r9)
	stck	40(%r9)
	# ecag for a few attributes (summary, line size of L1, L2 sizes).
	lghi	%r7,0
	ecag	%r7,%r0,0
	ecag	%r8,%r0,0x101
	lghi	%r3,2
	ecag	%r9,%r0,0x21(%r3)
	lghi	%r2,0
	svc	248			# exit_group(0)
