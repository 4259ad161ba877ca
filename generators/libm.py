"""The one place generator kernels get ``sin``, ``cos`` and ``log`` from: the C library's scalar functions.

Chaotic trajectories (ChaosNetBench) amplify a one-ulp difference in ``sin`` to O(1) within a few dozen steps, and
T-GRAB's SBM draws skip ``floor(log(u) / log(1 - p))`` pairs, where one ulp of ``log`` can move an edge; so every
such call must be pinned. Three things could make them depend on the machine:

* **Vector math libraries.** Numba lowers ``math.sin`` to LLVM's ``llvm.sin`` intrinsic, which LLVM may replace by a
  SIMD variant (Intel SVML when numba finds it, with its own rounding). We call the C library through symbols LLVM
  does not know (``tgbhub_cnb_sin``, ``tgbhub_cnb_sincos``, registered with llvmlite at import), so every call is a
  plain scalar call whatever numba's configuration; the kernels are compiled without ``fastmath``, so LLVM neither
  reassociates nor contracts ``a * b + c`` into an FMA (a test inspects the machine code).
* **The C library itself.** glibc picks its ``sin``/``cos`` at load time by CPU feature: an FMA build on CPUs with
  FMA (every x86-64 server CPU since 2013), an SSE2 build otherwise. The two are not identical: on 20 million
  arguments in [-2pi, 2pi) they disagree in about 0.07 % of ``sin`` and ``cos`` values (one ulp each, neither build
  correctly rounded; measured on glibc 2.36). Other C libraries (musl, macOS, Windows) differ as well.
  ``log`` (Benettin's sum, and numpy's legacy Gaussian draws behind the SALI deviation vectors) has the same two
  builds; they disagree on about 0.006 % of arguments in [0.5, 3) (measured here, glibc 2.36).
* The published ChaosNetBench and T-GRAB data (and the SHA-256 test vectors the tests check) were made with glibc's
  FMA build.

:func:`check_libm` evaluates the platform's functions on probe arguments where those builds disagree and says which
one this machine has; the build source calls it before spending time on a build that could not verify.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from typing import cast

import llvmlite.binding as llvm_binding
import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from tgbhub.errors import GenerationError

_SIN_SYMBOL = "tgbhub_cnb_sin"
_SINCOS_SYMBOL = "tgbhub_cnb_sincos"
_LOG_SYMBOL = "tgbhub_cnb_log"


def _load_libm() -> ctypes.CDLL:
    name = ctypes.util.find_library("m")
    # find_library returns None where libm is part of the C library itself (macOS, musl): use the process' symbols.
    return ctypes.CDLL(name) if name else ctypes.CDLL(None)


_LIBM = _load_libm()
#: whether this C library has both functions (``sincos`` is a GNU extension; macOS, for one, lacks it)
AVAILABLE = all(hasattr(_LIBM, name) for name in ("sin", "sincos", "log"))
if AVAILABLE:
    # Registered by name, not embedded as an address: numba's on-disk cache stores the symbol name, which the JIT
    # linker resolves again in every process (addresses move with ASLR).
    llvm_binding.add_symbol(_SIN_SYMBOL, ctypes.cast(_LIBM.sin, ctypes.c_void_p).value)
    llvm_binding.add_symbol(_SINCOS_SYMBOL, ctypes.cast(_LIBM.sincos, ctypes.c_void_p).value)
    llvm_binding.add_symbol(_LOG_SYMBOL, ctypes.cast(_LIBM.log, ctypes.c_void_p).value)

# numba's ``intrinsic``, typed as compiled callers use its result: ``c_sin(x)`` (numba passes the typing context
# itself). numba's stubs type a call of an intrinsic as the pure-Python one, which takes the typing context and never
# returns, so a type checker would skip every line of a kernel after its first call. The same object: only its static
# type differs.
_scalar_intrinsic = cast("Callable[[Callable[..., object]], Callable[[float], float]]", intrinsic)
_pair_intrinsic = cast("Callable[[Callable[..., object]], Callable[[float], tuple[float, float]]]", intrinsic)


@_scalar_intrinsic
def c_sin(typingctx, x):  # noqa: ARG001 - numba's intrinsic signature
    """``sin(x)`` from the C library, as one scalar call (never vectorised or substituted)."""
    signature = types.float64(types.float64)

    def codegen(context, builder, sig, args):  # noqa: ARG001
        double = ir.DoubleType()
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double]), _SIN_SYMBOL)
        return builder.call(function, [args[0]])

    return signature, codegen


@_scalar_intrinsic
def c_log(typingctx, x):  # noqa: ARG001
    """``log(x)`` from the C library, as one scalar call (never LLVM's ``llvm.log``, which SVML may replace)."""
    signature = types.float64(types.float64)

    def codegen(context, builder, sig, args):  # noqa: ARG001
        double = ir.DoubleType()
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double]), _LOG_SYMBOL)
        return builder.call(function, [args[0]])

    return signature, codegen


