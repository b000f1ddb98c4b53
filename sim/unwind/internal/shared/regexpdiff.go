package shared

import (
	"fmt"
	"regexp"
	"strings"
)

// RegexpDiff checks output against a dejagnu dump file (.d) the way
// binutils' regexp_diff does: blank lines are ignored on both sides;
// each remaining line of want is a regexp that must match a whole line
// of output, in order; lines starting with '#' are comments except
// "#..." (skip output lines up to the next match), "#?RE" (an optional
// line), "#pass" (stop: the rest does not matter) and "#failif" (the
// check passes when the output does not match).
func RegexpDiff(output, want string) error {
	a := nonBlank(output)
	var b []string
	for _, l := range strings.Split(want, "\n") {
		if l != "" {
			b = append(b, l)
		}
	}
	failIf := false
	err := func() error {
		i := 0
		for j := 0; j < len(b); j++ {
			l := b[j]
			switch {
			case l == "#pass":
				return nil
			case l == "#failif":
				failIf = true
				continue
			case strings.HasPrefix(l, "#..."):
				// Find the next pattern, then skip output until it matches.
				k := j + 1
				for k < len(b) && isComment(b[k]) && b[k] != "#pass" {
					k++
				}
				if k >= len(b) || b[k] == "#pass" {
					return nil
				}
				re, err := compile(b[k])
				if err != nil {
					return err
				}
				for i < len(a) && !re.MatchString(a[i]) {
					i++
				}
				if i >= len(a) {
					return fmt.Errorf("no output line matches %q (after #...)", b[k])
				}
				i++
				j = k
				continue
			case strings.HasPrefix(l, "#?"):
				re, err := compile(l[2:])
				if err != nil {
					return err
				}
				if i < len(a) && re.MatchString(a[i]) {
					i++
				}
				continue
			case isComment(l):
				continue
			}
			re, err := compile(l)
			if err != nil {
				return err
			}
			if i >= len(a) {
				return fmt.Errorf("output ended; expected a line matching %q", l)
			}
			if !re.MatchString(a[i]) {
				return fmt.Errorf("line %q does not match %q", a[i], l)
			}
			i++
		}
		if i < len(a) {
			return fmt.Errorf("extra output line %q", a[i])
		}
		return nil
	}()
	if failIf {
		if err == nil {
			return fmt.Errorf("output matches a #failif expectation")
		}
		return nil
	}
	return err
}

func isComment(l string) bool {
	return strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "#...") && !strings.HasPrefix(l, "#?")
}

func nonBlank(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func compile(re string) (*regexp.Regexp, error) {
	r, err := regexp.Compile("^(?:" + re + ")$")
	if err != nil {
		return nil, fmt.Errorf("expectation %q: %v", re, err)
	}
	return r, nil
}

// Xxd parses the output of xxd back into bytes.
func Xxd(text string) ([]byte, error) {
	var out []byte
	for n, l := range strings.Split(text, "\n") {
		if l == "" {
			continue
		}
		c := strings.Index(l, ": ")
		if c < 0 {
			return nil, fmt.Errorf("xxd line %d: no offset", n+1)
		}
		hex := l[c+2:]
		if len(hex) > 39 {
			hex = hex[:39]
		}
		hex = strings.ReplaceAll(hex, " ", "")
		for i := 0; i+1 < len(hex); i += 2 {
			var v byte
			if _, err := fmt.Sscanf(hex[i:i+2], "%02x", &v); err != nil {
				return nil, fmt.Errorf("xxd line %d: %v", n+1, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}
