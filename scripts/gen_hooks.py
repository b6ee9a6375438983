#!/usr/bin/env python3
"""Generate encore's CUDA driver hooks from the installed CUDA headers.

Two sources, both read through the C preprocessor with
__CUDA_API_VERSION_INTERNAL defined (so every ABI version is declared):

  cuda.h (+ cudaProfiler.h)  the exported ABI names of libcuda and their
                             signatures: cuMemcpyHtoDAsync_v2,
                             cuLaunchKernel_ptsz, cuCtxSynchronize_v2, ...
  cudaTypedefs.h             every PFN_<name>_v<version>[_ptsz|_ptds]: the
                             variants cuGetProcAddress hands out.

Outputs (in --out):
  hooks_gen.c       one wrapper per exported name (exported, same name) and
                    one per PFN variant (static), the tables that map names,
                    versions and flags to wrappers, and a pool of generic
                    flush-everything trampolines for entry points the headers
                    do not know (x86-64).
  hooks_gen.h       entry ids (one per base name), counts.
  exports.map       linker version script: only the CUDA names and dlsym.
  entry_points.txt  every base name, for the policy table check.

Each wrapper is the same few lines: ENC_PRE (classify and flush through the
core), call the real function, ENC_POST (which may replace the result). Launch
entry points (recognised by their signature shape) hand the launch to the core
instead; those in OBJECT_ARG pass their first argument to the hooks too; the
calls that set a function's attribute (FUNC_SET) tell the core which function,
attribute and value.
"""
import argparse
import os
import re
import subprocess
import sys

# Entry points with hand-written wrappers (interpose/procaddr.c).
SPECIAL = {"cuGetProcAddress"}

# Entry points whose first argument the hooks need (the context or device a
# call destroys, the module or library it unloads: the core then drops only
# what belongs to it): their wrappers pass it to enc_hook_pre_obj/enc_hook_post_obj.
OBJECT_ARG = {"cuCtxDestroy", "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxRelease", "cuModuleUnload",
              "cuLibraryUnload"}

# Signature shapes of kernel launches the core can defer.
LAUNCH_SHAPES = {
    # cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
    ("CUfunction", "unsigned int", "unsigned int", "unsigned int", "unsigned int",
     "unsigned int", "unsigned int", "unsigned int", "CUstream", "void **", "void **"): "ENC_LAUNCH_LK",
    # cuLaunchKernelEx(config, f, params, extra)
    ("const CUlaunchConfig *", "CUfunction", "void **", "void **"): "ENC_LAUNCH_EX",
}

# Calls that set a function's attribute or cache configuration: the core sees
# which function, which attribute and value (enc_func_set: handle, kernel,
# cache, attrib, value, dev), by parameter index, for the signature given.
# Another signature gets the ordinary wrapper (which treats the call as
# changing an unknown function).
FUNC_SET = {
    "cuFuncSetAttribute": (("CUfunction", "CUfunction_attribute", "int"), "{(void *)a0, 0, 0, (int)a1, a2, 0}"),
    "cuKernelSetAttribute": (("CUfunction_attribute", "int", "CUkernel", "CUdevice"),
                             "{(void *)a2, 1, 0, (int)a0, a1, a3}"),
    "cuFuncSetCacheConfig": (("CUfunction", "CUfunc_cache"), "{(void *)a0, 0, 1, 0, (int)a1, 0}"),
    "cuKernelSetCacheConfig": (("CUkernel", "CUfunc_cache", "CUdevice"), "{(void *)a0, 1, 1, 0, (int)a1, a2}"),
}


