package s390x

import (
	"strings"

	"simrun/sim/cpu"
)

// The per-instruction description SPE and the timing model use: static
// facts (class, flags, access size, execution unit, registers read and
// written) computed once per decoded slot by describe, dynamic ones (data
// address, condition, branch target) from the registers just before the
// instruction runs (dynamicValue, branchTarget).
//
// Registers in the model: r0-r15 are ids 0-15, the condition code is
// cpu.RegFlags, v0-v31 (f0-f15 are their left halves) are cpu.RegVec+n.
// The register fields follow the instruction format (opInfos), refined by
// the sets below where an instruction reads or writes less than its
// format suggests; an op no set names (say, one added later) gets the
// format's registers as sources, r1 and the condition code as results,
// and no data access.
//
// Approximations: lm/stm and vlm/vstm name only the last three registers
// of their range (the model holds three results; the return address and
// the stack pointer sit at the end of the usual save range); storage
// operands other than the sampled one (the second operand of mvc, clc and
// the like) are not timed; vll and vstl are timed as 16-byte accesses;
// a load or store on condition is timed as an access whether or not its
// condition holds.

// gr maps a general-register field to a model id (rNone: no register).
func gr(r uint8) uint8 {
	if r < 16 {
		return r
	}
	return cpu.RegNone
}

func vr(r uint8) uint8 { return cpu.RegVec + r&31 }

// opSet is a set of ops named as insns.txt spells them.
type opSet [opEnd]bool

func newOpSet(names string) *opSet {
	var s opSet
	for _, n := range strings.Fields(names) {
		o, ok := opByName[strings.ToLower(n)]
		if !ok {
			panic("s390x: describe names unknown instruction " + n)
		}
		s[o] = true
	}
	return &s
}

var opByName = func() map[string]op {
	m := map[string]op{}
	for o := opFirst; o < opEnd; o++ {
		m[o.info().name] = o
	}
	return m
}()

