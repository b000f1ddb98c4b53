// simrun guest runtime -- process entry point, aarch64 Linux user mode.
//
// The program is a static ET_EXEC without libc.  The kernel starts us with
// every general register undefined except sp, which points at
//     [sp]        argc
//     [sp+8]      argv[0] ... argv[argc-1], NULL
//                 envp[0] ... NULL
//                 auxv pairs ... AT_NULL
// We build main's three arguments from that block, call it, and hand its
// int result to exit_group (syscall 94: number in x8, status in x0).

	.text
	.p2align 2
	.globl	_start
	.type	_start, %function
_start:
	.cfi_startproc
	// There is no caller: tell unwinders the return address is undefined
	// so a backtrace ends in this frame.
	.cfi_undefined x30
	mov	x29, xzr		// frame-pointer chain ends here
	mov	x30, xzr		// no link register either
	ldr	x0, [sp]		// x0 = argc
	add	x1, sp, #8		// x1 = argv
	add	x2, x1, x0, lsl #3	// x2 = &argv[argc] (the NULL)
	add	x2, x2, #8		// x2 = envp
	bl	main
	// w0 = main's return value = exit status
	mov	x8, #94			// exit_group
	svc	#0
	udf	#0			// exit_group does not return
	.cfi_endproc
	.size	_start, . - _start

	.section .note.GNU-stack, "", %progbits
