package arm64

//go:generate go run ./internal/opnames -i inst.go -o zopnames.go

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
const (
	opNone     op = iota // slot not decoded yet
	opUndef              // undefined or unimplemented encoding (imm = the word)
	opNop                // hints, barriers
	opMovI               // rd = imm (movz, movn, adr, adrp, mov bitmask)
	opMovX               // rd = rm
	opMovW               // rd = uint32(rm)
	opMovKX              // rd = rd &^ (0xffff << a) | imm
	opMovKW              //
	opAddXi              // rd = rn + imm
	opAddWi              //
	opSubXi              //
	opSubWi              //
	opAddsXi             // with flags
	opAddsWi             //
	opSubsXi             //
	opSubsWi             //
	opAndXi              // logical immediate
	opAndWi              //
	opOrrXi              //
	opOrrWi              //
	opEorXi              //
	opEorWi              //
	opAndsXi             //
	opAndsWi             //
	opLslXi              // rd = rn << a
	opLslWi              //
	opLsrXi              // rd = rn >> a
	opLsrWi              //
	opAsrXi              //
	opAsrWi              //
	opUbfx               // rd = (rn >> a) & imm              (both widths)
	opUbfiz              // rd = (rn & imm) << a               (both widths)
	opSbfxX              // signed field [a, a+b) to 64 bits
	opSbfxW              //
	opSbfizX             // signed field [0, b) placed at a
	opSbfizW             //
	opBfxil              // rd = rd &^ imm | (rn >> a) & imm; b = 32 for W
	opBfi                // rd = rd &^ (imm << a) | (rn & imm) << a
	opExtrX              // rd = (rn:rm) >> a
	opExtrW              //
	opAddX               // rd = rn + rm << a (lsl, a may be 0)
	opAddW               //
	opSubX               //
	opSubW               //
	opAddsX              //
	opAddsW              //
	opSubsX              //
	opSubsW              //
	opAddShX             // rd = rn + shift(rm, b, a) for lsr/asr
	opAddShW             //
	opSubShX             //
	opSubShW             //
	opAddsShX            //
	opAddsShW            //
	opSubsShX            //
	opSubsShW            //
	opAddExtX            // rd = rn + extend(rm, b) << a
	opAddExtW            //
	opSubExtX            //
	opSubExtW            //
	opAddsExtX           //
	opAddsExtW           //
	opSubsExtX           //
	opSubsExtW           //
	opAndX               // logical shifted register, lsl: rd = rn & (rm << a)
	opAndW               //
	opOrrX               //
	opOrrW               //
	opEorX               //
	opEorW               //
	opAndsX              //
	opAndsW              //
	opBicX               //
	opBicW               //
	opOrnX               //
	opOrnW               //
	opEonX               //
	opEonW               //
	opBicsX              //
	opBicsW              //
	opLogShX             // any logical op with lsr/asr/ror: imm = kind<<8 | shift type
	opLogShW             //
	opAdcX               //
	opAdcW               //
	opAdcsX              //
	opAdcsW              //
	opSbcX               //
	opSbcW               //
	opSbcsX              //
	opSbcsW              //
	opCcmpX              // if cond(a) { flags = rn - op2 } else { flags = b }; imm=op2 if rm==0xff
	opCcmpW              //
	opCcmnX              //
	opCcmnW              //
	opCselX              // rd = cond(a) ? rn : rm
	opCselW              //
	opCsincX             //
	opCsincW             //
	opCsinvX             //
	opCsinvW             //
	opCsnegX             //
	opCsnegW             //
	opUdivX              //
	opUdivW              //
	opSdivX              //
	opSdivW              //
	opLslvX              //
	opLslvW              //
	opLsrvX              //
	opLsrvW              //
	opAsrvX              //
	opAsrvW              //
	opRorvX              //
	opRorvW              //
	opCrc32              // a = size log2, b = 1 for crc32c
	opRbitX              //
	opRbitW              //
	opRev16X             //
	opRev16W             //
	opRev32X             //
	opRevX               //
	opRevW               //
	opClzX               //
	opClzW               //
	opClsX               //
	opClsW               //
	opMaddX              // rd = ra + rn*rm
	opMaddW              //
	opMsubX              //
	opMsubW              //
	opSmaddl             //
	opSmsubl             //
	opUmaddl             //
	opUmsubl             //
	opSmulh              //
	opUmulh              //

	// Branches.
	opB      // pc = imm
	opBL     // x30 = pc+4; pc = imm
	opBcond  // if cond(a) pc = imm
	opCbzX   //
	opCbzW   //
	opCbnzX  //
	opCbnzW  //
	opTbz    // bit a of rn
	opTbnz   //
	opBr     //
	opBlr    //
	opRet    //
	opSvc    //
	opBrk    // imm = comment
	opMrs    // a = system register id
	opMsr    //
	opClrex  //
	opDcZva  //
	opSysNop // cache maintenance without effect here (dc cvau, ic ivau)

	// Loads and stores with an immediate offset (no writeback), hot forms.
	opLdrXo
	opLdrWo
	opLdrBo
	opStrXo
	opStrWo
	opStrBo
	// Generic load/store: a = type (ls*), b = addressing mode (am*).
	opLdSt
	// Pairs: a = type (lp*), b = mode. Hot forms for 64-bit pairs.
	opLdpXo
	opStpXo
	opLdpXpre
	opStpXpre
	opLdpXpost
	opStpXpost
	opLdStP
	// Exclusives and ordered accesses: a = size log2.
	opLdxr  // b = acquire
	opStxr  // rm = status register, b = release
	opLdxp  //
	opStxp  //
	opLdar  // load-acquire (ldar, ldapr)
	opStlr  // store-release
	opCas   // rm = Rs (compare/result), b = flags
	opCasp  //
	opAtom  // b = atomic op (atom*)
	opSwp   //
	opVLdSt // AdvSIMD structure load/store, see simd_mem.go

	// Scalar floating point: a = precision (0 single, 1 double, 3 half).
	opFmovReg    // fd = fn
	opFabs       //
	opFneg       //
	opFsqrt      //
	opFcvt       // b = destination precision
	opFrint      // b = rounding (frint*)
	opFadd       //
	opFsub       //
	opFmul       //
	opFdiv       //
	opFmax       //
	opFmin       //
	opFmaxnm     //
	opFminnm     //
	opFnmul      //
	opFmadd      //
	opFmsub      //
	opFnmadd     //
	opFnmsub     //
	opFcmp       // b: bit0 = signal on QNaN (fcmpe), bit1 = compare with zero
	opFccmp      // imm = nzcv if cond(ra) false; b = fccmpe
	opFcsel      // cond in b
	opFmovI      // fd = imm (bits)
	opFmovToGP   // rd(gp) = bits of fn; b = 0: 32-bit, 1: 64-bit, 2: upper half of vn
	opFmovFromGP // fd = bits of rn(gp); b as above
	opFcvtToInt  // rd(gp) = convert(fn); b = rounding | signed<<3 | 64bit<<4; imm = fbits
	opIntToFcvt  // fd = convert(rn(gp)); b = signed | 64bit<<1; imm = fbits

	// AdvSIMD (vector and scalar) data processing: see simd.go.
	opSimd
	opSimdImm // modified immediate: ra = sub-op, imm = 64-bit pattern

	// Pointer authentication, decoded only when it is on (pauth.go).
	opPAuth    // pac*, aut*, xpac*, pacga: a = kind, b = key
	opPAuthLdr // ldraa, ldrab
	opPAuthBr  // braa, blraa, retaa and the B-key and zero-modifier forms

	// opLogged marks a slot whose logged value comes from dynamicValue
	// before the instruction runs; the instruction's own op is its
	// description's CoreOp (Core.describeSlot, Core.Execute).
	opLogged
	numOps
)
