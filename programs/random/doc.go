// Package random holds the differential test on random C programs
// (TestCsmith): csmith generates them, the cross compilers build them for
// aarch64 and s390x, and qemu-user is the oracle simrun is compared with.
package random