var (
	// r1Full: integer instructions that replace all 64 bits of R1
	// without reading it (the 32-bit forms keep bits 0-31, so they read
	// R1).
	r1Full = newOpSet(`LG LGF LGFR LGR LGH LGHR LGB LGBR LLGC LLGCR LLGH LLGHR LLGF LLGFR LLGT LLGTR
		LTG LTGR LTGF LTGFR LGHI LGFI LLIHF LLIHH LLIHL LLILF LLILH LLILL LA LAY LARL
		LGRL LGFRL LLGFRL LGHRL LLGHRL LRVG LRVGR LCGR LCGFR LNGR LNGFR LPGR LPGFR
		AGRK ALGRK SGRK SLGRK NGRK OGRK XGRK NCGRK NNGRK NOGRK NXGRK OCGRK SELGR MSGRKC AGHIK ALGHSIK SLLG SRLG SRAG SLAG RLLG
		FLOGR POPCNT LAAG LAALG LANG LAOG LAXG LAA LAAL LAN LAO LAX ECAG`)
	// r1NotWritten: integer compares and tests (stores are found by class).
	r1NotWritten = newOpSet(`C CY CR CG CGR CGF CGFR CH CHY CGH CHI CGHI CFI CGFI
		CL CLY CLR CLG CLGR CLGF CLGFR CLFI CLGFI CLM CLMY
		CRL CGRL CGFRL CLRL CLGRL CLGFRL CHRL CGHRL CLHRL CLGHRL TMLL TMLH TMHL TMHH SFPC`)
	// ccKept: integer instructions that leave the condition code alone.
	ccKept = newOpSet(`L LY LG LGF LGFR LR LGR LH LHY LGH LHR LGHR LB LBR LGB LGBR
		LLC LLCR LLGC LLGCR LLH LLHR LLGH LLGHR LLGF LLGFR LLGT LLGTR
		LHI LGHI LGFI LLIHF LLIHH LLIHL LLILF LLILH LLILL IILF IIHF IILL IILH IIHL IIHH
		LA LAY LARL LGRL LRL LGFRL LLGFRL LHRL LGHRL LLHRL LLGHRL
		LM LMY LMG LRV LRVG LRVR LRVGR LRVH IC ICY
		ST STY STG STC STCY STH STHY STRL STGRL STHRL STM STMY STMG STRV STRVG STRVH
		STCM STCMY STCMH MVI MVIY MVHI MVGHI MVHHI MVC
		LOCR LOCGR LOC LOCG STOC STOCG LOCHI LOCGHI
		MS MSY MSR MSG MSGR MSGF MSGFR MSFI MSGFI MH MHY MHI MGHI MGH MG MGRK
		M MR MFY ML MLR MLG MLGR D DR DL DLR DLG DLGR DSG DSGR DSGF DSGFR
		SLL SRL SLLK SRLK SLLG SRLG RLL RLLG SLDL SRDL RISBGN
		SVC LCBB EAR SAR IPM EFPC SFPC SRNM SRNMB LFPC STFPC LAM LAMY STAM STAMY ECAG SELR SELGR`)
	// ccRead: instructions (other than branches) that use the condition code.
	ccRead = newOpSet(`ALC ALCR ALCG ALCGR SLB SLBR SLBG SLBGR LOCR LOCGR LOC LOCG STOC STOCG LOCHI LOCGHI IPM SELR SELGR`)
	// pairs operate on the even/odd register pair R1, R1+1.
	pairs = newOpSet(`M MR MFY ML MLR MLG MLGR MG MGRK D DR DL DLR DLG DLGR DSG DSGR DSGF DSGFR
		SLDL SRDL SLDA SRDA FLOGR`)
	units = func() (u [opEnd]cpu.Unit) {
		set := func(unit cpu.Unit, names string) {
			for o, in := range newOpSet(names) {
				if in {
					u[o] = unit
				}
			}
		}
		set(cpu.UnitMul, `MS MSY MSR MSG MSGR MSGF MSGFR MSFI MSGFI MH MHY MHI MGHI M MR MFY ML MLR MLG MLGR
			MSRKC MSGRKC MSC MSGC MGRK MG MGH`)
		set(cpu.UnitDiv, `D DR DL DLR DLG DLGR DSG DSGR DSGF DSGFR`)
		set(cpu.UnitFPDiv, `DDBR DDB DEBR DEB SQDBR SQDB SQEBR SQEB VFD VFSQ DXBR SQXBR`)
		return
	}()

	// Floating point: fpR1Fresh ops write F1 without reading it,
	// fpNoF1Write only read it, fpCC set the condition code; fpGPR1 and
	// fpGPR2 name a general register in R1 or R2.
	fpR1Fresh = newOpSet(`LD LDY LE LEY LDR LER LZDR LZER LDGR LCDBR LCEBR LPDBR LPEBR LNDBR LNEBR
		LTDBR LTEBR LCDFR LNDFR LPDFR CPSDR LDE LDEB LDEBR LEDBRA SQDBR SQDB SQEBR SQEB
		CDFBRA CDGBRA CEFBRA CEGBRA CDLFBR CDLGBR CELFBR CELGBR
		CFDBRA CGDBRA CFEBRA CGEBRA CLFDBR CLGDBR CLFEBR CLGEBR FIDBRA FIEBRA LGDR`)
	fpNoF1Write = newOpSet(`STD STDY STE STEY CDBR CDB CEBR CEB KDBR KDB KEBR KEB TCDB TCEB`)
	fpCC        = newOpSet(`ADBR ADB AEBR AEB SDBR SDB SEBR SEB LCDBR LCEBR LPDBR LPEBR LNDBR LNEBR
		LTDBR LTEBR CDBR CDB CEBR CEB KDBR KDB KEBR KEB TCDB TCEB
		CFDBRA CGDBRA CFEBRA CGEBRA CLFDBR CLGDBR CLFEBR CLGEBR
		AXBR SXBR LTXBR LCXBR LPXBR LNXBR CXBR KXBR TCXB CFXBRA CGXBRA CLFXBR CLGXBR`)
	fpGPR1 = newOpSet(`CFDBRA CGDBRA CFEBRA CGEBRA CLFDBR CLGDBR CLFEBR CLGEBR LGDR
		CFXBRA CGXBRA CLFXBR CLGXBR`)
	fpGPR2 = newOpSet(`CDFBRA CDGBRA CEFBRA CEGBRA CDLFBR CDLGBR CELFBR CELGBR LDGR`)

	// Extended BFP (describeFX): fxGPR2 ops read a general register R2,
	// fxNoWrite write no register.
	fxGPR2    = newOpSet(`CXFBRA CXGBRA CXLFBR CXLGBR`)
	fxNoWrite = newOpSet(`CXBR KXBR TCXB`)

	// Vector: vR1Read ops merge into V1, vNoV1Write only read it, vCC
	// may set the condition code.
	vR1Read    = newOpSet(`VLEB VLEH VLEF VLEG VLEIB VLEIH VLEIF VLEIG VLVG VERIM VSTL`)
	vNoV1Write = newOpSet(`VST VSTEB VSTEH VSTEF VSTEG VSTL VSTM VTM WFC WFK`)
	vCC        = newOpSet(`VCEQ VCH VCHL VTM VFCE VFCH VFCHE WFC WFK VFTCI VPKS VPKLS VCKSM VFAE VFEE VFENE VISTR VSTRC`)
)

