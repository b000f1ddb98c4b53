package arm64

//go:generate go run ./internal/opgen -i inst.go -o zops.go

// inst is one pre-decoded A64 instruction: 16 bytes, decoded once per code
// page slot and executed by the big switch in run.go.
//
// Register fields hold indices into Core.x already resolved for the
// instruction's use of field value 31: xzr reads as index 31 (always 0),
// writes to xzr go to index rSink, and sp is index rSP. Vector register
// fields are plain 0..31 indices into Core.v.
type inst struct {
	op  op
	rd  uint8
	rn  uint8
	rm  uint8
	ra  uint8
	a   uint8 // op-specific: shift amount, size, condition, lane, ...
	b   uint8 // op-specific: second small parameter
	imm uint64
}

// Indices into Core.x.
const (
	rZR   = 31 // reads as zero, never written
	rSP   = 32
	rSink = 33 // writes to xzr land here
	rLR   = 30
)

type op uint16

// Operations. W/X suffixes are 32/64-bit forms; "i" takes an immediate.
//
// Each constant's comment begins with its inventory entry: its group (a
// grp constant below), then any opf flags and, for an access of fixed
// size, size=N bytes; a colon ends the entry. internal/opgen reads these
// into zops.go's opTable (keyed by op, so that where an op stands in this
// block changes nothing) and fails on an op without a group or with an
// unknown word; describe (describe.go) classifies by group and flags, and
// testdata/ops.golden pins the result (TestOpInventory).
const (
	opNone     op = iota // grpMarker: slot not decoded yet
	opUndef              // grpOther: undefined or unimplemented encoding (imm = the word)
	opNop                // grpOther: hints, barriers
	opMovI               // grpMovImm: rd = imm (movz, movn, adr, adrp, mov bitmask)
	opMovX               // grpMov: rd = rm
	opMovW               // grpMov: rd = uint32(rm)
	opMovKX              // grpALU1: rd = rd &^ (0xffff << a) | imm
	opMovKW              // grpALU1
	opAddXi              // grpALU1: rd = rn + imm
	opAddWi              // grpALU1
	opSubXi              // grpALU1
	opSubWi              // grpALU1
	opAddsXi             // grpALU1 opfSetsNZCV: with flags
	opAddsWi             // grpALU1 opfSetsNZCV
	opSubsXi             // grpALU1 opfSetsNZCV
	opSubsWi             // grpALU1 opfSetsNZCV
	opAndXi              // grpALU1: logical immediate
	opAndWi              // grpALU1
	opOrrXi              // grpALU1
	opOrrWi              // grpALU1
	opEorXi              // grpALU1
	opEorWi              // grpALU1
	opAndsXi             // grpALU1 opfSetsNZCV
	opAndsWi             // grpALU1 opfSetsNZCV
	opLslXi              // grpALU1: rd = rn << a
	opLslWi              // grpALU1
	opLsrXi              // grpALU1: rd = rn >> a
	opLsrWi              // grpALU1
	opAsrXi              // grpALU1
	opAsrWi              // grpALU1
	opUbfx               // grpALU1: rd = (rn >> a) & imm              (both widths)
	opUbfiz              // grpALU1: rd = (rn & imm) << a               (both widths)
	opSbfxX              // grpALU1: signed field [a, a+b) to 64 bits
	opSbfxW              // grpALU1
	opSbfizX             // grpALU1: signed field [0, b) placed at a
	opSbfizW             // grpALU1
	opBfxil              // grpBitIns: rd = rd &^ imm | (rn >> a) & imm; b = 32 for W
	opBfi                // grpBitIns: rd = rd &^ (imm << a) | (rn & imm) << a
	opExtrX              // grpALU2: rd = (rn:rm) >> a
	opExtrW              // grpALU2
	opAddX               // grpALU2: rd = rn + rm << a (lsl, a may be 0)
	opAddW               // grpALU2
	opSubX               // grpALU2
	opSubW               // grpALU2
	opAddsX              // grpALU2 opfSetsNZCV
	opAddsW              // grpALU2 opfSetsNZCV
	opSubsX              // grpALU2 opfSetsNZCV
	opSubsW              // grpALU2 opfSetsNZCV
	opAddShX             // grpALU2: rd = rn + shift(rm, b, a) for lsr/asr
	opAddShW             // grpALU2
	opSubShX             // grpALU2
	opSubShW             // grpALU2
	opAddsShX            // grpALU2 opfSetsNZCV
	opAddsShW            // grpALU2 opfSetsNZCV
	opSubsShX            // grpALU2 opfSetsNZCV
	opSubsShW            // grpALU2 opfSetsNZCV
	opAddExtX            // grpALU2: rd = rn + extend(rm, b) << a
	opAddExtW            // grpALU2
	opSubExtX            // grpALU2
	opSubExtW            // grpALU2
	opAddsExtX           // grpALU2 opfSetsNZCV
	opAddsExtW           // grpALU2 opfSetsNZCV
	opSubsExtX           // grpALU2 opfSetsNZCV
	opSubsExtW           // grpALU2 opfSetsNZCV
	opAndX               // grpALU2: logical shifted register, lsl: rd = rn & (rm << a)
	opAndW               // grpALU2
	opOrrX               // grpALU2
	opOrrW               // grpALU2
	opEorX               // grpALU2
	opEorW               // grpALU2
	opAndsX              // grpALU2 opfSetsNZCV
	opAndsW              // grpALU2 opfSetsNZCV
	opBicX               // grpALU2
	opBicW               // grpALU2
	opOrnX               // grpALU2
	opOrnW               // grpALU2
	opEonX               // grpALU2
	opEonW               // grpALU2
	opBicsX              // grpALU2 opfSetsNZCV
	opBicsW              // grpALU2 opfSetsNZCV
	opLogShX             // grpALU2: any logical op with lsr/asr/ror: imm = kind<<8 | shift type
	opLogShW             // grpALU2
	opAdcX               // grpALU2 opfReadsNZCV
	opAdcW               // grpALU2 opfReadsNZCV
	opAdcsX              // grpALU2 opfReadsNZCV opfSetsNZCV
	opAdcsW              // grpALU2 opfReadsNZCV opfSetsNZCV
	opSbcX               // grpALU2 opfReadsNZCV
	opSbcW               // grpALU2 opfReadsNZCV
	opSbcsX              // grpALU2 opfReadsNZCV opfSetsNZCV
	opSbcsW              // grpALU2 opfReadsNZCV opfSetsNZCV
	opCcmpX              // grpCcmp opfReadsNZCV opfSetsNZCV opfCond: if cond(a) { flags = rn - op2 } else { flags = b }; imm=op2 if rm==0xff
	opCcmpW              // grpCcmp opfReadsNZCV opfSetsNZCV opfCond
	opCcmnX              // grpCcmp opfReadsNZCV opfSetsNZCV opfCond
	opCcmnW              // grpCcmp opfReadsNZCV opfSetsNZCV opfCond
	opCselX              // grpALU2 opfReadsNZCV opfCond: rd = cond(a) ? rn : rm
	opCselW              // grpALU2 opfReadsNZCV opfCond
	opCsincX             // grpALU2 opfReadsNZCV opfCond
	opCsincW             // grpALU2 opfReadsNZCV opfCond
	opCsinvX             // grpALU2 opfReadsNZCV opfCond
	opCsinvW             // grpALU2 opfReadsNZCV opfCond
	opCsnegX             // grpALU2 opfReadsNZCV opfCond
	opCsnegW             // grpALU2 opfReadsNZCV opfCond
	opUdivX              // grpALU2 opfDiv
	opUdivW              // grpALU2 opfDiv
	opSdivX              // grpALU2 opfDiv
	opSdivW              // grpALU2 opfDiv
	opLslvX              // grpALU2
	opLslvW              // grpALU2
	opLsrvX              // grpALU2
	opLsrvW              // grpALU2
	opAsrvX              // grpALU2
	opAsrvW              // grpALU2
	opRorvX              // grpALU2
	opRorvW              // grpALU2
	opCrc32              // grpALU2: a = size log2, b = 1 for crc32c
	opRbitX              // grpALU1
	opRbitW              // grpALU1
	opRev16X             // grpALU1
	opRev16W             // grpALU1
	opRev32X             // grpALU1
	opRevX               // grpALU1
	opRevW               // grpALU1
	opClzX               // grpALU1
	opClzW               // grpALU1
	opClsX               // grpALU1
	opClsW               // grpALU1
	opMaddX              // grpMadd: rd = ra + rn*rm
	opMaddW              // grpMadd
	opMsubX              // grpMadd
	opMsubW              // grpMadd
	opSmaddl             // grpMadd
	opSmsubl             // grpMadd
	opUmaddl             // grpMadd
	opUmsubl             // grpMadd
	opSmulh              // grpMul
	opUmulh              // grpMul

	// Branches.
	opB      // grpBranch: pc = imm
	opBL     // grpBranch opfLink: x30 = pc+4; pc = imm
	opBcond  // grpBranch opfReadsNZCV opfCond: if cond(a) pc = imm
	opCbzX   // grpTestBranch opfCond
	opCbzW   // grpTestBranch opfCond
	opCbnzX  // grpTestBranch opfCond
	opCbnzW  // grpTestBranch opfCond
	opTbz    // grpTestBranch opfCond: bit a of rn
	opTbnz   // grpTestBranch opfCond
	opBr     // grpIndirect
	opBlr    // grpIndirect opfLink
	opRet    // grpIndirect opfReturn
	opSvc    // grpSyscall
	opBrk    // grpOther: imm = comment
	opMrs    // grpMrs: a = system register id
	opMsr    // grpMsr
	opClrex  // grpOther
	opDcZva  // grpDcZva opfStore
	opSysNop // grpOther: cache maintenance without effect here (dc cvau, ic ivau)

	// Loads and stores with an immediate offset (no writeback), hot forms.
	opLdrXo // grpLdStHot opfLoad size=8
	opLdrWo // grpLdStHot opfLoad size=4
	opLdrBo // grpLdStHot opfLoad size=1
	opStrXo // grpLdStHot opfStore size=8
	opStrWo // grpLdStHot opfStore size=4
	opStrBo // grpLdStHot opfStore size=1
	// Generic load/store: a = type (ls*), b = addressing mode (am*).
	opLdSt // grpLdSt
	// Pairs: a = type (lp*), b = mode. Hot forms for 64-bit pairs.
	opLdpXo    // grpPair opfLoad size=16
	opStpXo    // grpPair opfStore size=16
	opLdpXpre  // grpPair opfLoad opfWriteback size=16
	opStpXpre  // grpPair opfStore opfWriteback size=16
	opLdpXpost // grpPair opfLoad opfWriteback size=16
	opStpXpost // grpPair opfStore opfWriteback size=16
	opLdStP    // grpPair
	// Exclusives and ordered accesses: a = size log2.
	opLdxr  // grpLoadEx opfLoad opfExclusive: b = acquire
	opStxr  // grpStoreEx opfStore opfExclusive: rm = status register, b = release
	opLdxp  // grpLoadEx opfLoad opfExclusive opfPair
	opStxp  // grpStoreEx opfStore opfExclusive opfPair
	opLdar  // grpLoadEx opfLoad opfAcquire: load-acquire (ldar, ldapr)
	opStlr  // grpStoreEx opfStore opfRelease: store-release
	opCas   // grpAtomic opfCompare: rm = Rs (compare/result), b = flags
	opCasp  // grpAtomic opfCompare
	opAtom  // grpAtomic: b = atomic op (atom*)
	opSwp   // grpAtomic
	opVLdSt // grpVLdSt: AdvSIMD structure load/store, see simd_mem.go

	// Scalar floating point: a = precision (0 single, 1 double, 3 half).
	opFmovReg    // grpFP1: fd = fn
	opFabs       // grpFP1
	opFneg       // grpFP1
	opFsqrt      // grpFP1 opfFPDiv
	opFcvt       // grpFP1: b = destination precision
	opFrint      // grpFP1: b = rounding (frint*)
	opFadd       // grpFP2
	opFsub       // grpFP2
	opFmul       // grpFP2
	opFdiv       // grpFP2 opfFPDiv
	opFmax       // grpFP2
	opFmin       // grpFP2
	opFmaxnm     // grpFP2
	opFminnm     // grpFP2
	opFnmul      // grpFP2
	opFmadd      // grpFP3
	opFmsub      // grpFP3
	opFnmadd     // grpFP3
	opFnmsub     // grpFP3
	opFcmp       // grpFcmp opfSetsNZCV: b: bit0 = signal on QNaN (fcmpe), bit1 = compare with zero
	opFccmp      // grpFccmp opfReadsNZCV opfSetsNZCV opfCond: imm = nzcv if cond(ra) false; b = fccmpe
	opFcsel      // grpFcsel opfReadsNZCV opfCond: cond in b
	opFmovI      // grpFP1: fd = imm (bits)
	opFmovToGP   // grpFPToGP: rd(gp) = bits of fn; b = 0: 32-bit, 1: 64-bit, 2: upper half of vn
	opFmovFromGP // grpFPFromGP: fd = bits of rn(gp); b as above
	opFcvtToInt  // grpFPToGP: rd(gp) = convert(fn); b = rounding | signed<<3 | 64bit<<4; imm = fbits
	opIntToFcvt  // grpFPFromGP: fd = convert(rn(gp)); b = signed | 64bit<<1; imm = fbits

	// AdvSIMD (vector and scalar) data processing: see simd.go.
	opSimd    // grpSIMD
	opSimdImm // grpSIMDImm: modified immediate: ra = sub-op, imm = 64-bit pattern

	// Pointer authentication, decoded only when it is on (pauth.go).
	opPAuth    // grpPAuth: pac*, aut*, xpac*, pacga: a = kind, b = key
	opPAuthLdr // grpPAuth: ldraa, ldrab
	opPAuthBr  // grpPAuth: braa, blraa, retaa and the B-key and zero-modifier forms

	// opLogged marks a slot whose logged value comes from dynamicValue
	// before the instruction runs; the instruction's own op is its
	// description's CoreOp (Core.describeSlot, Core.Execute).
	opLogged // grpMarker
	numOps
)

