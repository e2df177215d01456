#!/usr/bin/env python3
"""Writes the seed corpus of fuzz-runtime (fuzz/corpus/*.bin).

Input layout (see fuzz-runtime.c): byte 0 seeds the host-buffer pattern, then
16-byte records: op number, then 15 argument selector bytes. The selector
meanings below mirror the pick_* functions of fuzz-runtime.c; a seed that
drifts out of sync still works (every byte string is a valid input), it just
exercises something else.

    python3 fuzz/make-seeds.py            # rewrites fuzz/corpus/
"""
import os
import random
import sys

OPS = [
    "SET_DEVICE", "RESET_DEVICE", "RESET_DEVICE_FORCE", "CREATE_CONTEXT",
    "SET_CURRENT_CONTEXT", "DESTROY_CONTEXT", "GET_CURRENT_CONTEXT", "MALLOC", "FREE",
    "MALLOC_HOST", "FREE_HOST", "CREATE_STREAM", "DESTROY_STREAM", "DESTROY_STREAM_FORCE",
    "SYNC_STREAM", "SYNC_STREAM_TIMEOUT", "SYNC_DEVICE", "CREATE_EVENT", "RECORD_EVENT",
    "STREAM_WAIT_EVENT", "DESTROY_EVENT", "QUERY_EVENT", "SYNC_EVENT", "GET_SYMBOL_ADDRESS",
    "GET_SYMBOL_SIZE", "MEMCPY_TO_SYMBOL", "MEMCPY_FROM_SYMBOL", "MEMCPY_TO_SYMBOL_ASYNC",
    "MEMCPY_FROM_SYMBOL_ASYNC", "MEMCPY", "MEMCPY_ASYNC", "MEMSET", "MEMSET_ASYNC",
    "EVENT_ELAPSED", "LAUNCH_HOST_FUNC",
]
OP = {name: i for i, name in enumerate(OPS)}

# variables (index order of desc[] in the harness)
INT, FLOATS, REC, BYTES = 0, 1, 2, 3

# --- selectors ---------------------------------------------------------------
def dev(d):          # pick_dev
    return {0: 0, 1: 1, 2: 10, -1: 11, 32: 12, "INT_MAX": 13, "INT_MIN": 14}[d]

# pointers: (sel, idx, x); x picks the offset (x % 8: 0 start, 2 half, 3 last byte,
# 4 one past the end, 5 end + 64, 6 +4)
NULLP = (0, 0, 0)
def dalloc(i=0, off=0): return (1, i, off)            # live device allocation i
def dalloc_any(i=0, off=0): return (3, i, off)        # freed ones too, any offset
def inst(v, d=0, off=0): return (4, v + 4 * d, off)   # instance of variable v on device d
def pinned(i=0, off=0): return (6, i, off)
def pinned_any(i=0, off=0): return (7, i, off)
def hostbuf(off=0): return (8, 0, off)                # 5: last byte, 6: 64 before the end
def hostobj(v, off=0): return (10, v, off)
def garbage(i=0): return (11, i, 0)
def descriptor(v): return (12, v, 0)
def handle_ptr(i=0): return (13, i, 0)
def stale(i=0, off=0): return (14, i, off)

# streams / events / contexts: (sel, idx, x)
S_NULL = (0, 0, 0)
def s_live(i=0): return (3, i, 0)
def s_any(i=0): return (7, i, 0)
def s_other(i=0, x=0): return (8, i, x)               # event (x odd) or context handle
def s_forged(i=0, x=0): return (10, i, x)
E_NULL = (0, 0, 0)
def e_live(i=0): return (1, i, 0)
def e_any(i=0): return (5, i, 0)
def e_stream(i=0): return (6, i, 0)
def e_forged(i=0, x=0): return (8, i, x)
C_NULL = (0, 0, 0)
def c_live(i=0): return (1, i, 0)
def c_any(i=0): return (4, i, 0)
def c_default(d): return (5, d, 0)
def c_stream(i=0): return (6, i, 0)
def c_forged(i=0, x=0): return (8, i, x)