// isVector reports a vector-facility format (VR*).
func isVector(f uint8) bool { return f >= fmtVRX && f <= fmtVRSc }

// isFP reports a binary floating-point instruction.
func isFP(o op) bool { return o >= opLD && o < opVL }

// describe computes the static description of a decoded instruction.
func describe(in *inst) cpu.OpInfo {
	o := cpu.NewOpInfo(in.ln)
	srcG := func(rs ...uint8) {
		for _, r := range rs {
			o.AddSrc(gr(r))
		}
	}
	branch := func(f cpu.OpFlags, cc bool) {
		o.Class, o.Unit, o.Flags = cpu.ClassBranch, cpu.UnitBranch, o.Flags|f
		if cc {
			o.AddSrc(cpu.RegFlags)
		}
	}
	switch in.op {
	case opNone, opUndef, opSpec, opNop, opLogged: // a marked slot's description is made before it is marked
		return o
	case opJ:
		branch(0, false)
		return o
	case opBRC, opBRCL:
		branch(cpu.OpConditional, true)
		return o
	case opBR:
		branch(cpu.OpIndirect|returnFlag(in.r2), false)
		srcG(in.r2)
		return o
	case opBCR:
		branch(cpu.OpIndirect|cpu.OpConditional|returnFlag(in.r2), true)
		srcG(in.r2)
		return o
	case opBC:
		branch(cpu.OpIndirect|cpu.OpConditional, true)
		srcG(in.b, in.r2)
		return o
	case opBRAS, opBRASL:
		branch(cpu.OpLink, false)
		o.AddDst(gr(in.r1))
		return o
	case opBASR, opBAS:
		if in.op == opBAS || in.r2 != 0 { // basr R1,0 only saves the address
			branch(cpu.OpLink|cpu.OpIndirect, false)
		}
		srcG(in.b, in.r2)
		o.AddDst(gr(in.r1))
		return o
	case opBRCT, opBRCTG, opBCTR, opBCTGR, opBCT, opBCTG:
		switch in.op {
		case opBRCT, opBRCTG:
			branch(cpu.OpConditional, false)
		case opBCT, opBCTG:
			branch(cpu.OpConditional|cpu.OpIndirect, false)
			srcG(in.b, in.r2)
		default:
			if in.r2 != 0 { // bctr R1,0 only counts
				branch(cpu.OpConditional|cpu.OpIndirect, false)
				srcG(in.r2)
			}
		}
		srcG(in.r1)
		o.AddDst(gr(in.r1))
		return o
	case opBRXH, opBRXLE, opBRXHG, opBRXLG:
		branch(cpu.OpConditional, false)
		srcG(in.r1, in.r3, in.r3|1)
		o.AddDst(gr(in.r1))
		return o
	case opCRJ, opCGRJ, opCLRJ, opCLGRJ:
		branch(cpu.OpConditional, false)
		srcG(in.r1, in.r2)
		return o
	case opCIJ, opCGIJ, opCLIJ, opCLGIJ: // r2 is the immediate
		branch(cpu.OpConditional, false)
		srcG(in.r1)
		return o
	case opCRB, opCGRB, opCLRB, opCLGRB:
		branch(cpu.OpConditional|cpu.OpIndirect, false)
		srcG(in.r1, in.r2, in.b)
		return o
	case opCIB, opCGIB, opCLIB, opCLGIB:
		branch(cpu.OpConditional|cpu.OpIndirect, false)
		srcG(in.r1, in.b)
		return o
	case opSVC: // svc 0 takes the number from r1; arguments from r2
		o.Unit, o.Flags = cpu.UnitSys, cpu.OpSyscall
		srcG(1, 2, 3, 4)
		o.AddDst(2)
		return o
	case opLOCR, opLOCGR, opLOCHI, opLOCGHI:
		o.Flags |= cpu.OpConditional
	case opMVCL, opCLCL, opMVCLE, opMVCLU, opCLCLE, opCLCLU:
		describeLong(&o, in)
		return o
	}

	class, size := memClass(in)
	switch class {
	case cpu.ClassLoad:
		o.Unit = cpu.UnitLoad
	case cpu.ClassStore:
		o.Unit = cpu.UnitStore
	case cpu.ClassLoadAtomic:
		o.Unit = cpu.UnitAtomic
	}
	o.Class, o.Access = class, size
	f := opInfos[in.op-opFirst].format
	switch {
	case isVector(f):
		o.Flags |= cpu.OpSIMD
		if in.op >= opVFA {
			o.Flags |= cpu.OpFP
		}
		if class != cpu.ClassOther {
			o.Flags = o.Flags&^cpu.OpFP | cpu.OpSIMDFPReg
		} else {
			o.Unit = cpu.UnitSIMD
		}
	case isFP(in.op):
		o.Flags |= cpu.OpFP
		switch in.op {
		case opLD, opLDY, opLE, opLEY, opLDE, opSTD, opSTDY, opSTE, opSTEY:
			o.Flags |= cpu.OpSIMDFPReg
		}
		if class == cpu.ClassOther {
			o.Unit = cpu.UnitFP
		}
	}
	if u := units[in.op]; u != cpu.UnitALU {
		o.Unit = u
	}
	switch in.op {
	case opLOC, opLOCG, opSTOC, opSTOCG:
		o.Flags |= cpu.OpConditional
	case opLM, opLMY, opLMG, opSTM, opSTMY, opSTMG, opVLM, opVSTM:
		n := uint64(in.r3-in.r1)&15 + 1
		switch in.op {
		case opLMG, opSTMG:
			n *= 8
		case opVLM, opVSTM:
			n = 16 * (uint64(in.r3-in.r1) + 1)
		default:
			n *= 4
		}
		o.Access = uint8(min(n, 255))
		describeRange(&o, in)
		return o
	case opLAM, opLAMY, opSTAM, opSTAMY: // access registers: only the base is a tracked register
		o.Access = uint8(4 * ((in.r3-in.r1)&15 + 1))
		o.AddSrc(gr(in.b))
		return o
	case opMVC, opXC, opNC, opOC, opCLC:
		o.Access = uint8(min(uint64(in.m)+1, 255))
		o.Flags |= cpu.OpStorageToStorage
	}
	describeRegs(&o, in, f)
	return o
}