@_pair_intrinsic
def c_sincos(typingctx, x):  # noqa: ARG001
    """``(sin(x), cos(x))`` from the C library's ``sincos`` (bitwise equal to its ``sin`` and ``cos``)."""
    signature = types.UniTuple(types.float64, 2)(types.float64)

    def codegen(context, builder, sig, args):
        double = ir.DoubleType()
        function_type = ir.FunctionType(ir.VoidType(), [double, double.as_pointer(), double.as_pointer()])
        function = cgutils.get_or_insert_function(builder.module, function_type, _SINCOS_SYMBOL)
        sin_out = cgutils.alloca_once(builder, double)
        cos_out = cgutils.alloca_once(builder, double)
        builder.call(function, [args[0], sin_out, cos_out])
        return context.make_tuple(builder, sig.return_type, [builder.load(sin_out), builder.load(cos_out)])

    return signature, codegen


@numba.njit(cache=True)
def _evaluate(arguments, out_sin, out_cos, out_log):  # pragma: no cover - compiled
    for i in range(arguments.shape[0]):
        out_sin[i] = c_sin(arguments[i])
        s, c = c_sincos(arguments[i])
        out_cos[i] = c
        if s != out_sin[i]:
            out_sin[i] = float("nan")  # sincos must agree with sin bit for bit; NaN makes the probe fail loudly
        out_log[i] = c_log(arguments[i]) if arguments[i] > 0.0 else 0.0


# Arguments where glibc's FMA and SSE2 builds of sin (resp. cos) disagree, with the FMA build's result: the one the
# published data were made with. (argument, sin) and (argument, cos) as exact hex floats.
SIN_PROBES = (("0x1.5dc847c3889d3p+2", "-0x1.75970820f75e8p-1"), ("-0x1.89f8284d75d8ap+2", "0x1.043d054a0fc29p-3"),
              ("-0x1.6706f76e6428dp+1", "-0x1.524bc4ededa50p-2"), ("-0x1.6556309d1ae04p+1", "-0x1.5f07f08576aa4p-2"),
              ("-0x1.5c68de648ee26p+2", "0x1.7d0340d668439p-1"), ("-0x1.6713d9516f5bep+1", "-0x1.51ea7d776bfc8p-2"))
COS_PROBES = (("0x1.3abea34e4ecf3p+2", "0x1.a1e6bbbd579abp-3"), ("-0x1.6cfb92401a9bep+2", "0x1.ac2d14080bef5p-1"),
              ("-0x1.feb3ccd42702fp-1", "0x1.15b9d009a4ce9p-1"), ("-0x1.43a862a91f4c3p-2", "0x1.e6a32da044465p-1"),
              ("0x1.6d2f4b56e3739p+0", "0x1.267d10dcc9fcap-3"), ("0x1.ea8797771ad3ep-1", "0x1.2673f58a0e79ap-1"))
LOG_PROBES = (("0x1.264c07cdce5a1p+0", "0x1.1d84097b17c4ap-3"), ("0x1.6607b3402a0dep+1", "0x1.075175e1c00d9p+0"),
              ("0x1.d5ed0f5a686afp-1", "-0x1.5f3ab79df9103p-4"), ("0x1.b14186d93c812p+0", "0x1.0d63b2525b10fp-1"),
              ("0x1.e78b84b86efbap-1", "-0x1.90eee79f638cap-5"), ("0x1.41bed971e44f4p+0", "0x1.d4238d029fe71p-3"))


def libm_mismatches() -> list[str]:
    """Probe values this machine's ``sin``/``cos``/``log`` compute differently from the reference (glibc, FMA build)."""
    import numpy as np

    if not AVAILABLE:
        return ["this C library lacks sin, sincos or log (sincos is a GNU extension)"]
    probes = ([("sin", a, v) for a, v in SIN_PROBES] + [("cos", a, v) for a, v in COS_PROBES]
              + [("log", a, v) for a, v in LOG_PROBES])
    arguments = np.array([float.fromhex(a) for _, a, _ in probes])
    out_sin, out_cos, out_log = np.empty_like(arguments), np.empty_like(arguments), np.empty_like(arguments)
    _evaluate(arguments, out_sin, out_cos, out_log)
    wrong = []
    for (function, argument, expected), s, c, g in zip(probes, out_sin, out_cos, out_log, strict=True):
        got = float({"sin": s, "cos": c, "log": g}[function])
        if got.hex() != float.fromhex(expected).hex():
            wrong.append(f"{function}({argument}) = {got.hex()}, reference {expected}")
    return wrong


def check_libm() -> None:
    """Refuse to build when this machine's ``sin``/``cos`` are not the ones the published data were made with.

    Raises:
        GenerationError: listing the probe values that differ; the data must then come from another source.
    """
    wrong = libm_mismatches()
    if wrong:
        raise GenerationError(
            f"this machine's C library computes sin/cos/log differently from the one the published data were made "
            f"with (glibc's FMA build on x86-64): {len(wrong)} of "
            f"{len(SIN_PROBES) + len(COS_PROBES) + len(LOG_PROBES)} "
            f"probe values differ ({wrong[0]}). A local rebuild would be chaotic-divergent data, not the published "
            "data, so none was made; fetch the dataset from the hub instead.")
