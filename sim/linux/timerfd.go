package linux

import (
	"math"
	"slices"
)

// timerfd: a timer on a wall clock whose expiries a descriptor counts
// (Linux's fs/timerfd.c). read returns the 8-byte count of expiries since
// the last read or timerfd_settime and resets it; with none it blocks the
// thread (EAGAIN with O_NONBLOCK); poll and select report POLLIN while
// the count is not zero. The count is brought up to date whenever it is
// looked at (ptimer.advance), so an armed timerfd costs the run loop
// nothing; a thread that waits for one (a blocking read, a poll) waits in
// waitIO and the scheduler wakes every such thread once at each expiry
// (wakeTimerFDs), to run its call again, jumping the idle clock to it as
// to any wall-timer expiry.

// timerfd flags (include/uapi/linux/timerfd.h): TFD_CLOEXEC and
// TFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK, the same on arm64 and s390x.
const (
	tfdCreateFlags  = oCloexec | oNonblock
	tfdTimerAbstime = 1
	tfdCancelOnSet  = 2
)

// timerFD is a timerfd's state.
type timerFD struct {
	t     ptimer // on the monotonic clock; notify sigevNone: nothing is signalled
	ticks uint64 // expiries since the last read or settime
	// expired is set when the count grew, until the threads waiting in
	// waitIO are woken for it.
	expired bool
	f       *openFile
}

// timerfdClock reports whether a timerfd may use clock id, and whether it
// is a real-time one: REALTIME, MONOTONIC, BOOTTIME and the two _ALARM
// clocks (timerfd_create's list); no CPU clock.
func timerfdClock(id uint64) (ok, realtime bool) {
	switch id {
	case clockRealtime, 8:
		return true, true
	case clockMonotonic, 7, 9:
		return true, false
	}
	return false, false
}

func sysTimerfdCreate(p *Process, a [6]uint64) uint64 {
	ok, realtime := timerfdClock(a[0])
	if a[1]&^tfdCreateFlags != 0 || !ok {
		return errno(EINVAL)
	}
	tf := &timerFD{t: ptimer{notify: sigevNone, realtime: realtime}}
	f := &openFile{kind: kindTimerFD, flags: oRdwr | a[1]&oNonblock, path: "anon_inode:[timerfd]", tfd: tf}
	tf.f = f
	fd := p.install(f, 0, a[1]&oCloexec != 0)
	if int64(fd) >= 0 {
		p.timer.fds = append(p.timer.fds, tf)
	}
	return fd
}

// timerfdOf is the timerfd behind descriptor fd: EBADF for no file,
// EINVAL for another kind of file, as Linux's timerfd_fget.
func (p *Process) timerfdOf(fd uint64) (*timerFD, uint64) {
	f, e := p.file(fd)
	if e != 0 {
		return nil, e
	}
	if f.kind != kindTimerFD {
		return nil, errno(EINVAL)
	}
	return f.tfd, 0
}

// timerfdUpdate counts the expiries up to now.
func (p *Process) timerfdUpdate(tf *timerFD) {
	if n := tf.t.advance(p.monoNow()); n != 0 {
		tf.ticks += n
		tf.expired = true
	}
}

// timerfdSpec is the itimerspec timerfd_gettime reports: the interval and
// the time to the next expiry (0 when disarmed).
func (p *Process) timerfdSpec(tf *timerFD) []byte {
	p.timerfdUpdate(tf)
	var left uint64
	if tf.t.armed {
		if now := p.monoNow(); tf.t.expiry > now {
			left = tf.t.expiry - now
		}
	}
	o := p.order()
	var b []byte
	for _, ns := range []uint64{tf.t.interval, left} {
		b = appendU64(o, appendU64(o, b, ns/1e9), ns%1e9)
	}
	return b
}