// describeLong describes the move-long and compare-long instructions: a
// store (moves) or load (compares) of the first byte of the first
// operand, reading both register pairs and the pad's base register,
// writing the first pair and the condition code (the model holds three
// results: the second pair, which advances too, is left out).
func describeLong(o *cpu.OpInfo, in *inst) {
	class, size := memClass(in)
	o.Class, o.Access, o.Unit = class, size, cpu.UnitLoad
	if class == cpu.ClassStore {
		o.Unit = cpu.UnitStore
	}
	second := in.r3
	if in.op == opMVCL || in.op == opCLCL {
		second = in.r2
	}
	for _, r := range [...]uint8{in.r1, in.r1 + 1, second, second + 1} {
		o.AddSrc(gr(r))
	}
	o.AddSrc(gr(in.b)) // (a fifth source: dropped, see AddSrc)
	o.AddDst(gr(in.r1))
	o.AddDst(gr(in.r1 + 1))
	o.AddDst(cpu.RegFlags)
}

// describeRange gives lm/stm-like instructions their base and the last
// three registers of the range R1..R3 (wrapping at 15, or 31 for vectors).
func describeRange(o *cpu.OpInfo, in *inst) {
	o.AddSrc(gr(in.b))
	vec := in.op == opVLM || in.op == opVSTM
	n := int(in.r3-in.r1)&15 + 1
	if vec {
		n = int(in.r3) - int(in.r1) + 1
	}
	for k := max(n-3, 0); k < n; k++ {
		id := gr((in.r1 + uint8(k)) & 15)
		if vec {
			id = vr(in.r1 + uint8(k))
		}
		if o.Class == cpu.ClassStore {
			o.AddSrc(id)
		} else {
			o.AddDst(id)
		}
	}
}

