package s390x

//go:generate go run ./internal/opgen -o zops.go insns.txt

// inst is one pre-decoded instruction: 16 bytes, decoded once per 2-byte
// code page slot and executed by the switch in run.go.
//
// The fields are filed by format (bit 0 is the most significant bit of the
// instruction, as in the Principles of Operation):
//
//	RR    |op:8|R1:4|R2:4|                            r1 r2
//	RRE   |op:16|////:8|R1:4|R2:4|                    r1 r2
//	RRF-a |op:16|R3:4|M4:4|R1:4|R2:4|                 r1 r2 r3, m = M4
//	RRF-c |op:16|M3:4|////:4|R1:4|R2:4|               r1 r2, m = M3 (condition)
//	RRF-e |op:16|M3:4|M4:4|R1:4|R2:4|                 r1 r2, m = M3 (rounding), r3 = M4
//	RRD   |op:16|R1:4|////:4|R3:4|R2:4|               r1 r2 r3
//	RX    |op:8|R1:4|X2:4|B2:4|D2:12|                 r1, r2 = X2, b = B2, imm = D2
//	RXE   |op:8|R1:4|X2:4|B2:4|D2:12|////:8|op:8|     as RX
//	RXE   |op:8|R1:4|X2:4|B2:4|D2:12|M3:4|////:4|op:8| (lcbb) as RX, m = M3
//	RXF   |op:8|R3:4|X2:4|B2:4|D2:12|R1:4|////:4|op:8| as RX, r3
//	RXY   |op:8|R1:4|X2:4|B2:4|DL2:12|DH2:8|op:8|     as RX, imm = DH2:DL2 (signed 20 bits)
//	RS    |op:8|R1:4|R3:4|B2:4|D2:12|                 r1 r3, b, imm = D2 (RS-b: m = M3)
//	RSY   |op:8|R1:4|R3:4|B2:4|DL2:12|DH2:8|op:8|     as RS, 20-bit displacement
//	RI    |op:8|R1:4|op:4|I2:16|                      r1, imm = I2 sign-extended (RI-c: m = M1)
//	RIL   |op:8|R1:4|op:4|I2:32|                      r1, imm = I2 sign-extended (RIL-c: m = M1)
//	RIE-b |op:8|R1:4|R2:4|RI4:16|M3:4|////:4|op:8|    r1 r2, m = M3, imm = 2*RI4
//	RIE-c |op:8|R1:4|M3:4|RI4:16|I2:8|op:8|           r1, r2 = I2, m = M3, imm = 2*RI4
//	RIE-d |op:8|R1:4|R3:4|I2:16|////:8|op:8|          r1 r3, imm = I2 sign-extended
//	RIE-f |op:8|R1:4|R2:4|I3:8|I4:8|I5:8|op:8|        r1 r2, r3 = rotation, m = flags, imm = mask
//	RIE-g |op:8|R1:4|M3:4|I2:16|////:8|op:8|          r1, m = M3, imm = I2 sign-extended
//	RRS   |op:8|R1:4|R2:4|B4:4|D4:12|M3:4|////:4|op:8| r1 r2, b = B4, imm = D4, m = M3
//	RIS   |op:8|R1:4|M3:4|B4:4|D4:12|I2:8|op:8|       r1, r2 = I2, b = B4, imm = D4, m = M3
//	SI    |op:8|I2:8|B1:4|D1:12|                      m = I2, b = B1, imm = D1
//	SIY   |op:8|I2:8|B1:4|DL1:12|DH1:8|op:8|          as SI, 20-bit displacement
//	SIL   |op:16|B1:4|D1:12|I2:16|                    b = B1, imm = I2<<16 | D1 (I2 signed)
//	SS-a  |op:8|L:8|B1:4|D1:12|B2:4|D2:12|            m = L, b = B1, r2 = B2, imm = D2<<16 | D1
//	S     |op:16|B2:4|D2:12|                          b = B2, imm = D2
//
// Pc-relative operands (RI2, RI4 of branches and relative loads) are kept
// as byte offsets from the instruction's address. Base and index fields
// that name register 0 are rNone, which always reads as zero, so every
// address is r[b] + r[r2] + imm.
//
// Vector formats add the RXB field, the fifth (high) bit of each vector
// register number: its bits 0-3 belong to the register fields at bits 8,
// 12, 16 and 32 of the instruction.
//
//	VRX   |op:8|V1:4|X2:4|B2:4|D2:12|M3:4|RXB:4|op:8|   r1 = V1, r2 = X2, b, imm, m = M3
//	VRR-a |op:8|V1:4|V2:4|////:8|M5:4|M4:4|M3:4|RXB:4|op:8|  r1 r2, m = M3, r3 = M4, b = M5
//	VRR-b |op:8|V1:4|V2:4|V3:4|////:4|M5:4|////:4|M4:4|RXB:4|op:8|  r1 r2 r3, m = M4, b = M5
//	VRR-c |op:8|V1:4|V2:4|V3:4|////:4|M6:4|M5:4|M4:4|RXB:4|op:8|    r1 r2 r3, m = M4, b = M5, imm = M6
//	VRR-d |op:8|V1:4|V2:4|V3:4|M5:4|M6:4|////:4|V4:4|RXB:4|op:8|    r1 r2 r3, b = V4, m = M5, imm = M6
//	VRR-e |op:8|V1:4|V2:4|V3:4|M6:4|////:4|M5:4|V4:4|RXB:4|op:8|    r1 r2 r3, b = V4, m = M5, imm = M6
//	VRR-f |op:8|V1:4|R2:4|R3:4|////:12|RXB:4|op:8|      r1 = V1, r2 r3 (general registers)
//	VRI-a |op:8|V1:4|////:4|I2:16|M3:4|RXB:4|op:8|      r1, imm = I2 sign-extended, m = M3
//	VRI-b |op:8|V1:4|////:4|I2:8|I3:8|M4:4|RXB:4|op:8|  r1, r2 = I2, r3 = I3, m = M4
//	VRI-c |op:8|V1:4|V3:4|I2:16|M4:4|RXB:4|op:8|        r1 r3, imm = I2, m = M4
//	VRI-d |op:8|V1:4|V2:4|V3:4|////:4|I4:8|M5:4|RXB:4|op:8|  r1 r2 r3, imm = I4, m = M5
//	VRI-e |op:8|V1:4|V2:4|I3:12|M5:4|M4:4|RXB:4|op:8|   r1 r2, imm = I3, m = M4, b = M5
//	VRS-a |op:8|V1:4|V3:4|B2:4|D2:12|M4:4|RXB:4|op:8|   r1 r3, b, imm, m = M4
//	VRS-b |op:8|V1:4|R3:4|B2:4|D2:12|M4:4|RXB:4|op:8|   r1 = V1, r3 = R3 (general), b, imm, m = M4
//	VRS-c |op:8|R1:4|V3:4|B2:4|D2:12|M4:4|RXB:4|op:8|   r1 = R1 (general), r3 = V3, b, imm, m = M4
type inst struct {
	op  op
	ln  uint8 // length in bytes: 2, 4 or 6
	r1  uint8
	r2  uint8
	r3  uint8
	b   uint8
	m   uint8
	imm int64
}

