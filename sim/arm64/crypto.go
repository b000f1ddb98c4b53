package arm64

import "math/bits"

// The Cryptographic Extension (FEAT_AES with PMULL, FEAT_SHA1,
// FEAT_SHA256), which the Cortex-A72 that simrun's HWCAP describes has.
// The operations follow the Arm ARM pseudocode: vectors are little-endian
// byte arrays, byte i of an AES state is row i%4, column i/4.

// Sub-operations of opSimd for the extension (continuing the list in
// decode_simd.go).
const (
	vAese = vDotIdx + 1 + iota
	vAesd
	vAesmc
	vAesimc
	vSha1c
	vSha1p
	vSha1m
	vSha1su0
	vSha256h
	vSha256h2
	vSha256su1
	vSha1h
	vSha1su1
	vSha256su0
	vPmull64 // pmull/pmull2 .1q: sfPart2 selects the upper doublewords
)

// decodeCrypto decodes the AES and SHA encodings, which sit in the gaps of
// the AdvSIMD two-register-misc and three-same classes.
//
//	AES          0100 1110 0010 1000 0 opc:5 10 Rn Rd   (opc 4-7)
//	SHA 3-reg    0101 1110 000 Rm 0 opc:3 00 Rn Rd      (opc 0-6)
//	SHA 2-reg    0101 1110 0010 1000 0 opc:5 10 Rn Rd   (opc 0-2)
func decodeCrypto(w uint32) (inst, bool) {
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	switch {
	case w&0xffffcc00 == 0x4e284800: // opc 0b001xx
		return simd([4]int{vAese, vAesd, vAesmc, vAesimc}[field(w, 12, 2)], rd, rn, 0, 0, sfQ, 0), true
	case w&0xffe08c00 == 0x5e000000:
		if opc := field(w, 12, 3); opc < 7 {
			return simd([7]int{vSha1c, vSha1p, vSha1m, vSha1su0, vSha256h, vSha256h2, vSha256su1}[opc], rd, rn, rm, 0, sfQ, 0), true
		}
	case w&0xffffcc00 == 0x5e280800:
		if opc := field(w, 12, 5); opc < 3 {
			return simd([3]int{vSha1h, vSha1su1, vSha256su0}[opc], rd, rn, 0, 0, sfQ, 0), true
		}
	}
	return inst{}, false
}

// aesSbox and aesInvSbox are built from their definition: the inverse in
// GF(2^8) modulo x^8+x^4+x^3+x+1, then the affine map.
var aesSbox, aesInvSbox = func() (s, inv [256]byte) {
	for i := 0; i < 256; i++ {
		x := gfInv(byte(i))
		y := x ^ bits.RotateLeft8(x, 1) ^ bits.RotateLeft8(x, 2) ^ bits.RotateLeft8(x, 3) ^ bits.RotateLeft8(x, 4) ^ 0x63
		s[i] = y
		inv[y] = byte(i)
	}
	return
}()

// gfMul multiplies in the AES field.
func gfMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

func gfInv(a byte) byte {
	if a == 0 {
		return 0
	}
	// a^254 = a^-1
	r, p := byte(1), a
	for e := 254; e > 0; e >>= 1 {
		if e&1 != 0 {
			r = gfMul(r, p)
		}
		p = gfMul(p, p)
	}
	return r
}

func vecBytes(v vec) (b [16]byte) {
	for i := 0; i < 16; i++ {
		b[i] = byte(v[i/8] >> (8 * (i % 8)))
	}
	return
}

func bytesVec(b [16]byte) (v vec) {
	for i := 0; i < 16; i++ {
		v[i/8] |= uint64(b[i]) << (8 * (i % 8))
	}
	return
}

// aesRound is AESE (inverse false) or AESD: round key addition, then
// (inverse) ShiftRows and (inverse) SubBytes.
func aesRound(d, n vec, inverse bool) vec {
	s := vecBytes(vec{d[0] ^ n[0], d[1] ^ n[1]})
	var out [16]byte
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			if inverse {
				out[r+4*c] = aesInvSbox[s[r+4*((c-r+4)%4)]]
			} else {
				out[r+4*c] = aesSbox[s[r+4*((c+r)%4)]]
			}
		}
	}
	return bytesVec(out)
}

// aesMix is AESMC (inverse false) or AESIMC: (inverse) MixColumns.
func aesMix(n vec, inverse bool) vec {
	s := vecBytes(n)
	m := [4]byte{2, 3, 1, 1}
	if inverse {
		m = [4]byte{14, 11, 13, 9}
	}
	var out [16]byte
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			var x byte
			for k := 0; k < 4; k++ {
				x ^= gfMul(m[(k-r+4)%4], s[k+4*c])
			}
			out[r+4*c] = x
		}
	}
	return bytesVec(out)
}

// words and fromWords view a vector as four 32-bit elements.
func words(v vec) [4]uint32 {
	return [4]uint32{uint32(v[0]), uint32(v[0] >> 32), uint32(v[1]), uint32(v[1] >> 32)}
}

