// False sharing, the teaching pair's second half: falseshare.c with each
// thread's counter padded to a 64-byte cache line of its own, so the
// cores never take a line from each other.
#define PADDED
#include "falseshare.c"