// rNone is the register index of a base or index field naming r0: it
// reads as zero and is never written.
const rNone = 16

type op uint16

// Ops that are not one instruction: decoder states and the specialised
// forms of branches. The instructions follow from opFirst (zops.go).
const (
	opNone  op = iota // slot not decoded yet
	opUndef           // undefined, or defined but not implemented (see undefFault)
	opSpec            // invalid operand field (specification exception); imm = reason index
	opNop             // branch never taken (bcr/bc/brc with mask 0, bcr M,0), prefetch
	opJ               // brc/brcl 15: pc += imm
	opBR              // bcr 15,R2: pc = r2
	// opLogged marks a slot whose logged value comes from dynamicValue
	// before the instruction runs; the instruction's own op is its
	// description's CoreOp (Core.describeSlot, Core.Execute).
	opLogged
	opFirst
)

// Instruction formats as opgen recognises them in the csv. A lower-case
// suffix marks a variant whose 4-bit field at R1/R3 is a mask (m) or whose
// immediate is pc-relative.
const (
	fmtNone uint8 = iota
	fmtE
	fmtI
	fmtRR
	fmtRRm
	fmtRRE
	fmtRRFa
	fmtRRFc
	fmtRRFe
	fmtRRD
	fmtRX
	fmtRXm
	fmtRXE
	fmtRXEm
	fmtRXF
	fmtRXY
	fmtRXYm
	fmtRS
	fmtRSm
	fmtRSY
	fmtRSYm
	fmtRSI
	fmtRI
	fmtRIrel
	fmtRIm
	fmtRIL
	fmtRILrel
	fmtRILm
	fmtRIEb
	fmtRIEc
	fmtRIEd
	fmtRIEe
	fmtRIEf
	fmtRIEg
	fmtRRS
	fmtRIS
	fmtSI
	fmtSIY
	fmtSIL
	fmtSSa
	fmtVRX
	fmtVRRa
	fmtVRRb
	fmtVRRc
	fmtVRRd
	fmtVRRe
	fmtVRRf
	fmtVRIa
	fmtVRIb
	fmtVRIc
	fmtVRId
	fmtVRIe
	fmtVRSa
	fmtVRSb
	fmtVRSc
	fmtS
)

// Where the opcode continues after the first byte (extKinds in zops.go).
const (
	extNone  = iota // the first byte is the opcode
	ext8at8         // bits 8-15
	ext4at12        // bits 12-15
	ext8at40        // bits 40-47
)

// opInfo is the static description of an instruction op.
type opInfo struct {
	name   string // mnemonic, lower case
	format uint8
	length uint8
	key    uint16 // first opcode byte << 8 | extension
	// reserved marks the fields the architecture reserves (left-aligned
	// instruction bits). Like qemu, the decoder ignores them; x/arch
	// insists that they are zero.
	reserved uint64
}

func (o op) info() *opInfo {
	if o >= opFirst && o < opEnd {
		return &opInfos[o-opFirst]
	}
	return nil
}

func (o op) String() string {
	if i := o.info(); i != nil {
		return i.name
	}
	switch o {
	case opNone:
		return "(none)"
	case opUndef:
		return "(undefined)"
	case opSpec:
		return "(specification exception)"
	case opNop:
		return "(nop)"
	case opJ:
		return "(j)"
	case opLogged:
		return "(logged)"
	case opBR:
		return "(br)"
	}
	return "(op?)"
}
