/* files: the file syscalls a program makes, each result printed. It reads
 * the file named in argv[1] several ways (read, pread, lseek, mmap,
 * stdio), and builds, lists, renames and removes files under the
 * directory named in argv[2] (suffixed with the pid, so that two runs side
 * by side do not meet). Nothing it prints depends on the pid or the time. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long sum(const unsigned char *p, size_t n) {
	unsigned long h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + p[i];
	return h;
}

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: files INPUT DIR\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	printf("size %ld regular %d\n", (long)st.st_size, S_ISREG(st.st_mode));
	char *buf = malloc(st.st_size + 1);
	ssize_t n = read(fd, buf, st.st_size + 1);
	printf("read %zd sum %lu\n", n, sum((unsigned char *)buf, n));
	printf("lseek end %ld\n", (long)lseek(fd, 0, SEEK_END));
	char small[16];
	n = pread(fd, small, sizeof small, 10);
	printf("pread %zd sum %lu\n", n, sum((unsigned char *)small, n));
	void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("mmap sum %lu same %d\n", sum(m, st.st_size), memcmp(m, buf, st.st_size) == 0);
	munmap(m, st.st_size);
	printf("fcntl cloexec %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
	int d = dup(fd);
	printf("dup %d\n", d > fd);
	close(d);
	close(fd);
	printf("bad fd read %zd errno %d\n", read(99, buf, 1), errno);
	printf("missing open %d errno %d\n", open("/nonexistent/x", O_RDONLY), errno);

	char dir[4096];
	snprintf(dir, sizeof dir, "%s.%d", argv[2], (int)getpid());
	printf("mkdir %d\n", mkdir(dir, 0755));
	printf("mkdir again %d errno %d\n", mkdir(dir, 0755), errno);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	const char *names[] = {"b.txt", "a.txt", "c.txt"};
	for (int i = 0; i < 3; i++) {
		int f = openat(dfd, names[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct iovec iov[2] = {{(void *)names[i], 5}, {(void *)"\n", 1}};
		printf("writev %s %zd\n", names[i], writev(f, iov, 2));
		printf("pwrite %zd\n", pwrite(f, "XY", 2, 100));
		struct stat fs;
		fstat(f, &fs);
		printf("size after pwrite %ld\n", (long)fs.st_size);
		printf("ftruncate %d\n", ftruncate(f, 6));
		close(f);
	}
	printf("renameat %d\n", renameat(dfd, "c.txt", dfd, "d.txt"));
	printf("symlinkat %d\n", symlinkat("a.txt", dfd, "link"));
	char target[64] = {0};
	printf("readlinkat %zd %s\n", readlinkat(dfd, "link", target, sizeof target - 1), target);
	struct stat ls;
	printf("fstatat nofollow %d link %d\n", fstatat(dfd, "link", &ls, AT_SYMLINK_NOFOLLOW), S_ISLNK(ls.st_mode));
	printf("access %d %d\n", faccessat(dfd, "a.txt", R_OK, 0), faccessat(dfd, "zz", F_OK, 0));

	DIR *dp = fdopendir(dup(dfd));
	char *list[16];
	int cnt = 0;
	struct dirent *e;
	while ((e = readdir(dp)) && cnt < 16)
		if (e->d_name[0] != '.')
			list[cnt++] = strdup(e->d_name);
	closedir(dp);
	qsort(list, cnt, sizeof list[0], cmp);
	printf("entries %d:", cnt);
	for (int i = 0; i < cnt; i++)
		printf(" %s", list[i]);
	printf("\n");

	FILE *f = fopen(strcat(strcpy(target, ""), "x"), "r");
	printf("fopen relative missing %p\n", (void *)f);
	char path[4200];
	snprintf(path, sizeof path, "%s/a.txt", dir);
	f = fopen(path, "a+");
	fprintf(f, "appended %d\n", 42);
	fseek(f, 0, SEEK_SET);
	char line[64];
	while (fgets(line, sizeof line, f))
		printf("line %s", line);
	fclose(f);

	for (int i = 0; i < cnt; i++)
		printf("unlinkat %s %d\n", list[i], unlinkat(dfd, list[i], 0));
	close(dfd);
	printf("rmdir %d\n", rmdir(dir));

	int z = open("/dev/zero", O_RDONLY);
	char zb[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	printf("dev zero %zd sum %lu\n", read(z, zb, 8), sum((unsigned char *)zb, 8));
	close(z);
	int null = open("/dev/null", O_WRONLY);
	printf("dev null %zd\n", write(null, "abc", 3));
	close(null);
	char cwd[4096];
	printf("getcwd %d\n", getcwd(cwd, sizeof cwd) != NULL);
	return 0;
}