# Stream operations the core may hold as graph nodes (core/graphs/nodes.c): the
# enc_op each describes (kind, flags, ev, dst, src, n, value), by parameter
# index, and its stream parameter, for the signature given. Another signature
# gets the ordinary wrapper (a flush of its stream).
OPS = {
    "cuEventRecord": (("CUevent", "CUstream"), "{ENC_OP_RECORD, 0, a0, 0, 0, 0, 0, 0}"),
    "cuEventRecordWithFlags": (("CUevent", "CUstream", "unsigned int"), "{ENC_OP_RECORD, a2, a0, 0, 0, 0, 0, 0}"),
    "cuStreamWaitEvent": (("CUstream", "CUevent", "unsigned int"), "{ENC_OP_WAIT, a2, a1, 0, 0, 0, 0, 0}"),
    "cuMemcpyAsync": (("CUdeviceptr", "CUdeviceptr", "size_t", "CUstream"), "{ENC_OP_COPY, 0, 0, a0, a1, a2, 0, 0}"),
    "cuMemcpyDtoDAsync": (("CUdeviceptr", "CUdeviceptr", "size_t", "CUstream"),
                          "{ENC_OP_COPY, 0, 0, a0, a1, a2, 0, 0}"),
    "cuMemcpyHtoDAsync": (("CUdeviceptr", "const void *", "size_t", "CUstream"),
                          "{ENC_OP_COPY, 0, 0, a0, (CUdeviceptr)(uintptr_t)a1, a2, 0, 0}"),
    "cuMemcpyDtoHAsync": (("void *", "CUdeviceptr", "size_t", "CUstream"),
                          "{ENC_OP_COPY, 0, 0, (CUdeviceptr)(uintptr_t)a0, a1, a2, 0, 0}"),
    "cuMemsetD8Async": (("CUdeviceptr", "unsigned char", "size_t", "CUstream"), "{ENC_OP_SET, 1, 0, a0, 0, a2, a1, 0}"),
    "cuMemsetD16Async": (("CUdeviceptr", "unsigned short", "size_t", "CUstream"),
                         "{ENC_OP_SET, 2, 0, a0, 0, a2, a1, 0}"),
    "cuMemsetD32Async": (("CUdeviceptr", "unsigned int", "size_t", "CUstream"), "{ENC_OP_SET, 4, 0, a0, 0, a2, a1, 0}"),
}

# What encore learns from a successful call (core/graphs/evtab.c): events and their
# flags, device allocations and page-locked host ranges. A statement run
# after the real call, for the signature given.
NOTES = {
    "cuEventCreate": (("CUevent *", "unsigned int"), "if (r_ == CUDA_SUCCESS && a0) enc_core_event_created(*a0, a1);"),
    "cuEventDestroy": (("CUevent",), "if (r_ == CUDA_SUCCESS) enc_core_event_destroyed(a0);"),
    "cuMemAlloc": (("CUdeviceptr *", "size_t"),
                   "if (r_ == CUDA_SUCCESS && a0) enc_core_mem_added((uintptr_t)*a0, a1, ENC_MEM_DEVICE);"),
    "cuMemAllocPitch": (("CUdeviceptr *", "size_t *", "size_t", "size_t", "unsigned int"),
                        "if (r_ == CUDA_SUCCESS && a0 && a1) enc_core_mem_added((uintptr_t)*a0, *a1 * a3, "
                        "ENC_MEM_DEVICE);"),
    "cuMemFree": (("CUdeviceptr",), "if (r_ == CUDA_SUCCESS) enc_core_mem_removed((uintptr_t)a0);"),
    "cuMemAllocHost": (("void **", "size_t"),
                       "if (r_ == CUDA_SUCCESS && a0) enc_core_mem_added((uintptr_t)*a0, a1, ENC_MEM_PINNED);"),
    "cuMemHostAlloc": (("void **", "size_t", "unsigned int"),
                       "if (r_ == CUDA_SUCCESS && a0) enc_core_mem_added((uintptr_t)*a0, a1, ENC_MEM_PINNED);"),
    "cuMemFreeHost": (("void *",), "if (r_ == CUDA_SUCCESS) enc_core_mem_removed((uintptr_t)a0);"),
    "cuMemHostRegister": (("void *", "size_t", "unsigned int"),
                          "if (r_ == CUDA_SUCCESS) enc_core_mem_added((uintptr_t)a0, a1, ENC_MEM_PINNED);"),
    "cuMemHostUnregister": (("void *",), "if (r_ == CUDA_SUCCESS) enc_core_mem_removed((uintptr_t)a0);"),
    "cuMemAllocAsync": (("CUdeviceptr *", "size_t", "CUstream"),
                        "if (r_ == CUDA_SUCCESS && a0) enc_core_mem_added((uintptr_t)*a0, a1, ENC_MEM_DEVICE);"),
    "cuMemAllocFromPoolAsync": (("CUdeviceptr *", "size_t", "CUmemoryPool", "CUstream"),
                                "if (r_ == CUDA_SUCCESS && a0) enc_core_mem_added((uintptr_t)*a0, a1, ENC_MEM_DEVICE);"),
    "cuMemFreeAsync": (("CUdeviceptr", "CUstream"), "if (r_ == CUDA_SUCCESS) enc_core_mem_removed((uintptr_t)a0);"),
}