// sysTimerfdSettime arms (it_value not zero) or disarms the timer and
// clears the count, in Linux's order of checks: the new value is read
// (EFAULT), the flags (EINVAL) and the value's fields (EINVAL) checked,
// then the descriptor (EBADF, EINVAL); the old setting is written last.
// TFD_TIMER_CANCEL_ON_SET is accepted: the virtual real-time clock is
// never set, so nothing is cancelled.
func sysTimerfdSettime(p *Process, a [6]uint64) uint64 {
	b, ok := p.readGuest(a[2], 32)
	if !ok {
		return errno(EFAULT)
	}
	if a[1]&^(tfdTimerAbstime|tfdCancelOnSet) != 0 {
		return errno(EINVAL)
	}
	o := p.order()
	var v [2]uint64 // interval, value
	for i := range v {
		sec, nsec := int64(o.Uint64(b[16*i:])), int64(o.Uint64(b[16*i+8:]))
		if sec < 0 || nsec < 0 || nsec >= 1e9 {
			return errno(EINVAL)
		}
		v[i] = uint64(min(sec, math.MaxInt64/1_000_000_000-1))*1e9 + uint64(nsec)
	}
	tf, e := p.timerfdOf(a[0])
	if e != 0 {
		return e
	}
	old := p.timerfdSpec(tf)
	t := &tf.t
	t.armed, t.interval, tf.ticks = v[1] != 0, v[0], 0
	if t.armed {
		if a[1]&tfdTimerAbstime != 0 {
			t.expiry = p.wallDeadline(v[1], true, t.realtime)
		} else {
			t.expiry = p.deadline(v[1], false, false)
		}
	}
	if a[3] != 0 && !p.writeGuest(a[3], old) {
		return errno(EFAULT)
	}
	return 0
}

func sysTimerfdGettime(p *Process, a [6]uint64) uint64 {
	tf, e := p.timerfdOf(a[0])
	if e != 0 {
		return e
	}
	if !p.writeGuest(a[1], p.timerfdSpec(tf)) {
		return errno(EFAULT)
	}
	return 0
}

// timerfdRead is read on a timerfd: EINVAL for a buffer of fewer than 8
// bytes, else the count (then zero), EAGAIN without one under O_NONBLOCK,
// or a wait until the next expiry.
func (p *Process) timerfdRead(f *openFile, buf []byte) (int, uint64) {
	if len(buf) < 8 {
		return 0, errno(EINVAL)
	}
	tf := f.tfd
	p.timerfdUpdate(tf)
	if tf.ticks == 0 {
		if f.flags&oNonblock != 0 {
			return 0, errno(EAGAIN)
		}
		if !tf.t.armed {
			return 0, p.wouldBlock("read from a timerfd that is not armed")
		}
		return 0, p.wouldBlock("read from a timerfd before its expiry")
	}
	p.order().PutUint64(buf, tf.ticks)
	tf.ticks = 0
	return 8, 0
}

// timerfdReady is a timerfd's poll events: POLLIN while expiries are
// counted.
func (p *Process) timerfdReady(f *openFile, ev uint64) uint64 {
	p.timerfdUpdate(f.tfd)
	if f.tfd.ticks != 0 {
		return (pollin | pollrdnorm) & ev
	}
	return 0
}

// liveTimerFDs drops the timerfds whose last descriptor is closed.
func (p *Process) liveTimerFDs() []*timerFD {
	ts := &p.timer
	ts.fds = slices.DeleteFunc(ts.fds, func(tf *timerFD) bool { return tf.f.refs <= 0 })
	return ts.fds
}

// timerfdNext is the earliest moment a timerfd wakes the waiting
// threads: now for one that expired since they were last woken, else the
// earliest armed expiry (ok false: none).
func (p *Process) timerfdNext() (next uint64, ok bool) {
	if len(p.timer.fds) == 0 {
		return 0, false
	}
	now := p.monoNow()
	for _, tf := range p.liveTimerFDs() {
		p.timerfdUpdate(tf)
		e := tf.t.expiry
		if tf.expired {
			e = now
		} else if !tf.t.armed {
			continue
		}
		if !ok || e < next {
			next, ok = e, true
		}
	}
	return next, ok
}

// wakeTimerFDs makes the threads waiting in waitIO run their calls again
// when a timerfd has expired since they were last woken.
func (p *Process) wakeTimerFDs() {
	if len(p.timer.fds) == 0 {
		return
	}
	woke := false
	for _, tf := range p.liveTimerFDs() {
		p.timerfdUpdate(tf)
		woke = woke || tf.expired
		tf.expired = false
	}
	if woke {
		for _, t := range p.threads {
			if t.state == threadIO {
				t.state = threadRunnable
			}
		}
		// A forked process may hold the same timerfd and wait for it:
		// its waiters run their calls again too, as the expired flag
		// just cleared was the one they would have seen.
		if p.sys.multi() {
			p.sys.wakeIO()
		}
	}
}
