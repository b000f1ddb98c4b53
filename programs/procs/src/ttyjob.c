// The controlling terminal, job-control style, on the terminal named by
// argv[1] (a pty the test opened): acquiring it, tcgetpgrp/tcsetpgrp
// and their errors, SIGTTOU to a background group, another session,
// TIOCNOTTY and TIOCSCTTY. Prints what it sees, never a pid. With
// --stdin, only whether its standard input is its controlling terminal.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static volatile int ttou, hup;
static void on_ttou(int sig) { ttou++; }
static void on_hup(int sig) { hup++; }

static void res(const char *what, int r) {
	if (r < 0)
		printf("%s: %s\n", what, strerror(errno));
	else
		printf("%s: ok\n", what);
	fflush(stdout);
}

static int gsid(int fd) {
	pid_t sid;
	int r = ioctl(fd, TIOCGSID, &sid);
	return r < 0 ? r : (int)sid;
}

int main(int argc, char **argv) {
	if (argc < 2) return 2;
	if (strcmp(argv[1], "--stdin") == 0) { // simrun run --tty: stdin is the terminal
		printf("stdin: foreground is our group %d, session ours %d\n", tcgetpgrp(0) == getpgrp(), gsid(0) == getsid(0));
		return 0;
	}
	const char *pts = argv[1];
	res("tcgetpgrp on stdout", tcgetpgrp(1));
	res("open /dev/tty with no terminal", open("/dev/tty", O_RDWR));

	int nc = open(pts, O_RDWR | O_NOCTTY);
	printf("isatty: %d\n", isatty(nc));
	res("tcgetpgrp before it is ours", tcgetpgrp(nc));
	close(nc);

	int fd = open(pts, O_RDWR);
	printf("acquired: foreground is our group %d, session ours %d\n", tcgetpgrp(fd) == getpgrp(), gsid(fd) == getsid(0));
	int tty = open("/dev/tty", O_RDWR);
	printf("/dev/tty: foreground is our group %d\n", tcgetpgrp(tty) == getpgrp());
	close(tty);
	struct termios tio;
	res("tcgetattr", tcgetattr(fd, &tio));
	res("tcsetattr", tcsetattr(fd, TCSANOW, &tio));
	res("tcsetpgrp to no group", tcsetpgrp(fd, 999999));
	res("tcsetpgrp to -1", tcsetpgrp(fd, -1));

	// a job: its own group in the foreground
	int sync[2];
	pipe(sync);
	pid_t job = fork();
	if (job == 0) {
		char c;
		setpgid(0, 0);
		read(sync[0], &c, 1);
		_exit(0);
	}
	setpgid(job, job);
	res("tcsetpgrp to the job", tcsetpgrp(fd, job));
	printf("foreground is the job: %d\n", tcgetpgrp(fd) == job);
	fflush(stdout);

	// a background group whose parent is in another group of the
	// session: SIGTTOU, unless ignored
	pid_t bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		struct sigaction sa = {.sa_handler = on_ttou};
		sigaction(SIGTTOU, &sa, 0);
		res("background tcsetpgrp with a SIGTTOU handler", tcsetpgrp(fd, getpgrp()));
		printf("SIGTTOU taken: %d\n", ttou);
		signal(SIGTTOU, SIG_IGN);
		res("background tcsetpgrp ignoring SIGTTOU", tcsetpgrp(fd, getpgrp()));
		printf("foreground is this group: %d\n", tcgetpgrp(fd) == getpgrp());
		res("back to the job", tcsetpgrp(fd, job));
		fflush(stdout);
		_exit(0);
	}
	setpgid(bg, bg);
	waitpid(bg, 0, 0);
	printf("foreground is the job again: %d\n", tcgetpgrp(fd) == job);
	// our group is orphaned (the first process's parent is outside the
	// session): EIO, reported as ENOTTY, unless SIGTTOU is blocked
	res("orphaned background tcsetpgrp", tcsetpgrp(fd, getpgrp()));
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_BLOCK, &set, 0);
	res("orphaned background tcsetpgrp, SIGTTOU blocked", tcsetpgrp(fd, getpgrp()));
	sigprocmask(SIG_UNBLOCK, &set, 0);
	write(sync[1], "x", 1);
	waitpid(job, 0, 0);

	// another session
	int other[2], back[2];
	pipe(other);
	pipe(back);
	pid_t sess = fork();
	if (sess == 0) {
		char c;
		setsid();
		res("other session: tcgetpgrp", tcgetpgrp(fd));
		res("other session: TIOCGSID", gsid(fd));
		res("other session: tcsetpgrp", tcsetpgrp(fd, getpgrp()));
		res("other session: TIOCSCTTY", ioctl(fd, TIOCSCTTY, 0));
		close(open(pts, O_RDWR));
		res("other session: /dev/tty after opening it", open("/dev/tty", O_RDWR));
		write(back[1], "r", 1);
		read(other[0], &c, 1);
		_exit(0);
	}
	char c;
	read(back[0], &c, 1);
	res("tcsetpgrp to another session's group", tcsetpgrp(fd, sess));
	write(other[1], "x", 1);
	waitpid(sess, 0, 0);

	// give it up and take it again
	signal(SIGHUP, on_hup);
	res("TIOCNOTTY", ioctl(fd, TIOCNOTTY));
	printf("SIGHUP taken: %d\n", hup);
	res("tcgetpgrp after TIOCNOTTY", tcgetpgrp(fd));
	res("open /dev/tty after TIOCNOTTY", open("/dev/tty", O_RDWR));
	res("TIOCSCTTY", ioctl(fd, TIOCSCTTY, 0));
	printf("foreground is our group: %d\n", tcgetpgrp(fd) == getpgrp());
	return 0;
}
