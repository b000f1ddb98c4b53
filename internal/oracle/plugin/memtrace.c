/*
 * memtrace.c: simrun's qemu TCG plugin for oracle.MemTrace.
 *
 * Writes the guest data accesses qemu-user performs, in order, as binary
 * records to the file named by the plugin argument out=FILE: the first N
 * of them with limit=N (every access is still counted).
 *
 * sim/oracle embeds this file and builds it with the host gcc:
 *     gcc -O2 -shared -fPIC -o memtrace.so memtrace.c
 *     qemu-aarch64 -plugin ./memtrace.so,out=FILE,limit=N PROGRAM
 *
 * File layout (every integer little-endian, whatever the host):
 *     header, 16 bytes: "simrunMT", u32 version (1), u32 record size (32)
 *     record, 32 bytes: u64 instruction index (from 0, counting every
 *         executed guest instruction as countinsns.c does), u64 its pc,
 *         u64 the access's virtual address, u8 log2 of its size in bytes,
 *         u8 flags (bit 0: a store), 6 zero bytes
 *     end record, 32 bytes, when the guest exits: index all ones, then
 *         the number of executed instructions, the number of accesses,
 *         u8 0, u8 flags 0x80, 6 zero bytes
 * qemu 7.2 runs no exit hook when the guest dies of a signal: the file
 * then has no end record.
 *
 * The instruction index is a counter that an inline "add 1" at the start
 * of every instruction advances, so during the instruction's memory
 * callbacks (which qemu calls after each access) it is the index plus 1.
 * The instruction's pc is the callback's user data, registered when its
 * block is translated.
 *
 * The file is opened on a descriptor above the guest's usual range
 * (qemu-user shares its descriptor table with the guest), so that the
 * guest's open() returns the numbers it would without the plugin.
 *
 * No qemu header is needed: the declarations below are the few functions
 * of qemu's plugin interface (version 1, as in qemu 7.2) used here.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_RW = 3 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
	void (*cb)(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata),
	enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
_Bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

_Static_assert(sizeof(void *) == 8, "the pc travels as a callback's user data pointer");

#define VISIBLE __attribute__((visibility("default")))

VISIBLE int qemu_plugin_version = 1;

enum { RECORD = 32, FLAG_STORE = 1, FLAG_END = 0x80, HIGH_FD = 900 };

static uint64_t executed; /* instructions started */
static uint64_t accesses; /* memory callbacks seen */
static uint64_t limit;    /* records to write */
static FILE *out;
static int failed;

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void emit(uint64_t index, uint64_t pc, uint64_t vaddr, unsigned shift, unsigned flags)
{
	unsigned char r[RECORD] = {0};

	put64(r, index);
	put64(r + 8, pc);
	put64(r + 16, vaddr);
	r[24] = (unsigned char)shift;
	r[25] = (unsigned char)flags;
	if (!failed && fwrite(r, sizeof r, 1, out) != 1) {
		perror("memtrace: write");
		failed = 1;
	}
}

/* accessed runs after each data access of an instrumented instruction;
 * udata is its pc (pointers are 64 bits wide on the hosts qemu-user
 * runs 64-bit guests on). */
static void accessed(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	(void)vcpu;
	if (accesses++ >= limit)
		return;
	emit(executed - 1, (uint64_t)(uintptr_t)udata, vaddr, qemu_plugin_mem_size_shift(info),
		qemu_plugin_mem_is_store(info) ? FLAG_STORE : 0);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		void *pc = (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn);

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
		qemu_plugin_register_vcpu_mem_cb(insn, accessed, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, pc);
	}
}

static void exiting(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	emit(UINT64_MAX, executed, accesses, 0, FLAG_END);
	if (fclose(out) != 0 && !failed)
		perror("memtrace: close");
}

/* open_high opens path for writing on a descriptor >= HIGH_FD. */
static FILE *open_high(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int high;

	if (fd < 0)
		return NULL;
	high = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	return fdopen(fd, "wb");
}

VISIBLE int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
	int argc, char **argv)
{
	const char *path = NULL;
	unsigned char head[16];

	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4] != '\0') {
			path = argv[i] + 4;
		} else if (strncmp(argv[i], "limit=", 6) == 0 && argv[i][6] >= '0' && argv[i][6] <= '9') {
			char *end;
			limit = strtoull(argv[i] + 6, &end, 10);
			if (*end != '\0') {
				fprintf(stderr, "memtrace: bad argument %s (want limit=N)\n", argv[i]);
				return -1;
			}
		} else {
			fprintf(stderr, "memtrace: unknown argument %s (want out=FILE, limit=N)\n", argv[i]);
			return -1;
		}
	}
	if (path == NULL) {
		fprintf(stderr, "memtrace: no out=FILE argument\n");
		return -1;
	}
	out = open_high(path);
	if (out == NULL) {
		perror(path);
		return -1;
	}
	memcpy(head, "simrunMT", 8);
	put32(head + 8, 1);
	put32(head + 12, RECORD);
	if (fwrite(head, sizeof head, 1, out) != 1) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, exiting, NULL);
	return 0;
}
