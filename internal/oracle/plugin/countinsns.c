/*
 * countinsns.c: simrun's qemu TCG plugin for oracle.Count.
 *
 * Counts every guest instruction qemu-user executes in a normal (chained,
 * not single-stepped) run and, when the guest exits, writes one line
 * "# insns N" to the file named by the plugin argument out=FILE.
 *
 * sim/oracle embeds this file and builds it with the host gcc:
 *     gcc -O2 -shared -fPIC -o countinsns.so countinsns.c
 *     qemu-aarch64 -plugin ./countinsns.so,out=FILE PROGRAM
 *
 * Every instruction gets an inline "add 1 to the counter" when its
 * translation block is translated, so the count is exact even when a
 * block is left early (a fault, a signal). simrun's guests have one
 * thread, so one counter suffices.
 *
 * No qemu header is needed: the declarations below are the few functions
 * of qemu's plugin interface (version 1, as in qemu 7.2) used here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);

#define VISIBLE __attribute__((visibility("default")))

VISIBLE int qemu_plugin_version = 1;

static uint64_t executed;
static char out_file[4096];

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_insn_exec_inline(qemu_plugin_tb_get_insn(tb, i),
			QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
}

static void exiting(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_file, "w");

	(void)id;
	(void)userdata;
	if (f == NULL) {
		perror(out_file);
		return;
	}
	fprintf(f, "# insns %llu\n", (unsigned long long)executed);
	if (fclose(f) != 0)
		perror(out_file);
}

VISIBLE int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
	int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) != 0 || strlen(argv[i] + 4) >= sizeof out_file) {
			fprintf(stderr, "countinsns: unknown or too long argument %s (want out=FILE)\n", argv[i]);
			return -1;
		}
		strcpy(out_file, argv[i] + 4);
	}
	if (out_file[0] == '\0') {
		fprintf(stderr, "countinsns: no out=FILE argument\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, exiting, NULL);
	return 0;
}
