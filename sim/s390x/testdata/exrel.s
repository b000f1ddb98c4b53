	.text
	lghi %r2,0
	larl %r5,tj
	ex %r0,0(%r5)
	lghi %r2,99
l1:	ahi %r2,1
	exrl %r0,tlarl
	lgrl %r4,datum
	exrl %r0,tlgrl
	exrl %r0,tbras
	ahi %r2,10
	lghi %r7,1
	exrl %r0,tcij
	lghi %r2,98
l2:	ahi %r2,100
	larl %r5,tcijn
	ex %r0,0(%r5)
	ltr %r7,%r7
	exrl %r0,tbcr
	lghi %r8,1
	larl %r5,tbrct
	ex %r0,0(%r5)
	lghi %r8,5
	exrl %r0,tbrctg
	lghi %r2,97
l3:	lghi %r1,0
	exrl %r0,texit
	.long 0
sub:	ahi %r2,1000
	br %r14
tj:	j l1
tlarl:	larl %r3,datum
tlgrl:	lgrl %r6,datum
tbras:	bras %r14,sub
tcij:	cij %r7,1,8,l2
tcijn:	cij %r7,5,8,bad
tbcr:	bcr 8,%r9
tbrct:	brct %r8,bad
tbrctg:	brctg %r8,l3
texit:	svc 1
bad:	.long 0
	.balign 8
datum:	.quad 0x1122334455667788