# symbols: (sel, idx)
SYM_NULL = (0, 0)
def sym(v): return (1 + v, 0)
def sym_plus1(v): return (5, v)
def sym_end(v): return (6, v)
def sym_desc(v): return (7, v)
def sym_inst(v, d=0): return (8, v + 4 * d)
SYM_HOSTBUF, SYM_ONE, SYM_FUNC, SYM_DALLOC = (9, 0), (10, 0), (11, 0), (12, 0)
def sym_minus1(v): return (13, v)
def sym_elem1(v): return (14, v)

# counts (sel, x): relative to a hint (variable size - offset, or the buffers' room)
def cnt(n):
    fixed = {0: 0, 1: 1, 2: 2, 4: 3, 7: 4, 8: 5, 63: 6, 64: 7, 65: 8, 256: 9, 1000: 10,
             4096: 18}
    if n in fixed:
        return (fixed[n], 0)
    if n == "hint": return (12, 0)
    if n == "hint-1": return (15, 0)
    if n == "hint+1": return (16, 0)
    if n == "SIZE_MAX": return (19, 0)
    if n == "2^63": return (21, 0)
    if isinstance(n, int) and 1 <= n <= 256: return (11, n - 1)
    raise ValueError(n)

def mx(m):           # destMax / dstMax / maxCount (sel, x)
    return {"count": (0, 0), "count-1": (3, 0), "count+1": (4, 0), "room": (5, 0),
            "SIZE_MAX": (7, 0), 0: (8, 0)}[m]

def off(o):          # symbol offset (sel, x)
    return {0: (0, 0), 1: (4, 0), 4: (5, 0), "half": (6, 0), "size": (7, 0),
            "size-1": (8, 0), "SIZE_MAX": (9, 0), "2^63": (10, 0)}[o]

def kind(k):
    return {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 13, -1: 14, 999: 15,
            "INT_MIN": 16, "INT_MAX": 17}[k]

def timeout(t):
    return {-1: 0, 1: 2, 100: 3, 0: 4, -2: 5, "INT_MIN": 6, 10000: 7}[t]

def malloc_size(n):
    table = [0, 1, 63, 64, 65, 100, 1000, 4096, 16 << 20, 65536, 1 << 20, 32 << 20, 64 << 20,
             (64 << 20) + 1, "SIZE_MAX", "SIZE_MAX-63"]
    return (table.index(n), 0)

def host_size(n):
    table = [0, 1, 64, 100, 4096, 4097, 65536, 1 << 20, "SIZE_MAX", 1 << 50, "SIZE_MAX-4095", 1000]
    return (table.index(n), 0)

def policy(p):
    table = [0, 1, 2, 3, 4, 5, 6, 7, 0x100, 0x1000, 0x101, 0x1002, 8, 0xff, 0xffffffff, 0x2000]
    return 2 * table.index(p)

# --- records -----------------------------------------------------------------
def rec(op, *args):
    flat = []
    for a in args:
        flat.extend(a if isinstance(a, tuple) else (a,))
    if len(flat) > 15:
        raise ValueError((op, flat))
    flat += [0] * (15 - len(flat))
    return bytes([OP[op]] + [b & 0xff for b in flat])

def set_device(d): return rec("SET_DEVICE", dev(d))
def reset_device(d): return rec("RESET_DEVICE", dev(d))
def reset_force(d): return rec("RESET_DEVICE_FORCE", dev(d))
def create_context(d, null=False): return rec("CREATE_CONTEXT", dev(d), 7 if null else 0)
def set_context(c): return rec("SET_CURRENT_CONTEXT", c)
def destroy_context(c): return rec("DESTROY_CONTEXT", c)
def get_context(null=False): return rec("GET_CURRENT_CONTEXT", 7 if null else 0)
def malloc(n, pol=0, null=False):
    return rec("MALLOC", 7 if null else 0, malloc_size(n), policy(pol))
def free(p): return rec("FREE", p)
def malloc_host(n, null=False): return rec("MALLOC_HOST", 7 if null else 0, host_size(n))
def free_host(p): return rec("FREE_HOST", p)
def create_stream(null=False, config=False, prio=0, flag=0):
    return rec("CREATE_STREAM", 7 if null else 0, 1 if config else 0, prio, flag)
