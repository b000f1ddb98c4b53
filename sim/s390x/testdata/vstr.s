# The vector string instructions in every variant, for the lockstep test
# against qemu (TestQemuVectorString assembles this file and runs it with
# the data image of vstrData at 0x410000).
#
# The data starts with the number of cases (a doubleword at 0), then from
# 16 one 96-byte case each: V2, V3, and three vstrc controls V4 (for byte,
# halfword and word elements), the last 16 bytes unused. For each case
# every instruction runs with each element size (b, h, f) and each value
# of its flags field that is not reserved: vfae and vstrc all 16 (IN, RT,
# ZS, CS), vfee and vfene 4 (ZS, CS), vistr 2 (CS). Operands and results
# use high registers too (the RXB bits). The lockstep compares the vector
# registers and the condition code after every instruction; tmll between
# the variants sets a known condition code so that a variant without CS
# shows that it keeps it.

	.text
	.globl _start
_start:
	llilf	%r13,0x410000
	lg	%r11,0(%r13)		# cases
	la	%r12,16(%r13)		# the first case
loop:
	vl	%v2,0(%r12)
	vl	%v3,16(%r12)
	vl	%v4,32(%r12)
	vl	%v5,48(%r12)
	vl	%v6,64(%r12)
	vlr	%v18,%v2
	vlr	%v19,%v3
	vlr	%v20,%v4

	.irp	es,0,1,2
	.irp	fl,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	tmll	%r11,0			# cc 0
	vfae	%v1,%v2,%v3,\es,\fl
	.endr
	.endr

	.irp	es,0,1,2
	.irp	fl,0,1,2,3
	tmll	%r12,0xffff		# cc 1 or 2 (the case address)
	vfee	%v17,%v18,%v19,\es,\fl
	vfee	%v1,%v19,%v2,\es,\fl	# the operands swapped
	.endr
	.endr

	.irp	es,0,1,2
	.irp	fl,0,1,2,3
	tmll	%r11,0
	vfene	%v25,%v2,%v3,\es,\fl
	vfene	%v1,%v3,%v18,\es,\fl
	.endr
	.endr

	.irp	es,0,1,2
	.irp	fl,0,1
	tmll	%r12,0xffff
	vistr	%v30,%v18,\es,\fl
	vistr	%v1,%v3,\es,\fl
	.endr
	.endr

	.irp	fl,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	tmll	%r11,0
	vstrc	%v1,%v2,%v3,%v4,0,\fl
	vstrc	%v21,%v18,%v19,%v5,1,\fl
	vstrc	%v1,%v2,%v3,%v6,2,\fl
	vstrc	%v1,%v2,%v3,%v20,1,\fl	# a byte control read as halfwords
	.endr

	la	%r12,96(%r12)
	brctg	%r11,loop
	lghi	%r2,0
	svc	248			# exit_group(0)
