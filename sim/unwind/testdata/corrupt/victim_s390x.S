	.text
	.p2align 3
	.globl	victim
	.type	victim, @function
victim:
	.cfi_startproc
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset %r11, -72
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lay	%r15, -160(%r15)
	.cfi_def_cfa_offset 320
	lghi	%r1, 0x1234
	stg	%r1, 272(%r15)		# saved r14 (CFA-48) := 0x1234
	stg	%r15, 0(%r15)		# back chain := this frame itself
	brasl	%r14, leaf
	lmg	%r11, %r15, 248(%r15)
	.cfi_restore %r11
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14			# to 0x1234
	.cfi_endproc
	.size	victim, . - victim

	.type	leaf, @function
leaf:
	.cfi_startproc
	aghi	%r2, 1
	aghi	%r2, 1
	br	%r14
	.cfi_endproc
	.size	leaf, . - leaf

	.section .note.GNU-stack, "", @progbits
