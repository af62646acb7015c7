"""A software prefetch for the compiled kernels (``llvm.prefetch``).

The tree kernels chase pointers through arrays far larger than the caches: each step down a
tree waits for the next node's rows.  Prefetching the next node's rows while the current
node is processed overlaps those waits.  A prefetch never faults and does not change results.
"""

from __future__ import annotations

from llvmlite import binding as _llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# LLVM >= 15 has opaque pointers: the intrinsic is mangled on the pointer's address space only
_NAME = "llvm.prefetch.p0" if _llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


@intrinsic
def prefetch(typingctx, arr, t, j, offset):
    """Prefetch (for reading, into all cache levels) the cache line holding byte ``offset``
    of ``arr[t, j]``, a C-contiguous array of two or more dimensions (no bounds check)."""
    if not isinstance(arr, types.Array) or arr.ndim < 2:
        return None
    sig = types.void(arr, t, j, offset)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = [context.cast(builder, v, ty, types.intp)
               for v, ty in zip(args[1:3], signature.args[1:3])]
        idx += [context.get_constant(types.intp, 0)] * (aryty.ndim - 2)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        off = context.cast(builder, args[3], signature.args[3], types.intp)
        addr = builder.gep(builder.bitcast(ptr, i8p), [off])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _NAME)
        # (address, read, high temporal locality, data cache)
        builder.call(fn, [addr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
