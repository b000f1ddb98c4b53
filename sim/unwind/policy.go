package unwind

import (
	"fmt"
	"strconv"
	"strings"
)

// Policy holds the switches in which real unwinders differ.  The zero
// value is not valid; DefaultPolicy gives the Linux kernel's rules (the
// unwind_user SFrame patch series, kernel/unwind/sframe.c and user.c:
// return addresses looked up as they are, RA or FP in registers and
// non-SP/FP CFA bases only in the topmost frame, PAC stripped).
type Policy struct {
	// RAMinus1 looks return addresses up as ra-1 in outer frames, so a
	// call that is the last instruction of a function (a call to a
	// noreturn function) finds its own function's row, not the next one's.
	RAMinus1 bool
	// IgnoreTopmost lets outer frames use the rules only the topmost
	// frame may use: RA still in the link register, RA or FP held in a
	// register, a CFA based on a register other than SP and FP.  The
	// registers are read from the interrupted context, as if no frame in
	// between had changed them.
	IgnoreTopmost bool
	// MaxDepth is the most frames a walk returns (frame 0 included).
	MaxDepth int
	// Gap says what to do at a pc the method has no data for.
	Gap GapMode
	// KeepPAC leaves pointer authentication codes in signed return
	// addresses (aarch64) instead of stripping them.
	KeepPAC bool
	// SignalFrames crosses signal frames: at a signal trampoline the
	// walk goes on from the interrupted context saved in the frame.
	SignalFrames bool
}

// GapMode is what a walk does at a pc without unwind data.
type GapMode uint8

const (
	GapStop GapMode = iota // end the walk ("no unwind data")
	GapFP                  // take this frame's step from the frame chain (frame pointer / back chain)
)

// DefaultMaxDepth is Linux's default perf_event_max_stack.
const DefaultMaxDepth = 127

// DefaultPolicy returns the kernel's rules.
func DefaultPolicy() Policy { return Policy{MaxDepth: DefaultMaxDepth} }

// PolicySwitch documents one setting of one switch.
type PolicySwitch struct {
	Key, Value string
	Default    bool
	What       string // what the setting does
	Who        string // which real unwinders behave this way
}

// PolicySwitches lists every setting of --unwind-policy.
var PolicySwitches = []PolicySwitch{
	{"lookup", "ra", true,
		"look return addresses up as they are",
		"the kernel's SFrame unwinder (unwind_user), glibc's SFrame backtracer, libsframe's sframe_find_fre callers"},
	{"lookup", "ra-1", false,
		"look return addresses up as ra-1 in outer frames (the frame's pc is still reported as ra)",
		"DWARF unwinders: libgcc's _Unwind_Find_FDE callers, libunwind, gdb, elfutils (perf --call-graph dwarf)"},
	{"topmost", "enforce", true,
		"rules that need the registers of the interrupted context (RA still in x30/r14, RA or FP in a register such as an s390x FPR, CFA from a register other than SP/FP) are used in the topmost frame only; elsewhere the walk stops",
		"the kernel's unwind_user (-EINVAL outside the topmost frame) and the SFrame specification"},
	{"topmost", "ignore", false,
		"use those rules in every frame, reading the registers as they are in the interrupted context",
		"an unwinder that does not track which frame is topmost; DWARF unwinders behave so for a register no inner frame restores (libgcc's and libunwind's \"same value\" default)"},
	{"depth", "N", false,
		"return at most N frames (frame 0 included); the default is 127",
		"the kernel (sysctl kernel.perf_event_max_stack, default 127), perf record --call-graph ...,N"},
	{"gap", "stop", true,
		"end the walk at a pc no FDE covers",
		"libsframe users, glibc's SFrame backtracer when its DWARF fallback fails, the kernel on architectures without a user frame-pointer unwinder"},
	{"gap", "fp", false,
		"take that one frame from the frame chain (x29 frame record, s390x back chain), then go on with the method",
		"the kernel's unwind_user, which falls back to frame pointers per frame where CONFIG_HAVE_UNWIND_USER_FP (x86-64) or the s390 back-chain unwinder is available"},
	{"pac", "strip", true,
		"strip the pointer authentication code from return addresses the row marks as signed (aarch64 [s] rows, DW_CFA_AARCH64_negate_ra_state)",
		"unwinders that support FEAT_PAuth: libgcc, libunwind, gdb, the arm64 kernel's user callchain"},
	{"pac", "keep", false,
		"use signed return addresses as they are",
		"an unwinder unaware of pointer authentication (one that ignores the SFrame mangled-RA bit)"},
	{"signal", "stop", true,
		"end the walk at the signal trampoline a handler returns to (the trampoline page has no unwind data: a gap, which gap=fp may bridge from the frame chain)",
		"the kernel's SFrame unwinder (unwind_user has no signal-frame support on arm64 or s390x), libsframe users"},
	{"signal", "frame", false,
		"recognize the trampoline by its code (mov x8, #139; svc #0 on aarch64, svc 173 or svc 119 on s390x), read the interrupted context's registers from the signal frame, and go on from the interrupted pc as a topmost frame (its pc looked up as it is, its register rules allowed)",
		"libgcc (MD_FALLBACK_FRAME_STATE_FOR), gdb's sigtramp frames, libunwind, elfutils"},
}

