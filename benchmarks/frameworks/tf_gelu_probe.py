# Why tf.nn.gelu (float64) differs from exact by ~1e-8: math_ops.cast(python_float, float64) goes via float32.
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf, mpmath as mp
from tensorflow.python.ops import math_ops
print("math_ops.cast(0.7071067811865476, tf.float64) =", repr(float(math_ops.cast(0.7071067811865476, tf.float64))),
      " float32(0.7071067811865476) =", repr(float(np.float32(0.7071067811865476))))
print("math_ops.cast(0.044715, tf.float64) =", repr(float(math_ops.cast(0.044715, tf.float64))),
      " float32(0.044715) =", repr(float(np.float32(0.044715))))
x = 0.4
tfv = float(tf.nn.gelu(tf.constant(x, tf.float64), approximate=False))
c32 = mp.mpf(float(np.float32(0.7071067811865476)))
model = mp.mpf(x) / 2 * mp.erfc(-mp.mpf(x) * c32)
exact = mp.mpf(x) / 2 * (1 + mp.erf(mp.mpf(x) / mp.sqrt(2)))
print(f"x=0.4 erf-gelu: tf={tfv!r}  mp with f32 constant={mp.nstr(model, 17)}  mp exact={mp.nstr(exact, 17)}")
tfa = float(tf.nn.gelu(tf.constant(x, tf.float64), approximate=True))
k32 = mp.mpf(float(np.float32(0.044715)))
mt = lambda k: mp.mpf(x) / 2 * (1 + mp.tanh(mp.mpf(0.7978845608028654) * (x + k * mp.mpf(x) ** 3)))
print(f"x=0.4 tanh-gelu: tf={tfa!r}  mp with f32 0.044715={mp.nstr(mt(k32), 17)}  mp with exact 0.044715={mp.nstr(mt(mp.mpf('0.044715')), 17)}")
