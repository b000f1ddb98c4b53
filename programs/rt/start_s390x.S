# simrun guest runtime -- process entry point, s390x (64-bit) Linux user mode.
#
# Static ET_EXEC without libc.  At entry %r15 points at
#     0(%r15)    argc
#     8(%r15)    argv[0] ... argv[argc-1], NULL, envp[0] ... NULL, auxv ...
# The s390x ELF ABI lets a callee store registers into a 160-byte save area
# that the caller provides just above the callee's stack pointer, and the
# first doubleword of that area is the back chain (0 = outermost frame).
# main's int result comes back in %r2, which is where exit_group (syscall
# 248, small enough to be the svc immediate) expects the status.

	.text
	.p2align 3
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	# Outermost frame: the return address (r14) is undefined, so
	# unwinders stop here.
	.cfi_undefined %r14
	lg	%r2, 0(%r15)		# r2 = argc
	la	%r3, 8(%r15)		# r3 = argv
	sllg	%r4, %r2, 3		# r4 = argc * 8
	la	%r4, 8(%r4,%r3)		# r4 = envp = argv + argc + 1
	aghi	%r15, -160		# save area for main
	.cfi_adjust_cfa_offset 160
	lghi	%r0, 0
	stg	%r0, 0(%r15)		# back chain = 0
	brasl	%r14, main
	svc	248			# exit_group(r2)
	.short	0			# not reached (0x0000 is an illegal opcode)
	.cfi_endproc
	.size	_start, . - _start

	.section .note.GNU-stack, "", @progbits
