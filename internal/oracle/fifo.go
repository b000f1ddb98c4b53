package oracle

import (
	"io"
	"os"
	"time"
)

// logReader drains the log FIFO in a goroutine of its own into a bounded
// queue of chunks, which the parser reads through the io.Reader interface.
//
// Why a goroutine: qemu's host signal handlers do not restart system calls.
// If qemu is blocked writing to a full FIFO when a host signal arrives (an
// asynchronous guest signal: a timer, SIGCHLD, ...), the write fails with
// EINTR and stdio silently drops that piece of the log.  Draining the pipe
// independently of the speed of the caller's callback keeps it from filling
// up in all but extreme cases; the parser reports the remaining cases as
// lost log data (see parser.lostErr).
//
// Why naps: qemu writes the log with two write(2)s per instruction.  A
// reader that is faster than qemu would wake up for every one of them and
// burn about as much CPU time as qemu itself.  After a read that found the
// pipe mostly empty the goroutine sleeps for a time in which qemu cannot
// fill the pipe (it logs at most ~250 MB/s; the nap assumes 1 GB/s).
type logReader struct {
	f     *os.File
	full  chan []byte // chunks read, in order; closed at the end
	free  chan []byte // chunks the parser is done with
	done  chan struct{}
	err   error  // read error (not io.EOF), valid after full is closed
	cur   []byte // rest of the chunk being consumed
	last  []byte // the chunk cur belongs to, to recycle
	small int    // reads shorter than this are followed by a nap
	nap   time.Duration
}

const (
	chunkSize = 1 << 20
	maxChunks = 48 // at most 48 MiB queued, ~0.2 s of qemu output
)

func startLogReader(f *os.File, pipeSize int) *logReader {
	r := &logReader{
		f:     f,
		full:  make(chan []byte, maxChunks),
		free:  make(chan []byte, maxChunks),
		done:  make(chan struct{}),
		small: pipeSize / 4,
		nap:   time.Duration(pipeSize) * time.Nanosecond,
	}
	go r.loop()
	return r
}

func (r *logReader) loop() {
	defer close(r.full)
	allocated := 0
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		default:
			if allocated < maxChunks {
				allocated++
				buf = make([]byte, chunkSize)
			} else {
				select {
				case buf = <-r.free:
				case <-r.done:
					return
				}
			}
		}
		n, err := r.f.Read(buf[:cap(buf)])
		if n > 0 {
			select {
			case r.full <- buf[:n]:
			case <-r.done:
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			return
		}
		if n < r.small {
			time.Sleep(r.nap)
		}
	}
}

// Read implements io.Reader for the parser.
func (r *logReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.last != nil {
			r.free <- r.last[:cap(r.last)] // cannot block: capacity maxChunks
			r.last = nil
		}
		c, ok := <-r.full
		if !ok {
			if r.err != nil {
				return 0, r.err
			}
			return 0, io.EOF
		}
		r.cur, r.last = c, c
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// stop ends the goroutine.  It does not wait: after an error the goroutine
// may still be blocked reading until the (killed) writer is gone.
func (r *logReader) stop() {
	close(r.done)
}
