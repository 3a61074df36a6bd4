# Regenerates the .npy fixtures in this folder with real NumPy (1.24 wrote the
# committed ones): cd tests/client/data && /usr/bin/python3 gen_fixtures.py
import numpy as np, io
np.save("bool.npy", np.array([True, False, True, True]))
np.save("int32.npy", np.array([[1, -2, 3], [2147483647, -2147483648, 0]], dtype=np.int32))
np.save("int64.npy", np.array([0, -1, 2**40, -2**62, 2**63 - 1], dtype=np.int64))
np.save("float32.npy", np.array([1.5, -0.25, 3.0e38, 0.0], dtype=np.float32))
np.save("float64.npy", (np.arange(24, dtype=np.float64) / 4 - 1).reshape(2, 3, 4))
np.save("scalar_f64.npy", np.array(3.25))
np.save("empty_f32.npy", np.zeros((0,), dtype=np.float32))
np.save("empty_2x0x3_i64.npy", np.zeros((2, 0, 3), dtype=np.int64))
with open("v2_int64.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([7, 8, 9], dtype=np.int64), version=(2, 0))
with open("v3_f32.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([[1, 2], [3, 4]], dtype=np.float32), version=(3, 0))
np.save("fortran_f64.npy", np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
np.save("bigendian_f64.npy", np.array([1.0, 2.0], dtype=">f8"))
np.save("complex128.npy", np.array([1 + 2j]))
np.save("uint8.npy", np.array([1, 2, 3], dtype=np.uint8))
np.save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
np.save("structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
b = io.BytesIO(); np.save(b, np.arange(4, dtype=np.float64)); raw = b.getvalue()
open("truncated_data.npy", "wb").write(raw[:-4])
open("trailing_data.npy", "wb").write(raw + b"\0\0\0\0\0\0\0\0")
open("truncated_header.npy", "wb").write(raw[:40])
