package linux

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPriority pins getpriority/setpriority as Linux answers them: the raw
// getpriority returns 20 - nice, setpriority clamps to -20..19, and the
// errors of a bad which (EINVAL) and of nobody named (ESRCH).
func TestPriority(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, _ := testProcess(t, arch)
			get := func(which, who uint64) uint64 { return call(t, p, "getpriority", which, who) }
			set := func(which, who uint64, nice int64) uint64 {
				return call(t, p, "setpriority", which, who, uint64(nice))
			}
			require.Equal(t, uint64(20), get(prioProcess, 0), "nice 0 at start")
			require.Equal(t, uint64(0), set(prioProcess, 0, 5))
			require.Equal(t, uint64(15), get(prioProcess, 0))
			require.Equal(t, uint64(15), get(prioProcess, p.pid), "by tid")
			require.Equal(t, uint64(0), set(prioProcess, 0, -50))
			require.Equal(t, uint64(40), get(prioPgrp, 0), "clamped to -20; the caller's group")
			require.Equal(t, uint64(0), set(prioUser, 0, 50))
			require.Equal(t, uint64(1), get(prioUser, guestUID), "clamped to 19")
			require.Equal(t, errno(ESRCH), get(prioProcess, 7))
			require.Equal(t, errno(ESRCH), set(prioPgrp, 7, 0))
			require.Equal(t, errno(ESRCH), get(prioUser, 1000), "no process of another user")
			require.Equal(t, errno(EINVAL), get(3, 0))
			require.Equal(t, errno(EINVAL), set(^uint64(0), 0, 0))
		})
	}
}
