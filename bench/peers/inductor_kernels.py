"""Builds TorchInductor's CPU kernels for lanejit bench's `inductor` peer.

For each case (a library operator at a shape, at a thread count) this
compiles the operator's PyTorch reference with torch.compile as shipped
(backend "inductor", static shapes, one graph, default configuration),
calls it, and records which of Inductor's native kernels the compiled call
runs, in order, with which buffers. The C++ peer (inductor_peer.cpp) then
loads the same shared objects and calls their `kernel` entry from its own
timer, without Python. Nothing here changes Inductor's configuration except
compile_threads = 1, which moves g++ into this process (so its command line
can be recorded) and changes no kernel.

    python inductor_kernels.py --out DIR --case rmsnorm:17:65:1[:bf16] [--case ...]

A case's optional fifth field is the element type of every input and the
output (f32, bf16 or f16): the reference then runs on tensors of that type,
as a model held in it does, and Inductor generates its kernels for it.
rmsnorm_q8 returns two outputs (q int8 [R, C], scale float32 [R, 1]) in any
type; its reference widens bf16 and f16 inputs to float32 itself.
rmsnorm_q8_0 likewise, per block of 32 columns (ggml's Q8_0): q int8
[R, C], scale float16 [R, C/32].

Writes, per case, DIR/<op>-<R>x<C>-t<N>/ (f32) or DIR/<op>-<type>-<R>x<C>-t<N>/: plan.json, kernel_<i>.so and
kernel_<i>.cpp (Inductor's files, copied), wrapper.py (the output code
module, whose call() the plan replays). A case Inductor cannot serve gets a
plan.json holding only "error". Exit code 0 unless the arguments are bad or
torch cannot be imported.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import traceback


def references(torch):
    """Each library operator's PyTorch reference, as a PyTorch user writes it."""
    F = torch.nn.functional

    def rope(x, cos, sin):
        h = x.shape[-1] // 2
        lo, hi = x[..., :h], x[..., h:]
        return torch.cat((lo * cos - hi * sin, lo * sin + hi * cos), dim=-1)

    def layernorm(x, g, b):
        return F.layer_norm(x, (x.shape[-1],), g, b, 1e-5)

    def swiglu(x, u):
        return F.silu(x) * u

    def rmsnorm(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * g

    def gelu_residual(x, u):
        return F.gelu(x, approximate="tanh") + u

    def rmsnorm_q8(x, g):
        # lanejit's rmsnorm_q8: RMSNorm in f32 (bf16 or f16 inputs widened),
        # then per row scale = amax/127 and q = round(y * (127/amax)) (half
        # to even), clamped to +-127, 0 for a zero row, as int8.
        y = rmsnorm(x.float(), g.float())
        amax = y.abs().amax(-1, keepdim=True)
        inv = torch.where(amax == 0, 0.0, 127 / amax)
        return (y * inv).round().clamp(-127, 127).to(torch.int8), amax / 127

    def rmsnorm_q8_0(x, g):
        # lanejit's rmsnorm_q8_0: the same per block of 32 columns, the
        # scale amax/127 computed in float32 and stored as float16, q from
        # the float32 amax (as ggml's x86 quantize_row_q8_0).
        y = rmsnorm(x.float(), g.float())
        r, c = y.shape
        blocks = y.view(r, c // 32, 32)
        amax = blocks.abs().amax(-1, keepdim=True)
        inv = torch.where(amax == 0, 0.0, 127 / amax)
        q = (blocks * inv).round().clamp(-127, 127).to(torch.int8).view(r, c)
        return q, (amax / 127).view(r, c // 32).to(torch.float16)

    def masked_softmax(x):
        # lanejit's masked_softmax: column c of row r is masked when c > r mod C.
        r, c = x.shape
        mask = torch.arange(c)[None, :] > (torch.arange(r) % c)[:, None]
        return torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)

    return {"rope": rope, "layernorm": layernorm, "swiglu": swiglu, "rmsnorm": rmsnorm,
            "gelu_residual": gelu_residual, "masked_softmax": masked_softmax,
            "rmsnorm_q8": rmsnorm_q8, "rmsnorm_q8_0": rmsnorm_q8_0}


def input_shapes(op, rows, cols):
    if op == "rope":
        return [(rows, cols), (rows, cols // 2), (rows, cols // 2)]
    if op == "layernorm":
        return [(rows, cols), (cols,), (cols,)]
    if op in ("rmsnorm", "rmsnorm_q8", "rmsnorm_q8_0"):
        return [(rows, cols), (cols,)]
    if op in ("swiglu", "gelu_residual"):
        return [(rows, cols), (rows, cols)]
    if op == "masked_softmax":
        return [(rows, cols)]
    raise ValueError(f"unknown op {op!r}")


def output_shapes(op, rows, cols):
    """The outputs the C++ peer hands over, in the program's order."""
    if op == "rmsnorm_q8":
        return [(rows, cols), (rows, 1)]  # q (int8), scale (float32)
    if op == "rmsnorm_q8_0":
        return [(rows, cols), (rows, cols // 32)]  # q (int8), scale (float16)
    return [(rows, cols)]


class Recorder:
    """Stands in for the output code module's kernel globals while the
    compiled function runs once: records each call's kernel and arguments,
    then calls the real kernel."""

    def __init__(self, module, torch):
        self.module, self.torch = module, torch
        self.kernels = {}  # global name -> the builtin from Inductor's .so
        self.calls = []
        for name, value in list(vars(module).items()):
            owner = getattr(value, "__self__", None)
            path = getattr(owner, "__file__", "") or ""
            if callable(value) and path.endswith(".so"):
                self.kernels[name] = value
                setattr(module, name, self._wrap(name, value))

    def _wrap(self, name, kernel):
        def recorded(*args):
            self.calls.append((name, args))
            return kernel(*args)
        return recorded

    def restore(self):
        for name, kernel in self.kernels.items():
            setattr(self.module, name, kernel)


def describe_args(args, inputs, outputs, storages, torch):
    """Each kernel argument as the C++ peer binds it: an input, an output,
    a scratch buffer (one per storage, numbered across the whole call
    sequence in `storages`: base address -> (index, bytes)) or an integer;
    with a byte offset."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            base = a.untyped_storage().data_ptr()
            offset = a.data_ptr() - base
            found = [i for i, t in enumerate(inputs) if t.data_ptr() == base]
            written = [i for i, t in enumerate(outputs) if t.untyped_storage().data_ptr() == base]
            if found:
                out.append({"kind": "input", "index": found[0], "offset": offset})
            elif written:
                out.append({"kind": "output", "index": written[0], "offset": offset})
            else:
                if base not in storages:
                    storages[base] = (len(storages), a.untyped_storage().nbytes())
                out.append({"kind": "buffer", "index": storages[base][0], "offset": offset})
        elif isinstance(a, bool) or not isinstance(a, int):
            raise RuntimeError(f"a kernel argument of type {type(a).__name__} "
                               "(the peer passes pointers and integers only)")
        else:
            out.append({"kind": "int", "value": a})
    return out


def compiler_record(torch):
    """What Inductor compiles with here: its vector ISA choice, the compiler
    and the command line its cache key holds (cpp_builder's own)."""
    from torch._inductor import config, cpp_builder
    from torch._inductor.codecache import CppPythonBindingsCodeCache
    from torch._inductor.cpu_vec_isa import pick_vec_isa
    isa = pick_vec_isa()
    compiler = cpp_builder.get_cpp_compiler()
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        version = "unknown"
    options = cpp_builder.CppTorchDeviceOptions(
        vec_isa=isa, device_type="cpu", **CppPythonBindingsCodeCache.cpp_compile_command_flags)
    command = cpp_builder.CppBuilder(name="o", sources="i", BuildOption=options).get_command_line()
    return {
        "torch": torch.__version__,
        "vec_isa": str(isa) if isa else "none",
        "vec_isa_flags": " ".join(isa.build_arch_flags().split()) if isa else "",
        "simd_bits": isa.bit_width() if isa else 0,
        "compiler": compiler,
        "compiler_version": version,
        "command": command,
        # The floating-point flags in the command, in order (later wins): with
        # the defaults, fast math is off and contraction too.
        "math_flags": " ".join(f for f in command.split()
                               if any(k in f for k in ("math", "fp-contract", "trapping",
                                                       "signed-zeros", "excess-precision"))),
        "unsafe_math_opt_flag": bool(getattr(config.cpp, "enable_unsafe_math_opt_flag", False)),
        "floating_point_contract_flag": str(
            getattr(config.cpp, "enable_floating_point_contract_flag", "")),
        "simdlen": config.cpp.simdlen,
        "cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR", "Inductor's default"),
    }


DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def build_case(torch, fn, op, rows, cols, threads, dtype, out_dir, built_commands):
    torch.set_num_threads(threads)
    torch._dynamo.reset()
    from torch._inductor.codecache import PyCodeCache
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(s, generator=gen) for s in input_shapes(op, rows, cols)]
    if op in ("layernorm", "rmsnorm", "rmsnorm_q8", "rmsnorm_q8_0"):
        inputs[1] = inputs[1].abs() + 0.5
    element = getattr(torch, DTYPES[dtype])
    inputs = [t.to(element) for t in inputs]
    known = {id(m) for m in PyCodeCache.modules}
    first_built = len(built_commands)
    compiled = torch.compile(fn, backend="inductor", dynamic=False, fullgraph=True)
    with torch.no_grad():
        want = compiled(*inputs)
    modules = [m for m in PyCodeCache.modules if id(m) not in known]
    if len(modules) != 1:
        raise RuntimeError(f"expected one output code module, found {len(modules)}")
    module = modules[0]
    recorder = Recorder(module, torch)
    try:
        with torch.no_grad():
            outputs = compiled(*inputs)
    finally:
        recorder.restore()
    if not recorder.calls:
        raise RuntimeError("the compiled call ran no native kernel")
    # Several outputs come back as a tuple, one as a tensor.
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    want = list(want) if isinstance(want, tuple) else [want]
    shapes = output_shapes(op, rows, cols)
    if len(outputs) != len(shapes):
        raise RuntimeError(f"{len(outputs)} outputs, the case has {len(shapes)}")
    for output, shape in zip(outputs, shapes):
        # The peer hands over each output's own dense buffer.
        dense = output.is_contiguous() and not output.storage_offset() and \
            output.untyped_storage().nbytes() == output.numel() * output.element_size()
        if tuple(output.shape) != shape or not dense:
            raise RuntimeError(f"an output is not a dense {list(shape)} tensor of its own")
    if len({o.untyped_storage().data_ptr() for o in outputs}) != len(outputs):
        raise RuntimeError("two outputs share a buffer")
    if not all(torch.equal(o, w) for o, w in zip(outputs, want)):
        raise RuntimeError("two calls of the compiled function disagree")

    names = list(dict.fromkeys(name for name, _ in recorder.calls))
    kernels, calls = [], []
    for name in names:
        so = recorder.kernels[name].__self__.__file__
        i = len(kernels)
        shutil.copyfile(so, os.path.join(out_dir, f"kernel_{i}.so"))
        source = so[: -len(".so")] + ".cpp"
        if os.path.exists(source):
            shutil.copyfile(source, os.path.join(out_dir, f"kernel_{i}.cpp"))
        kernels.append({"name": name, "file": f"kernel_{i}.so",
                        "source": f"kernel_{i}.cpp" if os.path.exists(source) else "",
                        "symbol": "kernel", "origin": so,
                        "built_with": built_commands.get(so, "")})
    storages = {}
    for name, args in recorder.calls:
        calls.append({"kernel": names.index(name),
                      "args": describe_args(args, inputs, outputs, storages, torch)})
    buffers = [nbytes for _, nbytes in sorted(storages.values())]

    # The replay the C++ peer will do, here with Inductor's own kernels:
    # fresh buffers, the recorded sequence, nothing else. It must give the
    # compiled call's bits, or the plan misses part of the graph.
    # NaN in float outputs, -128 (which no quantized value is) in int8 ones.
    replay_out = [torch.full(o.shape, -128 if o.dtype == torch.int8 else float("nan"),
                             dtype=o.dtype) for o in outputs]
    scratch = [torch.empty(n, dtype=torch.uint8) for n in buffers]

    def bind(arg):
        if arg["kind"] == "int":
            return arg["value"]
        base = {"input": lambda: inputs[arg["index"]],
                "output": lambda: replay_out[arg["index"]],
                "buffer": lambda: scratch[arg["index"]]}[arg["kind"]]()
        # The kernels take pointers: the bytes from the offset on, of any
        # dtype (int8 outputs need not fill whole elements of the case's).
        return base.reshape(-1).view(torch.uint8)[arg["offset"]:]
    for call in calls:
        recorder.kernels[names[call["kernel"]]](*[bind(a) for a in call["args"]])
    if not all(torch.equal(o, w) for o, w in zip(replay_out, want)):
        raise RuntimeError("replaying the recorded kernels does not give the compiled "
                           "call's output (the graph runs more than native kernels)")

    shutil.copyfile(module.__file__, os.path.join(out_dir, "wrapper.py"))
    built_now = len(built_commands) > first_built
    return {"kernels": kernels, "buffers": [{"bytes": n} for n in buffers],
            "calls": calls, "threads": threads, "wrapper": "wrapper.py",
            "compiled_now": built_now}


def shared_libraries(torch):
    """What a process without Python must load, in this order, before an
    Inductor kernel's .so: libpython (its Python glue refers to CPython's
    data symbols; never initialised or called) and torch's libraries (its
    SLEEF vector math lives in libtorch_cpu)."""
    libs = []
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and soname:
        libs.append(os.path.join(libdir, soname))
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    libs += [os.path.join(torch_lib, n) for n in ("libc10.so", "libtorch_cpu.so")]
    return libs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--case", action="append", default=[], help="OP:ROWS:COLS:THREADS[:TYPE]")
    a = p.parse_args()
    cases = []
    for spec in a.case:
        fields = spec.split(":")
        op, r, c, t = fields[:4]
        dtype = fields[4] if len(fields) > 4 else "f32"
        if dtype not in DTYPES:
            p.error(f"case {spec!r}: the type is one of {', '.join(DTYPES)}")
        cases.append((op, int(r), int(c), int(t), dtype))
    import torch
    from torch._inductor import config, cpp_builder
    # g++ in this process, so the command line of each kernel it builds
    # can be recorded; the kernels are the same.
    config.compile_threads = 1
    built_commands = {}
    build = cpp_builder.CppBuilder.build

    def recording_build(self):
        built_commands[self.get_target_file_path()] = self.get_command_line()
        return build(self)
    cpp_builder.CppBuilder.build = recording_build

    refs = references(torch)
    record = compiler_record(torch)
    libraries = shared_libraries(torch)
    for op, rows, cols, threads, dtype in cases:
        label = op if dtype == "f32" else f"{op}-{dtype}"
        case_dir = os.path.join(a.out, f"{label}-{rows}x{cols}-t{threads}")
        os.makedirs(case_dir, exist_ok=True)
        try:
            if op not in refs:
                raise RuntimeError(f"no PyTorch reference for op {op!r}")
            plan = build_case(torch, refs[op], op, rows, cols, threads, dtype, case_dir,
                              built_commands)
            plan.update({"op": op, "rows": rows, "cols": cols, "dtype": dtype,
                         "inductor": record, "libraries": libraries})
        except Exception as e:  # the peer reports it; other cases go on
            plan = {"op": op, "rows": rows, "cols": cols, "dtype": dtype,
                    "error": f"{type(e).__name__}: {e}".splitlines()[0],
                    "trace": traceback.format_exc()}
        tmp = os.path.join(case_dir, "plan.json.tmp")
        with open(tmp, "w") as f:
            json.dump(plan, f, indent=1)
        os.replace(tmp, os.path.join(case_dir, "plan.json"))
        print(f"{label} {rows}x{cols} t{threads}: "
              f"{plan.get('error') or str(len(plan['calls'])) + ' kernel call(s)'}",
              file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