# Calls that allocate device memory: one that fails for lack of it while
# encore holds graphs is made again, once, after encore frees its graphs
# (enc_core_out_of_memory, core/path/reclaim.c), so that encore's graphs never
# cost the program an allocation.
OOM_RETRY = {"cuMemAlloc", "cuMemAllocPitch", "cuMemAllocManaged", "cuMemCreate", "cuMemAllocAsync",
             "cuMemAllocFromPoolAsync", "cuArrayCreate", "cuArray3DCreate", "cuMipmappedArrayCreate"}


# What encore must do before a call reaches the driver, for the signature
# given (after the pre-hook, only when the hook owns the call).
PRE_NOTES = {
    # graphs naming the event stop naming it while it is alive (core/graphs/nodes.c enc_nodes_unname)
    "cuEventDestroy": (("CUevent",), "enc_core_event_destroying(a0);"),
}


def preprocess(cc, include, header):
    src = '#include <%s>\n' % header
    out = subprocess.run([cc, "-E", "-P", "-D__CUDA_API_VERSION_INTERNAL", "-I", include, "-x", "c", "-"],
                         input=src, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("gen_hooks: preprocessing %s failed:\n%s" % (header, out.stderr))
    return re.sub(r"\s+", " ", out.stdout)


def split_params(params):
    params = params.strip()
    if params in ("", "void"):
        return []
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def param_type(p):
    """Type of a parameter with its name removed ('const void *srcHost' -> 'const void *')."""
    if "(" in p or "[" in p:
        sys.exit("gen_hooks: unsupported parameter form: %r" % p)
    m = re.match(r"^(.*?)(\b[A-Za-z_]\w*)$", p)
    if not m:  # ends in '*': a type without a name
        return p.strip()
    head, last = m.group(1).strip(), m.group(2)
    # A lone type without a name ('CUcontext', 'unsigned int') has no trailing name.
    keywords = {"int", "char", "long", "short", "unsigned", "signed", "float", "double", "void", "size_t"}
    if head == "" or head in ("const", "struct", "enum", "const struct", "const enum") or last in keywords:
        return p.strip()
    return head


def norm_type(t):
    t = re.sub(r"\s*\*\s*", " *", t).replace(" *", "*").replace("*", " *")
    t = re.sub(r"\*\s+\*", "**", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = t.replace("* *", "**").replace("**", " **").replace("  ", " ")
    return re.sub(r"\s+", " ", t).strip()


def shape_of(types):
    norm = []
    for t in types:
        t = norm_type(t)
        t = t.replace("CUdeviceptr_v2", "CUdeviceptr")
        norm.append(t)
    return tuple(norm)


def stem(name):
    """Base name of an exported symbol: cuMemcpyHtoDAsync_v2_ptsz -> cuMemcpyHtoDAsync."""
    n = re.sub(r"_(ptsz|ptds)$", "", name)
    return re.sub(r"_v\d+$", "", n)


def per_thread(name):
    return 1 if re.search(r"_(ptsz|ptds)$", name) else 0


def stream_expr(types, args):
    """Expression for the stream argument, or ENC_NO_STREAM."""
    idx = [i for i, t in enumerate(types) if norm_type(t) == "CUstream"]
    if len(idx) == 1:
        return args[idx[0]]
    if len(idx) > 1:
        return "ENC_MANY_STREAMS"
    return "ENC_NO_STREAM"


class Fn:
    def __init__(self, name, params):
        self.name = name
        self.params = split_params(params)
        self.types = [param_type(p) for p in self.params]
        self.args = ["a%d" % i for i in range(len(self.params))]

    def decl_params(self):
        if not self.params:
            return "void"
        return ", ".join("%s %s" % (t, a) for t, a in zip(self.types, self.args))


def parse_exports(cc, include):
    text = preprocess(cc, include, "cuda.h")
    prof = os.path.join(include, "cudaProfiler.h")
    if os.path.exists(prof):
        text += " " + preprocess(cc, include, "cudaProfiler.h")
    out = {}
    for m in re.finditer(r"CUresult (cu\w+) ?\(([^;{}]*?)\) ?(?:__attribute__ ?\(\([^;]*?\)\))? ?;", text):
        out.setdefault(m.group(1), Fn(m.group(1), m.group(2)))
    return out


def parse_pfns(cc, include):
    text = preprocess(cc, include, "cudaTypedefs.h")
    out = {}
    for m in re.finditer(r"typedef CUresult ?\( ?\*PFN_(\w+)\) ?\(([^;]*?)\) ?;", text):
        full = m.group(1)
        mm = re.match(r"^(cu\w+?)_v(\d+)(_ptsz|_ptds)?$", full)
        if not mm:
            sys.exit("gen_hooks: unexpected PFN name %s" % full)
        fn = Fn(full, m.group(2))
        fn.base, fn.version, fn.pt = mm.group(1), int(mm.group(2)), 1 if mm.group(3) else 0
        out[full] = fn
    return out


def cuda_version(include):
    with open(os.path.join(include, "cuda.h")) as f:
        m = re.search(r"#define CUDA_VERSION (\d+)", f.read())
    return int(m.group(1)) if m else 0


def wrapper_body(fn, entry, real_expr, pfn_type, pt, base):
    launch = LAUNCH_SHAPES.get(shape_of(fn.types))
    args = ", ".join(fn.args)
    lines = []
    if launch:
        lines.append("    if (enc_hook_launch_passes()) return ((%s)%s)(%s); /* ENCORE=0 */" % (pfn_type, real_expr, args))
        rests = ("enc_hook_launch_rests_lk(%s)" % fn.args[8] if launch == "ENC_LAUNCH_LK"
                 else "enc_hook_launch_rests_ex(%s)" % fn.args[0])
        lines.append("    if (%s) return enc_hook_launch_result(((%s)%s)(%s)); /* resting stream */"
                     % (rests, pfn_type, real_expr, args))
        lines.append("    if (enc_is_launch(%s)) return enc_hook_launch_%s(%s, %d, %s, %s);"
                     % (entry, "lk" if launch == "ENC_LAUNCH_LK" else "ex", entry, pt,
                        "(void *)" + real_expr, args))
    s = stream_expr(fn.types, fn.args)
    op = OPS.get(base)
    if op and shape_of(fn.types) == shape_of(op[0]):
        lines.append("    enc_op op_ = %s;" % op[1])
        lines.append("    int own_ = enc_hook_pre_op(%s, %s, %d, &op_);" % (entry, s, pt))
        lines.append("    if (own_ == 2) return CUDA_SUCCESS; /* held */")
        lines.append("    CUresult r_ = ((%s)%s)(%s);" % (pfn_type, real_expr, args))
        lines.append("    if (own_) r_ = enc_hook_post_op(%s, %s, %d, r_, own_);" % (entry, s, pt))
        lines.append("    return r_;")
        return "\n".join(lines)
    # every other call naming an event: what holds a record of it (or a wait on it) goes first
    for t, a in zip(fn.types, fn.args):
        if norm_type(t) == "CUevent":
            lines.append("    enc_hook_event(%s);" % a)
    note = NOTES.get(base)
    note = note[1] if note and shape_of(fn.types) == shape_of(note[0]) else None
    func_set = FUNC_SET.get(base)
    pre, post, obj = "enc_hook_pre", "enc_hook_post", ""
    if base in OBJECT_ARG and fn.args:
        pre, post, obj = "enc_hook_pre_obj", "enc_hook_post_obj", ", (uintptr_t)%s" % fn.args[0]
    if func_set and shape_of(fn.types) == shape_of(func_set[0]):
        lines.append("    enc_func_set fs_ = %s;" % func_set[1])
        lines.append("    int own_ = enc_hook_pre_func_set(%s, &fs_);" % entry)
    else:
        lines.append("    int own_ = %s(%s, %s, %d%s);" % (pre, entry, s, pt, obj))
    pre_note = PRE_NOTES.get(base)
    if pre_note and shape_of(fn.types) == shape_of(pre_note[0]):
        lines.append("    if (own_) ENC_GUARDED { %s }" % pre_note[1])
    lines.append("    CUresult r_ = ((%s)%s)(%s);" % (pfn_type, real_expr, args))
    if base in OOM_RETRY:
        lines.append("    if (own_ && r_ == CUDA_ERROR_OUT_OF_MEMORY && enc_core_out_of_memory()) r_ = ((%s)%s)(%s);"
                     % (pfn_type, real_expr, args))
    if note:
        lines.append("    if (own_) ENC_GUARDED { %s }" % note)
    lines.append("    if (own_) r_ = %s(%s, %s, %d, r_%s);" % (post, entry, s, pt, obj))
    lines.append("    return r_;")
    return "\n".join(lines)


TRAMPOLINES = 256


def trampoline_asm():
    """x86-64 SysV: save argument registers, call enc_trampoline_enter, restore, tail-jump."""
    out = ['#if defined(__x86_64__)', '__asm__(', '    ".text\\n"']
    for i in range(TRAMPOLINES):
        out += [
            '    ".p2align 4\\n"',
            '    "enc_trampoline_%d:\\n"' % i,
            '    "movl $%d, %%r11d\\n"' % i,
            '    "jmp enc_trampoline_common\\n"',
        ]
    out += [
        '    ".p2align 4\\n"',
        '    "enc_trampoline_common:\\n"',
        '    "pushq %rbp\\n" "movq %rsp, %rbp\\n"',
        '    "subq $208, %rsp\\n"',
        '    "movq %rdi, 0(%rsp)\\n" "movq %rsi, 8(%rsp)\\n" "movq %rdx, 16(%rsp)\\n"',
        '    "movq %rcx, 24(%rsp)\\n" "movq %r8, 32(%rsp)\\n" "movq %r9, 40(%rsp)\\n"',
        '    "movq %rax, 48(%rsp)\\n" "movq %r11, 56(%rsp)\\n"',
        '    "movdqa %xmm0, 64(%rsp)\\n" "movdqa %xmm1, 80(%rsp)\\n" "movdqa %xmm2, 96(%rsp)\\n"',
        '    "movdqa %xmm3, 112(%rsp)\\n" "movdqa %xmm4, 128(%rsp)\\n" "movdqa %xmm5, 144(%rsp)\\n"',
        '    "movdqa %xmm6, 160(%rsp)\\n" "movdqa %xmm7, 176(%rsp)\\n"',
        '    "movl %r11d, %edi\\n"',
        '    "call enc_trampoline_enter\\n"',
        '    "movq %rax, %r11\\n"',
        '    "movq 0(%rsp), %rdi\\n" "movq 8(%rsp), %rsi\\n" "movq 16(%rsp), %rdx\\n"',
        '    "movq 24(%rsp), %rcx\\n" "movq 32(%rsp), %r8\\n" "movq 40(%rsp), %r9\\n"',
        '    "movq 48(%rsp), %rax\\n"',
        '    "movdqa 64(%rsp), %xmm0\\n" "movdqa 80(%rsp), %xmm1\\n" "movdqa 96(%rsp), %xmm2\\n"',
        '    "movdqa 112(%rsp), %xmm3\\n" "movdqa 128(%rsp), %xmm4\\n" "movdqa 144(%rsp), %xmm5\\n"',
        '    "movdqa 160(%rsp), %xmm6\\n" "movdqa 176(%rsp), %xmm7\\n"',
        '    "movq %rbp, %rsp\\n" "popq %rbp\\n"',
        '    "jmp *%r11\\n"',
        ');',
    ]
    decls = ["void enc_trampoline_%d(void);" % i for i in range(TRAMPOLINES)]
    out.append("\n".join(decls))
    out.append("void *const enc_trampolines[ENC_TRAMPOLINES] = {\n%s\n};" %
               ",\n".join("    (void *)enc_trampoline_%d" % i for i in range(TRAMPOLINES)))
    out.append("#else\nvoid *const enc_trampolines[ENC_TRAMPOLINES] = {0};\n#endif")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuda-include", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--out", required=True)
    opt = ap.parse_args()
    os.makedirs(opt.out, exist_ok=True)

    exports = parse_exports(opt.cc, opt.cuda_include)
    pfns = parse_pfns(opt.cc, opt.cuda_include)
    if len(exports) < 300 or len(pfns) < 300:
        sys.exit("gen_hooks: found only %d exports and %d PFN typedefs: are these CUDA 12+ headers?"
                 % (len(exports), len(pfns)))

    entries = sorted(set(stem(n) for n in exports) | set(f.base for f in pfns.values()))
    eid = {n: i for i, n in enumerate(entries)}

    c = []
    c.append("/* Generated by scripts/gen_hooks.py from %s. Do not edit. */" % opt.cuda_include)
    # cudaProfiler.h is optional (pip's CUDA runtime packages ship cuda.h without it): included only when found
    profiler = os.path.exists(os.path.join(opt.cuda_include, "cudaProfiler.h"))
    c.append('#include "base/guard.h"\n#include "interpose/hooks.h"\n#include "hooks_gen.h"\n%s'
             % ("#include <cudaProfiler.h>\n" if profiler else ""))
    c.append("const char *const enc_entry_names[ENC_ENTRY_COUNT] = {\n%s\n};"
             % ",\n".join('    "%s"' % n for n in entries))

    # Exported wrappers: real pointer resolved by name from the real libcuda.
    export_names = sorted(exports)
    c.append("void *enc_real_export[ENC_EXPORT_COUNT];")
    for i, name in enumerate(export_names):
        fn = exports[name]
        base = stem(name)
        if base in SPECIAL:
            continue
        real = "ENC_REAL_EXPORT(%d)" % i
        c.append("ENC_EXPORT CUresult %s(%s) {\n%s\n}"
                 % (name, fn.decl_params(),
                    wrapper_body(fn, "%d /* %s */" % (eid[base], base), real,
                                 "CUresult (*)(%s)" % ", ".join(fn.types or ["void"]), per_thread(name), base)))
    c.append("const enc_export_desc enc_exports[ENC_EXPORT_COUNT] = {")
    for name in export_names:
        w = ("(void *)enc_special_export_%s" % name) if stem(name) in SPECIAL else "(void *)%s" % name
        c.append('    {"%s", %s, %d, %d},' % (name, w, eid[stem(name)], per_thread(name)))
    c.append("};")

    # PFN variant wrappers: real pointer recorded by the cuGetProcAddress wrapper.
    variants = sorted(pfns.values(), key=lambda f: (f.base, f.pt, f.version))
    c.append("void *enc_real_variant[ENC_VARIANT_COUNT];")
    for i, fn in enumerate(variants):
        if fn.base in SPECIAL:
            continue
        c.append("static CUresult enc_w_%s(%s) {\n%s\n}"
                 % (fn.name, fn.decl_params(),
                    wrapper_body(fn, "%d /* %s */" % (eid[fn.base], fn.base), "enc_real_variant[%d]" % i,
                                 "PFN_" + fn.name, fn.pt, fn.base)))
    c.append("const enc_variant_desc enc_variants[ENC_VARIANT_COUNT] = {")
    for fn in variants:
        w = ("(void *)enc_special_%s" % fn.name) if fn.base in SPECIAL else "(void *)enc_w_%s" % fn.name
        c.append('    {"%s", "PFN_%s", %s, %d, %d, %d},' % (fn.base, fn.name, w, fn.version, fn.pt, eid[fn.base]))
    c.append("};")
    c.append(trampoline_asm())

    h = ["/* Generated by scripts/gen_hooks.py. Do not edit. */",
         "#ifndef ENCORE_HOOKS_GEN_H", "#define ENCORE_HOOKS_GEN_H", "#include <cuda.h>",
         "#define ENC_ENTRY_COUNT %d" % len(entries),
         "#define ENC_EXPORT_COUNT %d" % len(export_names),
         "#define ENC_VARIANT_COUNT %d" % len(variants),
         "#define ENC_TRAMPOLINES %d" % TRAMPOLINES,
         "#define ENC_HEADER_CUDA_VERSION %d" % cuda_version(opt.cuda_include)]
    for n in entries:
        h.append("#define ENC_E_%s %d" % (n, eid[n]))
    # the entry points whose wrappers take a launch's path when the policy classes them a launch
    shaped = sorted({eid[stem(name)] for name in export_names if stem(name) not in SPECIAL
                     and LAUNCH_SHAPES.get(shape_of(exports[name].types))} |
                    {eid[fn.base] for fn in variants if fn.base not in SPECIAL
                     and LAUNCH_SHAPES.get(shape_of(fn.types))})
    h.append("#define ENC_LAUNCH_SHAPED_ENTRIES {%s}" % ", ".join(str(i) for i in shaped))
    for fn in variants:
        if fn.base in SPECIAL:
            h.append("CUresult enc_special_%s(%s);" % (fn.name, fn.decl_params()))
    for name in export_names:
        if stem(name) in SPECIAL:
            h.append("CUresult enc_special_export_%s(%s);" % (name, exports[name].decl_params()))
    h.append("#endif")

    with open(os.path.join(opt.out, "hooks_gen.c"), "w") as f:
        f.write("\n".join(c) + "\n")
    with open(os.path.join(opt.out, "hooks_gen.h"), "w") as f:
        f.write("\n".join(h) + "\n")
    with open(os.path.join(opt.out, "exports.map"), "w") as f:
        f.write("{\n  global:\n    dlsym;\n%s\n  local: *;\n};\n"
                % "\n".join("    %s;" % n for n in export_names))
    with open(os.path.join(opt.out, "entry_points.txt"), "w") as f:
        f.write("\n".join(entries) + "\n")
    print("gen_hooks: %d entry points, %d exported wrappers, %d cuGetProcAddress variants"
          % (len(entries), len(export_names), len(variants)))


if __name__ == "__main__":
    main()