// describeRegs adds the registers of the format's fields, refined by the
// instruction sets above.
func describeRegs(o *cpu.OpInfo, in *inst, f uint8) {
	// The fields of the format that name registers, as general registers.
	var r1, r2, r3 uint8 = cpu.RegNone, cpu.RegNone, cpu.RegNone
	addr := [2]uint8{cpu.RegNone, cpu.RegNone} // base and index
	switch f {
	case fmtRR, fmtRRE, fmtRRFc, fmtRRFe, fmtRIEb, fmtRIEf:
		r1, r2 = gr(in.r1), gr(in.r2)
	case fmtRRFa, fmtRRD:
		r1, r2, r3 = gr(in.r1), gr(in.r2), gr(in.r3)
	case fmtRRm:
		r2 = gr(in.r2)
	case fmtRX, fmtRXE, fmtRXEm, fmtRXY:
		r1, addr = gr(in.r1), [2]uint8{gr(in.b), gr(in.r2)}
	case fmtRXF:
		r1, r3, addr = gr(in.r1), gr(in.r3), [2]uint8{gr(in.b), gr(in.r2)}
	case fmtRXm, fmtRXYm:
		addr = [2]uint8{gr(in.b), gr(in.r2)}
	case fmtRS, fmtRSm, fmtRSYm: // RS's R3 is unused but for lm, stm, cs (and icm's mask)
		r1, addr[0] = gr(in.r1), gr(in.b)
		if in.op == opCS {
			r3 = gr(in.r3)
		}
	case fmtRSY:
		r1, r3, addr[0] = gr(in.r1), gr(in.r3), gr(in.b)
	case fmtRSI, fmtRIEe, fmtRIEd:
		r1, r3 = gr(in.r1), gr(in.r3)
	case fmtRI, fmtRIL, fmtRILrel, fmtRIrel, fmtRIEc, fmtRIEg:
		r1 = gr(in.r1)
	case fmtRRS:
		r1, r2, addr[0] = gr(in.r1), gr(in.r2), gr(in.b)
	case fmtRIS:
		r1, addr[0] = gr(in.r1), gr(in.b)
	case fmtSI, fmtSIY, fmtSIL, fmtS:
		addr[0] = gr(in.b)
	case fmtSSa:
		addr = [2]uint8{gr(in.b), gr(in.r2)}
	case fmtVRX:
		addr = [2]uint8{gr(in.b), gr(in.r2)}
	case fmtVRSa, fmtVRSb, fmtVRSc:
		addr[0] = gr(in.b)
	}
	o.AddSrc(addr[0])
	o.AddSrc(addr[1])
	switch {
	case isVector(f):
		describeVector(o, in, f)
		return
	case isFX(in.op):
		describeFX(o, in)
		return
	case isFP(in.op):
		describeFP(o, in, r1, r2, r3)
		return
	}
	read1 := r1 != cpu.RegNone && !r1Full[in.op]
	write1 := r1 != cpu.RegNone && !r1NotWritten[in.op] && o.Class != cpu.ClassStore
	if o.Class == cpu.ClassStore {
		read1 = r1 != cpu.RegNone
	}
	if read1 {
		o.AddSrc(r1)
	}
	o.AddSrc(r2)
	o.AddSrc(r3)
	if pairs[in.op] {
		o.AddSrc(in.r1 + 1)
	}
	if ccRead[in.op] {
		o.AddSrc(cpu.RegFlags)
	}
	if write1 {
		o.AddDst(r1)
		if pairs[in.op] {
			o.AddDst(in.r1 + 1)
		}
	}
	if !ccKept[in.op] {
		o.AddDst(cpu.RegFlags)
	}
}

