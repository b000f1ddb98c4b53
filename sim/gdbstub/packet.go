package gdbstub

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The framing of the GDB remote serial protocol (GDB manual, "Remote
// Protocol", "Overview"): a packet is '$' data '#' and two hex digits of
// the modulo-256 sum of data's bytes. The receiver answers '+' (good) or
// '-' (resend) until QStartNoAckMode turns acknowledgments off. A lone
// 0x03 byte outside a packet is an interrupt request. In binary data,
// '}' escapes the next byte (XOR 0x20); '#', '$', '}' and '*' (which
// starts run-length encoding) are always escaped.

// maxPacket bounds the data of one incoming packet. It is what qSupported
// advertises as PacketSize: gdb sends nothing longer, and a peer that
// does is cut off rather than allowed to grow the stub's memory.
const maxPacket = 0x4000

// eventKind says what the reader saw on the connection.
type eventKind uint8

const (
	evPacket    eventKind = iota // a packet with a good checksum
	evBadPacket                  // a packet whose checksum did not match
	evAck                        // '+'
	evNack                       // '-': resend the last reply
	evInterrupt                  // 0x03
)

type event struct {
	kind eventKind
	data string // evPacket: the packet's data, as sent (still escaped)
}

// errTooLong: a packet longer than maxPacket.
var errTooLong = errors.New("packet longer than the advertised PacketSize")

// readEvent reads the next event from r. Bytes outside packets other
// than '+', '-' and 0x03 are skipped, as gdb does with line noise.
func readEvent(r *bufio.Reader) (event, error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return event{}, err
		}
		switch c {
		case '+':
			return event{kind: evAck}, nil
		case '-':
			return event{kind: evNack}, nil
		case 0x03:
			return event{kind: evInterrupt}, nil
		case '$':
			return readPacket(r)
		}
	}
}

// readPacket reads a packet's data and checksum after its '$'.
func readPacket(r *bufio.Reader) (event, error) {
	var b strings.Builder
	var sum byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return event{}, unexpectedEOF(err)
		}
		if c == '#' {
			break
		}
		if c == '$' { // a new packet begins: the old one was cut short
			b.Reset()
			sum = 0
			continue
		}
		if b.Len() >= maxPacket {
			return event{}, errTooLong
		}
		b.WriteByte(c)
		sum += c
	}
	var cs [2]byte
	if _, err := io.ReadFull(r, cs[:]); err != nil {
		return event{}, unexpectedEOF(err)
	}
	want, ok := parseHexByte(cs[0], cs[1])
	if !ok || want != sum {
		return event{kind: evBadPacket, data: b.String()}, nil
	}
	return event{kind: evPacket, data: b.String()}, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func parseHexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexVal(hi)
	l, ok2 := hexVal(lo)
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// frame returns data framed as a packet: '$' data '#' checksum. data
// must already be escaped where it holds binary.
func frame(data []byte) []byte {
	out := make([]byte, 0, len(data)+4)
	out = append(out, '$')
	var sum byte
	for _, c := range data {
		sum += c
	}
	out = append(out, data...)
	return append(out, '#', hexDigits[sum>>4], hexDigits[sum&15])
}

const hexDigits = "0123456789abcdef"

// escape appends b to dst with '#', '$', '}' and '*' escaped.
func escape(dst, b []byte) []byte {
	for _, c := range b {
		switch c {
		case '#', '$', '}', '*':
			dst = append(dst, '}', c^0x20)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// unescape decodes binary data: '}' x stands for x^0x20.
func unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '}' {
			i++
			if i == len(s) {
				return nil, errors.New("escape character at the end of binary data")
			}
			c = s[i] ^ 0x20
		}
		out = append(out, c)
	}
	return out, nil
}

// appendHex appends b as lower-case hex digits.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// decodeHex decodes an even number of hex digits.
func decodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("odd number of hex digits (%d)", len(s))
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		v, ok := parseHexByte(s[2*i], s[2*i+1])
		if !ok {
			return nil, fmt.Errorf("bad hex digits %q", s[2*i:2*i+2])
		}
		out[i] = v
	}
	return out, nil
}

// parseHexU64 parses a hex number of at most 16 digits.
func parseHexU64(s string) (uint64, error) {
	if s == "" || len(s) > 16 {
		return 0, fmt.Errorf("bad hex number %q", s)
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d, ok := hexVal(s[i])
		if !ok {
			return 0, fmt.Errorf("bad hex number %q", s)
		}
		v = v<<4 | uint64(d)
	}
	return v, nil
}

// parseAddrLen parses "ADDR,LEN" (both hex).
func parseAddrLen(s string) (addr, n uint64, err error) {
	a, l, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("want ADDR,LENGTH, got %q", s)
	}
	if addr, err = parseHexU64(a); err != nil {
		return 0, 0, err
	}
	if n, err = parseHexU64(l); err != nil {
		return 0, 0, err
	}
	return addr, n, nil
}
