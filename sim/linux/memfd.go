package linux

import (
	"os"

	"golang.org/x/sys/unix"

	"simrun/sim/cpu"
)

// memfd_create flags (include/uapi/linux/memfd.h).
const (
	mfdCloexec       = 1
	mfdAllowSealing  = 2
	mfdNameMax       = 249 // NAME_MAX less the "memfd:" prefix
	memfdPathPrefix  = "/memfd:"
	memfdPathDeleted = " (deleted)"
)

// sysMemfdCreate makes an anonymous file, a host memfd, so that its
// size, mappings and seals (fcntl F_ADD_SEALS, F_GET_SEALS) behave as
// Linux's; /proc/self/fd names it "/memfd:NAME (deleted)" as Linux does.
// MFD_HUGETLB and the other flags give EINVAL (no huge pages here).
func sysMemfdCreate(p *Process, a [6]uint64) uint64 {
	name, err := p.Mem.ReadCString(a[0], mfdNameMax+1)
	if err != nil {
		if _, fault := err.(cpu.MemFault); fault {
			return errno(EFAULT)
		}
		return errno(EINVAL) // longer than the longest name
	}
	if a[1]&^uint64(mfdCloexec|mfdAllowSealing) != 0 {
		return errno(EINVAL)
	}
	hostFlags := unix.MFD_CLOEXEC // the host descriptor never leaks into a host child
	if a[1]&mfdAllowSealing != 0 {
		hostFlags |= unix.MFD_ALLOW_SEALING
	}
	fd, err := unix.MemfdCreate(name, hostFlags)
	if err != nil {
		return hostErrno(err)
	}
	hf := os.NewFile(uintptr(fd), memfdPathPrefix+name)
	nf := &openFile{kind: kindHost, host: hf, path: memfdPathPrefix + name + memfdPathDeleted, flags: oRdwr}
	r := p.install(nf, 0, a[1]&mfdCloexec != 0)
	if int64(r) < 0 {
		hf.Close()
	}
	return r
}
