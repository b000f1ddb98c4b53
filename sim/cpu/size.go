package cpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseSize reads a byte count as users write one: a whole number with an
// optional binary unit, K, M, G or T (1024-based; "KiB", "KB" and "k" are
// taken too), e.g. "4G", "512MiB", "1048576".
func ParseSize(s string) (uint64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || (m[2] == "" && strings.EqualFold(m[3], "iB")) {
		return 0, fmt.Errorf("size %q: want a whole number with an optional unit K, M, G or T", s)
	}
	v, err := strconv.ParseUint(m[1], 10, 64)
	shift := uint(10 * (1 + strings.IndexByte("KMGT", strings.ToUpper(m[2] + "x")[0])))
	if m[2] == "" {
		shift = 0
	}
	if err != nil || v > ^uint64(0)>>shift {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return v << shift, nil
}

var sizeRE = regexp.MustCompile(`^([0-9]+) ?([KMGTkmgt]?)((?i:ib|b)?)$`)

// FormatSize prints n bytes in the largest binary unit that divides it
// (4 GiB, 1536 MiB, 100 bytes).
func FormatSize(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n != 0 && n&(1<<u.shift-1) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
