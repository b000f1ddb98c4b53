	.text
	.p2align 2
	.globl	victim
	.type	victim, %function
victim:
	.cfi_startproc
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	mov	x1, #0x1234
	str	x1, [sp, #8]		// saved x30 := 0x1234
	str	x29, [sp]		// saved x29 := the record itself
	bl	leaf
	ldp	x29, x30, [sp], #16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret				// to 0x1234
	.cfi_endproc
	.size	victim, . - victim

	.type	leaf, %function
leaf:
	.cfi_startproc
	add	x0, x0, #1
	add	x0, x0, #1
	ret
	.cfi_endproc
	.size	leaf, . - leaf

	.section .note.GNU-stack, "", %progbits