def destroy_stream(s, force=False): return rec("DESTROY_STREAM_FORCE" if force else "DESTROY_STREAM", s)
def sync_stream(s): return rec("SYNC_STREAM", s)
def sync_stream_timeout(s, t): return rec("SYNC_STREAM_TIMEOUT", s, timeout(t))
def sync_device(): return rec("SYNC_DEVICE")
def create_event(null=False): return rec("CREATE_EVENT", 7 if null else 0)
def record_event(e, s): return rec("RECORD_EVENT", e, s)
def wait_event(e, s): return rec("STREAM_WAIT_EVENT", e, s)
def destroy_event(e): return rec("DESTROY_EVENT", e)
def query_event(e, null=False): return rec("QUERY_EVENT", e, 7 if null else 0)
def sync_event(e): return rec("SYNC_EVENT", e)
def elapsed(e1, e2, null=False): return rec("EVENT_ELAPSED", e1, e2, 7 if null else 0)
def host_func(s, null=False): return rec("LAUNCH_HOST_FUNC", s, 7 if null else 0)
def get_address(sy, null=False): return rec("GET_SYMBOL_ADDRESS", sy, 7 if null else 0)
def get_size(sy, null=False): return rec("GET_SYMBOL_SIZE", sy, 7 if null else 0)
def to_symbol(sy, src, n, o=0, k=1, s=None):
    op = "MEMCPY_TO_SYMBOL_ASYNC" if s is not None else "MEMCPY_TO_SYMBOL"
    return rec(op, sy, src, cnt(n), off(o), kind(k), s or S_NULL)
def from_symbol(dst, sy, n, o=0, k=2, s=None, m="count"):
    op = "MEMCPY_FROM_SYMBOL_ASYNC" if s is not None else "MEMCPY_FROM_SYMBOL"
    return rec(op, sy, dst, cnt(n), off(o), kind(k), s or S_NULL, mx(m))
def memcpy(dst, src, n, k, m="count", s=None):
    op = "MEMCPY_ASYNC" if s is not None else "MEMCPY"
    return rec(op, dst, src, cnt(n), mx(m), kind(k), s or S_NULL)
def memset(p, n, value=0x5a, m="count", s=None):
    op = "MEMSET_ASYNC" if s is not None else "MEMSET"
    return rec(op, p, cnt(n), mx(m), value, s or S_NULL)