// ParsePolicy reads a comma-separated list of key=value switches (see
// PolicySwitches) on top of the defaults; "" and "default" give
// DefaultPolicy.
func ParsePolicy(s string) (Policy, error) {
	p := DefaultPolicy()
	s = strings.TrimSpace(s)
	if s == "" || s == "default" || s == "kernel" {
		return p, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return p, fmt.Errorf("unwind policy %q: want key=value (keys: lookup, topmost, depth, gap, pac, signal)", item)
		}
		if seen[key] {
			return p, fmt.Errorf("unwind policy: %s given twice", key)
		}
		seen[key] = true
		bad := func() error {
			var vals []string
			for _, sw := range PolicySwitches {
				if sw.Key == key {
					vals = append(vals, sw.Value)
				}
			}
			return fmt.Errorf("unwind policy %s=%s: want %s", key, val, strings.Join(vals, " or "))
		}
		switch key {
		case "lookup":
			switch val {
			case "ra":
				p.RAMinus1 = false
			case "ra-1":
				p.RAMinus1 = true
			default:
				return p, bad()
			}
		case "topmost":
			switch val {
			case "enforce":
				p.IgnoreTopmost = false
			case "ignore":
				p.IgnoreTopmost = true
			default:
				return p, bad()
			}
		case "depth":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1<<16 {
				return p, fmt.Errorf("unwind policy depth=%s: want a number of frames from 1 to 65536", val)
			}
			p.MaxDepth = n
		case "gap":
			switch val {
			case "stop":
				p.Gap = GapStop
			case "fp":
				p.Gap = GapFP
			default:
				return p, bad()
			}
		case "pac":
			switch val {
			case "strip":
				p.KeepPAC = false
			case "keep":
				p.KeepPAC = true
			default:
				return p, bad()
			}
		case "signal":
			switch val {
			case "stop":
				p.SignalFrames = false
			case "frame":
				p.SignalFrames = true
			default:
				return p, bad()
			}
		default:
			return p, fmt.Errorf("unwind policy: unknown switch %q (keys: lookup, topmost, depth, gap, pac, signal)", key)
		}
	}
	return p, nil
}

// String gives the policy in ParsePolicy's form, every switch spelled out.
func (p Policy) String() string {
	lookup, topmost, gap, pac, signal := "ra", "enforce", "stop", "strip", "stop"
	if p.RAMinus1 {
		lookup = "ra-1"
	}
	if p.IgnoreTopmost {
		topmost = "ignore"
	}
	if p.Gap == GapFP {
		gap = "fp"
	}
	if p.KeepPAC {
		pac = "keep"
	}
	if p.SignalFrames {
		signal = "frame"
	}
	return fmt.Sprintf("lookup=%s,topmost=%s,depth=%d,gap=%s,pac=%s,signal=%s", lookup, topmost, p.MaxDepth, gap, pac, signal)
}
