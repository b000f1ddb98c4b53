// Package unwind is simrun's unwinding side: DWARF CFI and SFrame for
// the programs it runs.  The formats live in sub-packages:
//
//	sim/unwind/abi     per-architecture facts (DWARF SP/FP/RA, s390x CFA = SP+160, ...)
//	sim/unwind/cfi     .eh_frame / .debug_frame: CIEs, FDEs, instructions, row tables
//	sim/unwind/sframe  SFrame V1/V2/V3 decode, V2/V3 encode, objdump text,
//	                   pc lookup, and the gas translation CFI -> SFrame
//
// This package reads them out of ELF files (Object; relocations applied
// in relocatable objects the way objdump applies them) and answers what
// `simrun sframe` prints (ReadSFrame).
//
// # The stack tracer
//
// Tracer walks a stack with one method (SFrame, .eh_frame rows, or the
// frame chain: aarch64 x29 records, s390x back chain).  Each method turns
// what it knows about a pc into a Row (CFA, RA and FP rules); one step
// function applies a Row with the unwinding rules of the SFrame format
// specification as the Linux kernel's SFrame user unwinder applies them
// (the unwind_user SFrame patch series), relaxed or tightened by a Policy
// (ParsePolicy, PolicySwitches: ra or ra-1 lookup, topmost-only rules,
// depth, gaps, PAC stripping).  Walks never panic on hostile stacks or
// data: every walk ends with a Stop that says why, within the depth limit,
// and the stack pointer must move up at every outer frame, so cycles end.
//
// Shadow is the truth, a call stack kept from the calls and returns the
// simulator executes; Checker runs a program and compares every method
// with it at every instruction (`simrun unwind check`).
//
// For callchains of sampled operations: Tracer.Callchain(m, buf) unwinds
// the machine's current context (the instruction about to execute), and
// Shadow.StepRetired / Shadow.Callchain follow the retired operations
// (cpu.Batch).
//
// # Emitting SFrame from .eh_frame the way gas does
//
// gas translates its own list of CFI directives; simrun sees them only
// as they were written into .eh_frame.  The two agree on everything the
// gas cfi-sframe suite checks, with these consequences:
//
//   - The CIE's initial instructions are gas's first directives of every
//     function (gas moves a common prefix of them into the CIE), so they
//     are translated first, then the FDE's.
//   - .cfi_rel_offset and .cfi_adjust_cfa_offset arrive already resolved
//     (DW_CFA_offset, DW_CFA_def_cfa_offset), as gas resolves them before
//     translating.
//   - DW_CFA_expression, DW_CFA_def_cfa_expression, DW_CFA_GNU_args_size
//     and DW_CFA_val_expression can only come from .cfi_escape, so they get
//     gas's .cfi_escape handling and wording.  DW_CFA_val_offset could come
//     from either; it is worded as the directive (".cfi_val_offset with FP
//     reg 6"), where gas says ".cfi_escape DW_CFA_val_offset ..." for an
//     escape.  An escape holding several DWARF ops, which gas refuses as a
//     whole, arrives as separate ops and is judged op by op.
//   - gas keeps one remembered state; .eh_frame allows a stack, and the
//     translation keeps one (the same result unless states nest).
//     .cfi_remember_state takes the current row (the PR gas/33756
//     behaviour: allowed right after .cfi_startproc).  A restore without a
//     remember, where gas stops with an internal error, drops the
//     function with ".cfi_restore_state without .cfi_remember_state".
//   - gas's quirks are kept on purpose: .cfi_def_cfa_register takes the
//     CFA offset of the last row emitted, not the current one
//     (golden/extra/s390x-defcfaoffset-then-register-same-pc); s390x CFA
//     offsets are stored as (offset-160)/8 with C's truncating division
//     (164 reads back as 160); a trailing advance over an ignored
//     directive leaves a duplicate last row (cfi-sframe-common-6).
//   - Version 2 follows binutils 2.45: no flexible FDEs (a non-SP/FP CFA
//     drops the function), s390x FP/RA in registers as (reg<<1)|1 words,
//     no RA-undefined rows (.cfi_undefined RA drops the function, which is
//     why _start of every bundled program has no version 2 FDE) and no
//     signal-frame bit.
//
// An executable's section is laid out as ld links one: FDEs sorted and
// SFRAME_F_FDE_SORTED set, for the address given (0 by default).  A
// relocatable object's is laid out as gas writes it: input order, all
// sections at 0, and on s390x padded to 8 bytes as s390x gas pads it.
//
// # Where the binutils 2.46 golden files say more than the reference
//
//   - FLEX control words are sized as unsigned values when choosing an
//     FRE's data word size: s390x "RA in f0" (control word 0x81) is
//     written with 1-byte words (golden cfi-sframe-s390x-fpra-register-1);
//     a signed reading would need 2.  Offsets keep gas's signed rule
//     (1 byte only for -127..127).
//   - gas has always written FDE starts relative to the start field in
//     objects, also before SFRAME_F_FDE_FUNC_START_PCREL existed (V1 and
//     early V2); only linked sections were section-relative, as the
//     flag's absence claims.  So in relocatable objects such starts are
//     read as field-relative (Object.SFrame): Debian's gas 2.40 V1 objects
//     then show their real function offsets, where objdump 2.40 printed
//     pc = 0x0 for every function.
//   - objdump 2.46 refuses version 1 (libsframe no longer decodes it);
//     simrun decodes and prints it in the common layout, which is what
//     objdump 2.40 printed.
//   - ld keeps the FRE data of its PLT FDEs after the others while sorting
//     the FDEs (binutils-sframe-v2-dumps ET_EXEC fixtures), so a linked
//     section re-encodes to the same rows but not the same bytes.
package unwind