# --- the seeds -----------------------------------------------------------------
def seeds():
    yield "symbols-basic", 1, [
        set_device(0),
        get_address(sym(INT)), get_address(sym(FLOATS)), get_address(sym(REC)),
        get_address(sym(BYTES)), get_size(sym(REC)), get_size(sym(BYTES)),
        to_symbol(sym(FLOATS), hostbuf(), "hint"), from_symbol(hostbuf(2), sym(FLOATS), "hint"),
        to_symbol(sym(BYTES), hostbuf(), 100, o="half"), from_symbol(hostbuf(), sym(BYTES), "hint", o="half"),
        to_symbol(sym(INT), hostobj(INT), "hint", k=4), from_symbol(hostbuf(), sym(REC), "hint", k=4),
        to_symbol(sym(REC), hostbuf(), 1, o="size-1"),
        reset_device(0),
    ]
    yield "symbols-hostile", 2, [
        get_address(sym(INT)),                          # no context yet
        set_device(0),
        get_address(SYM_NULL), get_address(sym(INT), null=True), get_size(sym(FLOATS), null=True),
        get_address(sym_plus1(FLOATS)), get_size(sym_end(INT)), get_address(sym_desc(REC)),
        get_address(sym_inst(BYTES)), get_size(SYM_HOSTBUF), get_address(SYM_ONE),
        get_size(SYM_FUNC), get_address(sym_minus1(REC)), get_size(sym_elem1(FLOATS)),
        to_symbol(SYM_NULL, hostbuf(), 0), to_symbol(SYM_NULL, hostbuf(), 4),
        to_symbol(sym(INT), NULLP, 4), to_symbol(sym(INT), hostbuf(), "hint+1"),
        to_symbol(sym(FLOATS), hostbuf(), 4, o="size"), to_symbol(sym(FLOATS), hostbuf(), "SIZE_MAX", o=4),
        to_symbol(sym(BYTES), hostbuf(), 8, o="SIZE_MAX"), to_symbol(sym(BYTES), hostbuf(), 8, o="2^63"),
        to_symbol(sym(INT), hostbuf(), 4, k=2), to_symbol(sym(INT), hostbuf(), 4, k=999),
        to_symbol(sym(INT), hostbuf(), 4, k=-1), to_symbol(sym(INT), inst(INT), 4),
        from_symbol(hostbuf(), sym(REC), 8, m="count-1"), from_symbol(hostbuf(), sym(REC), 8, k=1),
        from_symbol(hostbuf(), sym(REC), 8, k="INT_MIN"), from_symbol(NULLP, sym(REC), 8),
        from_symbol(hostobj(INT), sym(INT), 4), from_symbol(garbage(1), sym(INT), 4),
        from_symbol(hostbuf(), sym_plus1(BYTES), 1), from_symbol(hostbuf(), sym(BYTES), "hint+1", o=1),
    ]
    yield "symbols-async", 3, [
        set_device(0), create_stream(), malloc_host(4096), malloc_host(1000),
        to_symbol(sym(BYTES), pinned(0), 1000, s=s_live(0)),
        to_symbol(sym(FLOATS), hostbuf(), "hint", s=s_live(0)),
        from_symbol(pinned(1), sym(BYTES), 1000, s=s_live(0)),
        sync_stream(s_live(0)),
        from_symbol(hostbuf(), sym(BYTES), 1000, s=S_NULL),
        to_symbol(sym(INT), pinned(0), 4, s=S_NULL), sync_stream(S_NULL),
        to_symbol(sym(REC), pinned(0), "hint", s=s_forged(0, 1)),
        to_symbol(sym(REC), pinned(0), "hint", s=s_other(0, 0)),
        destroy_stream(s_live(0), force=True),
        to_symbol(sym(REC), pinned(0), "hint", s=s_any(0)),
        free_host(pinned(0)), free_host(pinned(1)), reset_device(0),
    ]
    yield "memcpy", 4, [
        set_device(0), malloc(4096), malloc(100), get_address(sym(FLOATS)),
        memcpy(dalloc(0), hostbuf(), "hint", 1), memcpy(hostbuf(), dalloc(0), 4096, 2),
        memcpy(dalloc(1), dalloc(0), 100, 3), memcpy(inst(FLOATS), dalloc(0), 256, 3),
        memcpy(hostbuf(), inst(FLOATS), 256, 4), memcpy(inst(FLOATS, 0, 2), hostbuf(), 64, 4),
        memcpy(dalloc(1), hostbuf(), 101, 1), memcpy(dalloc(1, 2), hostbuf(), 100, 1),
        memcpy(dalloc(0), hostbuf(), 64, 2), memcpy(hostbuf(), hostbuf(3), 64, 0),
        memcpy(dalloc(0), hostbuf(), 64, 1, m="count-1"), memcpy(dalloc(0), hostbuf(), 64, 8),
        memcpy(dalloc(0), NULLP, 64, 1), memcpy(dalloc(0), hostbuf(), 0, 999),
        memcpy(inst(INT), inst(REC), 4, 6), memcpy(inst(INT), inst(REC), 4, 7),
        free(dalloc(1)), memcpy(dalloc_any(1), hostbuf(), 8, 1), free(dalloc_any(1)),
        free(inst(INT)), free(dalloc(0, 2)), free(hostbuf()), free(garbage(2)),
        reset_device(0),
    ]
    yield "memset", 5, [
        set_device(0), malloc(1000), get_address(sym(BYTES)), malloc_host(4096),
        memset(dalloc(0), 1000), memset(dalloc(0), "hint+1"), memset(dalloc(0, 2), 1000),
        memset(inst(BYTES), "hint", 0xff), memset(inst(BYTES, 0, 2), "hint+1"),
        memset(inst(INT), 4, 0x11, m="count-1"), memset(hostbuf(), 8), memset(pinned(0), 64),
        memset(NULLP, 8), memset(garbage(3), 8), memset(stale(0), 8),
        create_stream(), memset(inst(REC), "hint", 0x77, s=s_live(0)),
        memset(dalloc(0), 64, s=S_NULL), memset(inst(INT), 4, s=s_forged(0, 4)),
        sync_device(), free(dalloc(0)), memset(dalloc_any(0), 8), reset_force(0),
    ]
    yield "streams", 6, [
        create_stream(), set_device(1), create_stream(), create_stream(config=True, prio=3, flag=1),
        create_stream(null=True), sync_stream(s_live(0)), sync_stream_timeout(s_live(1), 100),
        sync_stream_timeout(S_NULL, 0), sync_stream_timeout(S_NULL, -2), sync_stream_timeout(s_live(0), -1),
        destroy_stream(s_live(0)), destroy_stream(s_any(0)), destroy_stream(S_NULL),
        sync_stream(s_any(0)), destroy_stream(s_live(1), force=True), destroy_stream(s_any(1), force=True),
        destroy_stream(s_forged(2, 1)), sync_stream(s_other(0, 1)), sync_stream(s_forged(0, 4)),
        sync_device(), reset_device(1), sync_stream(S_NULL), create_stream(),
    ]
    yield "events", 7, [
        create_event(), set_device(0), create_event(), create_event(), create_event(null=True),
        create_stream(), record_event(e_live(0), s_live(0)), wait_event(e_live(0), S_NULL),
        query_event(e_live(0)), query_event(e_live(0), null=True), sync_event(e_live(0)),
        record_event(e_live(1), S_NULL), wait_event(e_live(1), s_live(0)), wait_event(e_live(2), s_live(0)),
        sync_stream(s_live(0)), destroy_event(e_live(0)), query_event(e_any(0)),
        record_event(e_any(0), S_NULL), sync_event(e_any(0)), destroy_event(e_any(0)),
        record_event(E_NULL, S_NULL), wait_event(e_stream(0), S_NULL), query_event(e_forged(1, 1)),
        record_event(e_live(0), s_forged(0, 4)), destroy_stream(s_live(0), force=True),
        record_event(e_live(0), s_any(0)), reset_device(0), record_event(e_live(0), S_NULL),
        set_device(1), create_event(), create_event(), record_event(e_live(0), S_NULL),
        host_func(S_NULL), host_func(S_NULL, null=True), host_func(s_forged(0, 1)),
        record_event(e_live(1), S_NULL), sync_event(e_live(1)), elapsed(e_live(0), e_live(1)),
        elapsed(e_live(0), e_live(1), null=True), elapsed(e_live(0), E_NULL), elapsed(e_any(0), e_live(0)),
    ]
    yield "two-devices", 8, [
        set_device(0), get_address(sym(FLOATS)), to_symbol(sym(FLOATS), hostbuf(), "hint"),
        set_device(1), get_address(sym(FLOATS)), to_symbol(sym(FLOATS), hostbuf(5), 64),
        memcpy(inst(FLOATS, 1), inst(FLOATS, 0), 256, 3), memcpy(inst(FLOATS, 1), inst(FLOATS, 0), 256, 7),
        memcpy(inst(FLOATS, 1), inst(FLOATS, 0), 256, 6), malloc(4096), create_stream(),
        memcpy(dalloc(0), inst(FLOATS, 0), 256, 3, s=s_live(0)), sync_stream(s_live(0)),
        set_device(0), memcpy(dalloc(0), inst(FLOATS, 0), 64, 3, s=s_live(0)),
        from_symbol(hostbuf(), sym(FLOATS), "hint"), reset_device(1),
        memcpy(hostbuf(), stale(0), 8, 2), free(stale(0)), set_device("INT_MAX"),
        set_device(-1), set_device(32), reset_device(2), reset_force(-1), reset_device(0),
    ]
    yield "contexts", 9, [
        create_context(1), get_context(), create_stream(), set_device(0), create_stream(),
        get_context(), sync_stream(s_live(0)), record_event(E_NULL, s_live(0)),
        set_context(c_live(0)), sync_stream(s_live(1)), to_symbol(sym(INT), hostbuf(), 4, s=s_live(1)),
        create_context(0), get_address(sym(INT)), set_context(c_default(0)),
        destroy_context(c_default(0)), destroy_context(c_live(2)), destroy_context(c_any(2)),
        set_context(c_any(2)), set_context(c_stream(0)), set_context(c_forged(0, 1)),
        set_context(C_NULL), get_context(null=True), create_context(2), create_context(0, null=True),
        destroy_context(c_live(0)), get_context(), reset_device(0), get_context(),
    ]
    yield "reset-reverts", 10, [
        set_device(0), to_symbol(sym(REC), hostbuf(), "hint"), to_symbol(sym(INT), hostbuf(9), 4),
        set_device(0), reset_device(0), from_symbol(hostbuf(), sym(REC), "hint"),
        reset_device(0), get_address(sym(REC)), set_device(0), from_symbol(hostbuf(), sym(REC), "hint"),
        to_symbol(sym(BYTES), hostbuf(), 1000), reset_force(0), set_device(0),
        from_symbol(hostbuf(), sym(BYTES), 1000), reset_device(0),
    ]
    yield "out-of-memory", 11, [
        set_device(1), malloc(64 << 20), get_address(sym(BYTES)), to_symbol(sym(INT), hostbuf(), 4),
        malloc(1), malloc((64 << 20) + 1), malloc("SIZE_MAX"), malloc("SIZE_MAX-63"), malloc(0),
        malloc(100, pol=8), malloc(100, pol=0x2000), malloc(100, pol=0x1002), malloc(100, null=True),
        free(dalloc(0)), get_address(sym(BYTES)), malloc(32 << 20), malloc(32 << 20),
        memset(dalloc(0, 3), 1), free(dalloc(1)), malloc(16 << 20), malloc(16 << 20), create_stream(),
        memcpy(dalloc(0), dalloc(1), "hint", 3, s=s_live(0)), memset(dalloc(1), "hint", s=s_live(0)),
        sync_stream(s_live(0)), reset_device(1),
    ]
    yield "pinned", 12, [
        malloc_host(4096), malloc_host(100), malloc_host(0), malloc_host("SIZE_MAX"),
        malloc_host(1 << 50), malloc_host(64, null=True), set_device(0), malloc(4096),
        memcpy(dalloc(0), pinned(0), 4096, 1), memcpy(pinned(1), dalloc(0), 100, 2),
        memcpy(pinned(1), dalloc(0), 101, 2), memcpy(pinned(0), pinned(1), 100, 0),
        create_stream(), memcpy(dalloc(0), pinned(0), 4096, 1, s=s_live(0)),
        memcpy(pinned(1), dalloc(0), 100, 4, s=s_live(0)), sync_stream(s_live(0)),
        free_host(pinned(0, 2)), free_host(pinned(0)), free_host(pinned_any(0)),
        memcpy(dalloc(0), pinned_any(0), 64, 1), free_host(hostbuf()), free_host(dalloc(0)),
        free_host(garbage(0)),
    ]
    yield "forged-handles", 13, [
        set_device(0), create_stream(), create_event(), create_context(1),
        sync_stream(s_forged(0, 1)), sync_stream(s_forged(0, 4)), sync_stream(s_forged(0, 2)),
        record_event(e_forged(0, 10), S_NULL), query_event(e_forged(0, 7)),
        destroy_event(e_forged(0, 1)), destroy_stream(s_forged(0, 7)),
        set_context(c_forged(0, 4)), destroy_context(c_forged(0, 5)), set_context(c_stream(0)),
        destroy_stream(s_other(0, 1)), destroy_event(e_stream(0)), sync_event(e_stream(0)),
    ]

def random_seed(rng, n):
    out = []
    for _ in range(n):
        op = rng.choice(OPS[:7] + OPS[7:] * 3)
        args = [rng.randrange(16) if rng.random() < 0.8 else rng.randrange(256) for _ in range(15)]
        out.append(bytes([OP[op]] + args))
    return out

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        if f.endswith(".bin"):
            os.remove(os.path.join(outdir, f))
    count = 0
    for name, first, records in seeds():
        with open(os.path.join(outdir, f"{name}.bin"), "wb") as fh:
            fh.write(bytes([first]) + b"".join(records))
        count += 1
    rng = random.Random(5)
    for i in range(2):
        with open(os.path.join(outdir, f"random-{i}.bin"), "wb") as fh:
            fh.write(bytes([i]) + b"".join([set_device(0), set_device(1)] + random_seed(rng, 60)))
        count += 1
    print(f"wrote {count} seeds to {outdir}")

if __name__ == "__main__":
    main()
