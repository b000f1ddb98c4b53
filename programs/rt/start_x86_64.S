# simrun guest runtime -- entry point for the x86-64 host reference build
# (make host-check): runs the same programs natively so their expected
# output does not come from qemu alone.  Not one of the simulated configs.
#   (%rsp) = argc, 8(%rsp) = argv[0] ..., NULL, envp ..., NULL, auxv
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	movq	(%rsp), %rdi		# argc
	leaq	8(%rsp), %rsi		# argv
	leaq	8(%rsi,%rdi,8), %rdx	# envp
	andq	$-16, %rsp		# call with a 16-byte aligned stack
	call	main
	movl	%eax, %edi
	movl	$231, %eax		# exit_group
	syscall
	hlt
	.cfi_endproc
	.size	_start, . - _start

	.section .note.GNU-stack, "", @progbits