func fromWords(w [4]uint32) vec {
	return vec{uint64(w[0]) | uint64(w[1])<<32, uint64(w[2]) | uint64(w[3])<<32}
}

func rol32(x uint32, n int) uint32 { return bits.RotateLeft32(x, n) }
func ror32(x uint32, n int) uint32 { return bits.RotateLeft32(x, -n) }

func shaChoose(x, y, z uint32) uint32   { return (y^z)&x ^ z }
func shaMajority(x, y, z uint32) uint32 { return x&y | (x|y)&z }
func shaParity(x, y, z uint32) uint32   { return x ^ y ^ z }

// sha1Hash is SHA1C/SHA1P/SHA1M: four rounds on the state X (a, b, c, d in
// elements 0-3) and Y (e), with schedule words W.
func sha1Hash(x vec, y uint32, w vec, f func(x, y, z uint32) uint32) vec {
	X, W := words(x), words(w)
	for e := 0; e < 4; e++ {
		t := f(X[1], X[2], X[3])
		y += rol32(X[0], 5) + t + W[e]
		X[1] = rol32(X[1], 30)
		// <Y, X> = ROL(Y:X, 32)
		y, X = X[3], [4]uint32{y, X[0], X[1], X[2]}
	}
	return fromWords(X)
}

// sha256Hash is the four-round step of SHA256H (part1: returns X) and
// SHA256H2 (returns Y).
func sha256Hash(x, y, w vec, part1 bool) vec {
	X, Y, W := words(x), words(y), words(w)
	for e := 0; e < 4; e++ {
		chs := shaChoose(Y[0], Y[1], Y[2])
		maj := shaMajority(X[0], X[1], X[2])
		t := Y[3] + (ror32(Y[0], 6) ^ ror32(Y[0], 11) ^ ror32(Y[0], 25)) + chs + W[e]
		X[3] += t
		Y[3] = t + (ror32(X[0], 2) ^ ror32(X[0], 13) ^ ror32(X[0], 22)) + maj
		// <Y, X> = ROL(Y:X, 32)
		Y, X = [4]uint32{X[3], Y[0], Y[1], Y[2]}, [4]uint32{Y[3], X[0], X[1], X[2]}
	}
	if part1 {
		return fromWords(X)
	}
	return fromWords(Y)
}

// clmul64 is the 128-bit carry-less product of a and b (hi, lo).
func clmul64(a, b uint64) (hi, lo uint64) {
	for i := 0; i < 64; i++ {
		if b>>i&1 != 0 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return
}

// execCrypto computes the result of a Cryptographic Extension operation
// from Vd, Vn and Vm.
func execCrypto(sub int, d, n, m vec, part2 bool) vec {
	switch sub {
	case vAese, vAesd:
		return aesRound(d, n, sub == vAesd)
	case vAesmc, vAesimc:
		return aesMix(n, sub == vAesimc)
	case vSha1c:
		return sha1Hash(d, uint32(n[0]), m, shaChoose)
	case vSha1p:
		return sha1Hash(d, uint32(n[0]), m, shaParity)
	case vSha1m:
		return sha1Hash(d, uint32(n[0]), m, shaMajority)
	case vSha1h:
		return vec{uint64(rol32(uint32(n[0]), 30)), 0}
	case vSha1su0:
		// (Vn<63:0> : Vd<127:64>) ^ Vd ^ Vm
		return vec{d[1] ^ d[0] ^ m[0], n[0] ^ d[1] ^ m[1]}
	case vSha1su1:
		T := words(vec{d[0] ^ (n[0]>>32 | n[1]<<32), d[1] ^ n[1]>>32})
		return fromWords([4]uint32{rol32(T[0], 1), rol32(T[1], 1), rol32(T[2], 1), rol32(T[3], 1) ^ rol32(T[0], 2)})
	case vSha256h:
		return sha256Hash(d, n, m, true)
	case vSha256h2:
		return sha256Hash(n, d, m, false)
	case vSha256su0:
		D, N := words(d), words(n)
		T := [4]uint32{D[1], D[2], D[3], N[0]}
		var r [4]uint32
		for e := range r {
			r[e] = (ror32(T[e], 7) ^ ror32(T[e], 18) ^ T[e]>>3) + D[e]
		}
		return fromWords(r)
	case vSha256su1:
		D, N, M := words(d), words(n), words(m)
		T0 := [4]uint32{N[1], N[2], N[3], M[0]}
		sigma1 := func(x uint32) uint32 { return ror32(x, 17) ^ ror32(x, 19) ^ x>>10 }
		var r [4]uint32
		r[0] = sigma1(M[2]) + D[0] + T0[0]
		r[1] = sigma1(M[3]) + D[1] + T0[1]
		r[2] = sigma1(r[0]) + D[2] + T0[2]
		r[3] = sigma1(r[1]) + D[3] + T0[3]
		return fromWords(r)
	case vPmull64:
		i := 0
		if part2 {
			i = 1
		}
		hi, lo := clmul64(n[i], m[i])
		return vec{lo, hi}
	}
	panic("execCrypto: not a crypto sub-operation")
}
