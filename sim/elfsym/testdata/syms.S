// Symbol shapes for sim/elfsym's tests, the same source for arm64 and
// s390x: every instruction is a 4-byte nop, so each extent below is
// counted in nops. build.sh links it with each cross compiler.

	.text
	.globl	_start
	.type	_start, %function
_start:				// sized: 2 nops
	nop
	nop
	.size	_start, .-_start

	.globl	sized
	.type	sized, %function
sized:				// sized: 4 nops
	nop
	nop
in_sized:			// label inside sized: to the next symbol (unsized)
	nop
	nop
	.size	sized, .-sized
	nop			// padding after sized: still in_sized
	nop

	.globl	unsized
	.type	unsized, %function
unsized:			// no .size: 3 nops, to the next symbol
	nop
	nop
	nop

	// Aliases, all sized 2 nops: the GLOBAL name without leading
	// underscores, the longer one, wins.
	.weak	alias_weak
	.type	alias_weak, %function
	.type	alias_local, %function
	.globl	__alias
	.type	__alias, %function
	.globl	alias
	.type	alias, %function
	.globl	aliasxx
	.type	aliasxx, %function
	.globl	label_at_alias
alias_weak:
alias_local:
__alias:
alias:
aliasxx:
label_at_alias:			// a label loses to a typed function
	nop
	nop
	.size	alias_weak, .-alias_weak
	.size	alias_local, .-alias_local
	.size	__alias, .-__alias
	.size	alias, .-alias
	.size	aliasxx, .-aliasxx

	// An unsized and a sized symbol at one address: the sized one.
	.type	short_unsized, %function
	.type	short_sized, %function
short_unsized:
short_sized:			// sized: 1 nop
	nop
	.size	short_sized, .-short_sized

handwritten:			// a label outside every function: 2 nops
	nop
	nop

	.type	resolver, %gnu_indirect_function
	.globl	resolver
resolver:			// STT_GNU_IFUNC, sized: 2 nops
	nop
	nop
	.size	resolver, .-resolver

	.type	last_unsized, %function
last_unsized:			// no .size, last in .text: 2 nops to its end,
				// not to hot_unsized after the gap
	nop
	nop

	.section hot, "ax"
	.globl	hot_unsized
	.type	hot_unsized, %function
hot_unsized:			// no .size, alone in its section: 3 nops
	nop
	nop
	nop
end_of_hot:			// a label at the section's end covers nothing

	.data
	.type	object, %object
object:				// data: not a function
	.quad	1
	.size	object, .-object