// describeFP adds the registers of a binary floating-point instruction:
// its R fields name FPRs but for the conversions to and from integers.
func describeFP(o *cpu.OpInfo, in *inst, r1, r2, r3 uint8) {
	fpr := func(r uint8, gpr bool) uint8 {
		if r == cpu.RegNone || gpr {
			return r
		}
		return vr(r)
	}
	r1, r2, r3 = fpr(r1, fpGPR1[in.op]), fpr(r2, fpGPR2[in.op]), fpr(r3, false)
	if !fpR1Fresh[in.op] {
		o.AddSrc(r1)
	}
	o.AddSrc(r2)
	o.AddSrc(r3)
	if !fpNoF1Write[in.op] {
		o.AddDst(r1)
	}
	if fpCC[in.op] {
		o.AddDst(cpu.RegFlags)
	}
}

// describeFX adds the registers of an extended-BFP instruction: both
// FPRs of each pair (bfp128.go), the long or short FPR or the general
// register where a field names one of those.
func describeFX(o *cpu.OpInfo, in *inst) {
	pairs := fxPairs(in.op)
	switch in.op {
	case opAXBR, opSXBR, opMXBR, opDXBR, opCXBR, opKXBR, opTCXB:
		o.AddSrc(vr(in.r1))
		o.AddSrc(vr(in.r1 + 2))
	case opMXDBR, opMXDB:
		o.AddSrc(vr(in.r1))
	}
	switch {
	case opInfos[in.op-opFirst].format == fmtRXE || in.op == opLZXR: // R2 is the index or unused
	case pairs&2 != 0:
		o.AddSrc(vr(in.r2))
		o.AddSrc(vr(in.r2 + 2))
	case fxGPR2[in.op]:
		o.AddSrc(gr(in.r2))
	default:
		o.AddSrc(vr(in.r2))
	}
	switch {
	case fxNoWrite[in.op]:
	case fpGPR1[in.op]:
		o.AddDst(gr(in.r1))
	case pairs&1 == 0:
		o.AddDst(vr(in.r1))
	default:
		o.AddDst(vr(in.r1))
		o.AddDst(vr(in.r1 + 2))
	}
	if fpCC[in.op] {
		o.AddDst(cpu.RegFlags)
	}
}

// describeVector adds the registers of a vector instruction: its V fields
// (VRR-d and VRR-e have a fourth in b) and the general registers of VRR-f
// (R2, R3), VRS-b (R3) and VRS-c (R1).
func describeVector(o *cpu.OpInfo, in *inst, f uint8) {
	none := uint8(cpu.RegNone)
	r1, r2, r3 := vr(in.r1), none, none
	switch f {
	case fmtVRRa, fmtVRIe:
		r2 = vr(in.r2)
	case fmtVRRb, fmtVRRc, fmtVRId:
		r2, r3 = vr(in.r2), vr(in.r3)
	case fmtVRRd, fmtVRRe:
		r2, r3 = vr(in.r2), vr(in.r3)
		o.AddSrc(vr(in.b))
	case fmtVRRf:
		r2, r3 = gr(in.r2), gr(in.r3)
	case fmtVRIc, fmtVRSa:
		r3 = vr(in.r3)
	case fmtVRSb:
		r3 = gr(in.r3)
	case fmtVRSc:
		r1, r3 = gr(in.r1), vr(in.r3)
	}
	if vR1Read[in.op] || vNoV1Write[in.op] {
		o.AddSrc(r1)
	}
	o.AddSrc(r2)
	o.AddSrc(r3)
	if !vNoV1Write[in.op] {
		o.AddDst(r1)
	}
	if vCC[in.op] {
		o.AddDst(cpu.RegFlags)
	}
}

// returnFlag marks a branch through r14, the return-address register.
func returnFlag(reg uint8) cpu.OpFlags {
	if reg == 14 {
		return cpu.OpReturn
	}
	return 0
}

// condHolds reports, for a conditional operation other than a branch
// (load/store on condition), whether its condition holds.
func (c *Core) condHolds(in *inst) bool { return c.cond(in.m) }

