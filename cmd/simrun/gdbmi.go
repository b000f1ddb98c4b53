package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A reader of gdb's machine interface (MI) output, enough to drive
// gdb-multiarch from simrun unwind check --against gdb. The syntax is
// gdb's manual's "GDB/MI Output Syntax": each line is a record; a
// result record starts with '^' (done, running, connected, error, exit),
// an asynchronous one with '*' (exec: stopped, running), '+' (status) or
// '=' (notify), a stream record with '~' (console), '@' (target) or '&'
// (log) followed by one C string; "(gdb)" ends a batch of output. A
// record may start with a numeric token. Results are NAME=VALUE pairs
// separated by commas; a value is a C string, a tuple {NAME=VALUE,...}
// or a list [VALUE,...] or [NAME=VALUE,...].

// miRecord is one line of MI output.
type miRecord struct {
	Kind  byte   // '^', '*', '+', '=', '~', '@', '&', or '(' for the prompt
	Class string // a result or async record's class ("done", "stopped")
	Text  string // a stream record's text
	// Results are a result or async record's NAME=VALUE pairs in order;
	// a value is a string, []miResult (a tuple) or []any (a list of
	// values or of results).
	Results []miResult
}

type miResult struct {
	Name  string
	Value any
}

// get returns the string value of result name, "" if absent.
func (r *miRecord) get(name string) string {
	for _, x := range r.Results {
		if x.Name == name {
			if s, ok := x.Value.(string); ok {
				return s
			}
		}
	}
	return ""
}

// parseMI reads one line of MI output (without its line end).
func parseMI(line string) (*miRecord, error) {
	line = strings.TrimRight(line, "\r")
	if strings.HasPrefix(line, "(gdb)") {
		return &miRecord{Kind: '('}, nil
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++ // the token
	}
	if i >= len(line) {
		return nil, fmt.Errorf("gdb/mi: no record in %q", line)
	}
	r := &miRecord{Kind: line[i]}
	p := &miParser{s: line, i: i + 1}
	switch r.Kind {
	case '~', '@', '&':
		s, err := p.cstring()
		if err != nil {
			return nil, err
		}
		if p.i != len(p.s) {
			return nil, p.errf("text after the stream record's string")
		}
		r.Text = s
		return r, nil
	case '^', '*', '+', '=':
	default:
		return nil, fmt.Errorf("gdb/mi: unknown record %q", line)
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ',' {
		p.i++
	}
	r.Class = p.s[start:p.i]
	if r.Class == "" {
		return nil, p.errf("no class")
	}
	for p.i < len(p.s) {
		p.i++ // the comma
		res, err := p.result(0)
		if err != nil {
			return nil, err
		}
		r.Results = append(r.Results, res)
		if p.i < len(p.s) && p.s[p.i] != ',' {
			return nil, p.errf("want ',' between results")
		}
	}
	return r, nil
}

type miParser struct {
	s string
	i int
}

func (p *miParser) errf(format string, a ...any) error {
	return fmt.Errorf("gdb/mi: %s at column %d of %q", fmt.Sprintf(format, a...), p.i, p.s)
}

// miMaxDepth bounds the nesting of tuples and lists (gdb's own output
// nests a few levels; a deeper line is refused, not recursed into).
const miMaxDepth = 64

func (p *miParser) result(depth int) (miResult, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '=' && p.s[p.i] != ',' && p.s[p.i] != '{' && p.s[p.i] != '[' && p.s[p.i] != '"' {
		p.i++
	}
	if p.i >= len(p.s) || p.s[p.i] != '=' || p.i == start {
		return miResult{}, p.errf("want NAME=VALUE")
	}
	name := p.s[start:p.i]
	p.i++
	v, err := p.value(depth)
	return miResult{name, v}, err
}

func (p *miParser) value(depth int) (any, error) {
	if depth > miMaxDepth {
		return nil, p.errf("values nested too deeply")
	}
	if p.i >= len(p.s) {
		return nil, p.errf("want a value")
	}
	switch p.s[p.i] {
	case '"':
		return p.cstring()
	case '{':
		p.i++
		var t []miResult
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return t, nil
		}
		for {
			r, err := p.result(depth + 1)
			if err != nil {
				return nil, err
			}
			t = append(t, r)
			if p.i >= len(p.s) {
				return nil, p.errf("unterminated tuple")
			}
			c := p.s[p.i]
			p.i++
			if c == '}' {
				return t, nil
			}
			if c != ',' {
				return nil, p.errf("want ',' or '}'")
			}
		}
	case '[':
		p.i++
		var l []any
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return l, nil
		}
		for {
			var v any
			var err error
			if p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '{' || p.s[p.i] == '[') {
				v, err = p.value(depth + 1)
			} else {
				var r miResult
				r, err = p.result(depth + 1)
				v = r
			}
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			if p.i >= len(p.s) {
				return nil, p.errf("unterminated list")
			}
			c := p.s[p.i]
			p.i++
			if c == ']' {
				return l, nil
			}
			if c != ',' {
				return nil, p.errf("want ',' or ']'")
			}
		}
	}
	return nil, p.errf("want a value")
}

// cstring reads a C string with gdb's escapes (\n, \t, \", \\, octal
// \ooo and the rest of C's).
func (p *miParser) cstring() (string, error) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", p.errf("want '\"'")
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.i >= len(p.s) {
				return "", p.errf("unterminated escape")
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case 'e':
				b.WriteByte(0x1b)
			case '0', '1', '2', '3', '4', '5', '6', '7':
				j := p.i - 1
				for p.i < len(p.s) && p.i-j < 3 && p.s[p.i] >= '0' && p.s[p.i] <= '7' {
					p.i++
				}
				v, err := strconv.ParseUint(p.s[j:p.i], 8, 16)
				if err != nil || v > 0xff {
					return "", p.errf("bad octal escape")
				}
				b.WriteByte(byte(v))
			default:
				b.WriteByte(e) // \" \\ \' \?
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("gdb/mi: unterminated string in " + strconv.Quote(p.s))
}

// miQuote quotes s as a C string for an MI command's argument.
func miQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
