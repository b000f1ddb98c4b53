package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHelpEverywhere: every way of asking for help, of every command and
// subcommand, prints that command's usage on stdout or stderr with
// status 0 (never a crash, never "unknown command", never a file named
// --help opened); simrun version answers.
func TestHelpEverywhere(t *testing.T) {
	commands := [][]string{{"run"}, {"record"}, {"sframe"}, {"report"}, {"unwind"}, {"spe"},
		{"unwind", "check"}, {"unwind", "policies"}, {"spe", "dump"}, {"spe", "explain"}}
	var cases [][]string
	for _, form := range []string{"--help", "-h", "-help"} {
		cases = append(cases, []string{form}, []string{"help", form}, []string{form, form})
		for _, c := range commands {
			cases = append(cases, append(append([]string{}, c...), form))
		}
	}
	cases = append(cases, []string{"help"}, []string{"help", "help"}, []string{"unwind", "help"}, []string{"spe", "help"})
	for _, c := range commands[:6] {
		cases = append(cases, append([]string{"help"}, c...))
	}
	for _, args := range cases {
		st, out, errOut := run(t, args...)
		all := out + errOut
		cmd := "simrun " + strings.Join(args, " ")
		assert.Equal(t, 0, st, "%s: %.300s", cmd, all)
		assert.NotEmpty(t, all, cmd)
		assert.False(t, strings.Contains(all, "unknown command") || strings.Contains(all, "no such file") ||
			strings.Contains(all, "goroutine"), "%s: %.300s", cmd, all)
	}
	for _, v := range []string{"version", "--version"} {
		st, out, _ := run(t, v)
		assert.Equal(t, 0, st)
		assert.Regexp(t, `^simrun \S+ .*go1\.\d+`, out)
	}
}

// TestUnwindPoliciesFit: the policy list fits an 80-column terminal and
// names every switch.
func TestUnwindPoliciesFit(t *testing.T) {
	st, out, _ := run(t, "unwind", "policies")
	assert.Equal(t, 0, st)
	for _, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len(l), 80, "%q", l)
	}
	for _, s := range []string{"lookup=ra (default)", "lookup=ra-1", "gap=fp", "pac=keep", "depth=N"} {
		assert.Contains(t, out, s+"\n")
	}
}
