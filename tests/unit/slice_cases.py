# Prints the literals of slice_test.cc (NumPy 2.x and Python slice.indices).
import numpy as np
a = np.arange(60).reshape(3,4,5)
cases = [[(None,None,-1)], [(1,None,None),(None,None,-2)], [(None,None,None),(3,0,-1),(None,None,2)],
         [(-100,100,3)], [(5,1,1)], [(None,None,-1),(None,None,-1),(None,None,-1)], [(2,-5,-1),(-1,None,-3),(1,4,2)]]
def opt(v): return "std::nullopt" if v is None else str(v)
for c in cases:
    r = a[tuple(slice(*s) for s in c)]
    specs = ", ".join("{%s, %s, %d}" % (opt(s[0]), opt(s[1]), 1 if s[2] is None else s[2]) for s in c)
    print("{{%s}, {%s}, {%s}}," % (specs, ", ".join(map(str, r.shape)), ", ".join(map(str, r.ravel()))))
# slice.indices edge cases for NormalizeSlice
for (st, sp, step, dim) in [(None,None,-1,0),(-2**63,2**63-1,1,7),(2**63-1,-2**63,-3,7),(3,3,1,7),(10,None,-4,7)]:
    s = slice(st, sp, step); f, e, k = s.indices(dim); print("//", s, dim, f, k, len(range(f, e, k)))
