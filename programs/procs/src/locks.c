// fcntl record locks between processes: a conflicting F_SETLK gives
// EAGAIN, F_GETLK names the holder, F_SETLKW waits until the holder lets
// go (here by closing another descriptor of the file, which drops all of
// its locks on it), a forked child does not inherit its parent's locks
// but does share an open file description's OFD locks.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int lk(int fd, int cmd, short type, off_t start, off_t len) {
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, cmd, &fl);
}

static const char *res(int r) { return r == 0 ? "ok" : strerror(errno); }

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	char path[] = "/tmp/simrun-locks-XXXXXX";
	int fd = mkstemp(path);
	int other = open(path, O_RDONLY);
	printf("parent: write lock 0-9: %s\n", res(lk(fd, F_SETLK, F_WRLCK, 0, 10)));
	printf("parent: again, its own: %s\n", res(lk(fd, F_SETLK, F_WRLCK, 0, 10)));
	int p2c[2];
	pipe(p2c);
	pid_t pid = fork();
	if (pid == 0) {
		int mine = open(path, O_RDWR);
		printf("child: write lock 5-14: %s\n", res(lk(mine, F_SETLK, F_WRLCK, 5, 10)));
		printf("child: read lock 5-14: %s\n", res(lk(mine, F_SETLK, F_RDLCK, 5, 10)));
		struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 3, .l_len = 1};
		fcntl(mine, F_GETLK, &q);
		printf("child: F_GETLK: type %s start %ld len %ld held by the parent %d\n", q.l_type == F_WRLCK ? "write" : "other",
		       (long)q.l_start, (long)q.l_len, q.l_pid == getppid());
		printf("child: read lock 10-19: %s\n", res(lk(mine, F_SETLK, F_RDLCK, 10, 10)));
		printf("child: the inherited descriptor holds nothing: %s\n", res(lk(fd, F_SETLK, F_WRLCK, 0, 1)));
		write(p2c[1], "x", 1);
		printf("child: waits for byte 0: %s\n", res(lk(mine, F_SETLKW, F_WRLCK, 0, 1)));
		_exit(0);
	}
	char c;
	read(p2c[0], &c, 1);
	struct timespec d = {0, 100000000};
	nanosleep(&d, 0);
	struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	fcntl(fd, F_GETLK, &q);
	printf("parent: F_GETLK whole file: the child's read lock at %ld, len %ld\n", (long)q.l_start, (long)q.l_len);
	printf("parent: closes another descriptor of the file\n");
	close(other);
	int st;
	waitpid(pid, &st, 0);
	printf("parent: child exited %d\n", WEXITSTATUS(st));

	// OFD locks: one per open file description, shared with the child.
	int ofd = open(path, O_RDWR);
	printf("parent: OFD write lock: %s\n", res(lk(ofd, F_OFD_SETLK, F_WRLCK, 0, 0)));
	pid = fork();
	if (pid == 0) {
		printf("child: OFD lock through the shared description: %s\n", res(lk(ofd, F_OFD_SETLK, F_WRLCK, 0, 0)));
		int mine = open(path, O_RDWR);
		printf("child: OFD lock through its own: %s\n", res(lk(mine, F_OFD_SETLK, F_RDLCK, 0, 0)));
		struct flock g = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
		fcntl(mine, F_OFD_GETLK, &g);
		printf("child: F_OFD_GETLK: pid %d\n", g.l_pid);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	unlink(path);
	return 0;
}
