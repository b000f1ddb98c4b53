package cpu

// VecRegs is a core's 32 128-bit vector registers (arm64's SIMD&FP
// V0-V31, s390x's V0-V31), each as two doublewords in the core's order.
type VecRegs = [32][2]uint64

// A core keeps its vector registers behind a pointer, live: its own
// storage, or while a thread runs after ThreadCore.SwitchThread, that
// thread's saved context's (a switch then copies none of them). The
// three functions below move them as SaveThread, LoadThread and
// SwitchThread say.

// SaveVecs copies the live registers into into, a thread's context. If
// into is the live storage, into holds them already; the core takes them
// back into own, so that into stays what it is now as the core runs on.
func SaveVecs(live **VecRegs, own, into *VecRegs) {
	if *live == into {
		*own = *into
		*live = own
		return
	}
	*into = **live
}

// LoadVecs makes a copy of from, in own, the live registers.
func LoadVecs(live **VecRegs, own, from *VecRegs) {
	*own = *from
	*live = own
}

// SwitchVecs saves the live registers into from (unless from is nil, or
// they are from's already) and makes to's storage the live one.
func SwitchVecs(live **VecRegs, from, to *VecRegs) {
	if from != nil && *live != from {
		*from = **live
	}
	*live = to
}