// loggedInCase reports whether Execute stores the logged value (cpu.OpInfo.Logged)
// of op o inside o's own case, where the address is in a register anyway:
// the hot loads and stores (relative ones too), calls and returns, loads
// and stores on condition, and the storage-immediate and
// storage-to-storage operations. Every other op that logs one goes
// through dynamicValue before it executes (its slot is marked opLogged).
func loggedInCase(o op) bool {
	switch o {
	case opL, opLY, opLT, opLG, opLTG, opLGF, opLTGF, opST, opSTY, opSTG, opLMG, opSTMG,
		opLLGF, opLLGT, opLH, opLHY, opLGH, opLLH, opLLGH, opLB, opLGB, opLLC, opLLGC, opIC, opICY,
		opSTC, opSTCY, opSTH, opSTHY,
		opA, opAY, opAH, opAHY, opS, opSY, opSH, opSHY, opAL, opALY, opSL, opSLY, opALC, opSLB,
		opN, opNY, opO, opOY, opX, opXY, opMS, opMSY, opMH, opMHY, opC, opCY, opCH, opCHY, opCL, opCLY,
		opAG, opAGF, opSG, opSGF, opALG, opALGF, opSLG, opSLGF, opALCG, opSLBG,
		opNG, opOG, opXG, opMSG, opMSGF, opCG, opCGF, opCGH, opCLG, opCLGF,
		opMSC, opMSGC, opAGH, opSGH, opMGH,
		opBRAS, opBRASL, opBR, opBASR, opBAS, opLOCR, opLOCGR, opLOCHI, opLOCGHI,
		opBCR, opLGRL, opLRL, opLGFRL, opLLGFRL, opLHRL, opLGHRL, opLLHRL, opLLGHRL, opSTRL, opSTGRL, opSTHRL,
		opLOC, opLOCG, opSTOC, opSTOCG, opMVHHI, opMVHI, opMVGHI, opMVC, opXC, opNC, opOC, opCLC,
		opASI, opALSI, opAGSI, opALGSI, opCLM, opCLMY:
		return true
	}
	return false
}

// dynamicValue is the data address of a load or store in the current state,
// for calls and indirect branches the stack pointer (see cpu.Retired), or
// for the other conditional operations 1 if the condition holds.
func (c *Core) dynamicValue(in *inst, info *cpu.OpInfo, pc uint64) uint64 {
	if info.Class == cpu.ClassBranch {
		return c.r[15]
	}
	if info.Access != 0 {
		return c.operandAddr(in, pc)
	}
	if c.condHolds(in) {
		return 1
	}
	return 0
}

// branchTarget is where a branch goes if taken, and whether it will be.
func (c *Core) branchTarget(in *inst, pc uint64) (uint64, bool) {
	r := &c.r
	rel := pc + uint64(in.imm)
	switch in.op {
	case opJ:
		return rel, true
	case opBRC, opBRCL:
		return rel, c.cond(in.m)
	case opBR:
		return r[in.r2], true
	case opBCR:
		return r[in.r2], c.cond(in.m)
	case opBC:
		return r[in.b] + r[in.r2] + uint64(in.imm), c.cond(in.m)
	case opBRAS, opBRASL:
		return rel, true
	case opBASR:
		return r[in.r2], true
	case opBAS:
		return r[in.b] + r[in.r2] + uint64(in.imm), true
	case opBRCT:
		return rel, uint32(r[in.r1])-1 != 0
	case opBRCTG:
		return rel, r[in.r1]-1 != 0
	case opBCTR:
		return r[in.r2], uint32(r[in.r1])-1 != 0
	case opBCTGR:
		return r[in.r2], r[in.r1]-1 != 0
	case opBCT:
		return r[in.b] + r[in.r2] + uint64(in.imm), uint32(r[in.r1])-1 != 0
	case opBCTG:
		return r[in.b] + r[in.r2] + uint64(in.imm), r[in.r1]-1 != 0
	case opBRXH, opBRXLE, opBRXHG, opBRXLG:
		saved := r[in.r1]
		taken := c.branchIndex(in)
		r[in.r1] = saved
		return rel, taken
	case opCRJ, opCGRJ, opCLRJ, opCLGRJ, opCIJ, opCGIJ, opCLIJ, opCLGIJ:
		return rel, in.m<<c.compareOperands(in)&8 != 0
	case opCRB, opCGRB, opCLRB, opCLGRB, opCIB, opCGIB, opCLIB, opCLGIB:
		return r[in.b] + uint64(in.imm), in.m<<c.compareOperands(in)&8 != 0
	}
	return 0, false
}