// group is the family of an operation as describe sees it: which
// registers it reads and writes, and how it is timed. Every op names one
// in its inventory entry (above). A group whose comment begins with
// "execFP" is one Core.Execute hands to execFP (fp.go): opgen checks that
// the ops of those groups stand together and names the first one
// opFirstFP, the bound Execute's default case tests.
type group uint8

const (
	grpNone       group = iota // no group: opgen rejects an op without one
	grpMarker                  // not an instruction: an undecoded slot, opLogged
	grpOther                   // no registers: hints, barriers, undefined encodings, brk, clrex
	grpMovImm                  // rd = an immediate
	grpMov                     // rd = rm
	grpALU1                    // rd = f(rn, immediates)
	grpBitIns                  // rd = f(rd, rn): bfxil, bfi (ra is rd)
	grpALU2                    // rd = f(rn, rm); the divider with opfDiv
	grpCcmp                    // nzcv = cond ? compare(rn, rm or imm) : imm
	grpMul                     // rd = f(rn, rm) on the multiplier
	grpMadd                    // rd = ra ± rn*rm on the multiplier
	grpBranch                  // pc = imm
	grpTestBranch              // pc = imm if a test of rn holds
	grpIndirect                // pc = rn
	grpSyscall                 // svc
	grpMrs                     // rd = a system register
	grpMsr                     // a system register = rn
	grpDcZva                   // dc zva: zeroes a block at rn
	grpLdStHot                 // load or store of the size in the table, [rn, #imm]
	grpLdSt                    // the generic single-register load/store (ls* type in a)
	grpPair                    // load/store pair (lp* type in a for opLdStP)
	grpLoadEx                  // exclusive and acquiring loads
	grpStoreEx                 // exclusive and releasing stores
	grpAtomic                  // compare-and-swap, atomic memory operations, swap
	grpVLdSt                   // AdvSIMD structure load/store
	grpFP1                     // execFP: fd = f(fn)
	grpFP2                     // execFP: fd = f(fn, fm)
	grpFP3                     // execFP: fd = f(fn, fm, fa)
	grpFcmp                    // execFP: nzcv = compare(fn, fm)
	grpFccmp                   // execFP: nzcv = cond ? compare(fn, fm) : imm
	grpFcsel                   // execFP: fd = cond ? fn : fm
	grpFPToGP                  // execFP: rd = f(fn)
	grpFPFromGP                // execFP: fd = f(rn)
	grpSIMD                    // execFP: AdvSIMD data processing
	grpSIMDImm                 // execFP: AdvSIMD modified immediate
	grpPAuth                   // pointer authentication (describePAuth)
)

// opFlags are facts about an op beyond its group. The direction and the
// pairing of an access are flags only where the op fixes them: opLdSt,
// opLdStP, opVLdSt and the atomics take theirs from their fields.
type opFlags uint16

const (
	opfSetsNZCV  opFlags = 1 << iota // writes the condition flags
	opfReadsNZCV                     // reads the condition flags
	opfCond                          // conditional: executes, selects or branches on a condition
	opfDiv                           // integer divide (the divider)
	opfFPDiv                         // FP divide or square root (the FP divider)
	opfLoad                          // reads memory
	opfStore                         // writes memory
	opfWriteback                     // updates its base register
	opfPair                          // ldxp, stxp: transfers two registers
	opfExclusive                     // load/store exclusive
	opfAcquire                       // load-acquire
	opfRelease                       // store-release
	opfCompare                       // compare-and-swap: reads rd, writes rm
	opfLink                          // writes the return address to x30
	opfReturn                        // function return
)

// opSpec is one op's inventory entry (opTable in zops.go).
type opSpec struct {
	name  string
	group group
	flags opFlags
	size  uint8 // access size in bytes if fixed by the op, else 0
}
