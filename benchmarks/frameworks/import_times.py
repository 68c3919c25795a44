# Q5: cold import time, median of 3 fresh processes each (wall time of `python -c "import X"`
# minus nothing; also the in-process time measured around the import statement).
import subprocess, statistics, time, sys
PY = ".venv/bin/python"
for mod in ("jax", "torch", "tensorflow", "jax.numpy; import jax.experimental.jet", "numpy"):
    wall, inproc = [], []
    for _ in range(3):
        code = f"import time; t=time.perf_counter(); import {mod}; print(time.perf_counter()-t)"
        t0 = time.perf_counter()
        r = subprocess.run([PY, "-c", code], capture_output=True, text=True,
                           env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"})
        wall.append(time.perf_counter() - t0)
        inproc.append(float(r.stdout.strip().splitlines()[-1]))
    print(f"import {mod:40s} in-process median {statistics.median(inproc):.2f} s (runs {', '.join(f'{v:.2f}' for v in inproc)}); "
          f"process wall median {statistics.median(wall):.2f} s")
r = subprocess.run([PY, "-c", "import time; t=time.perf_counter(); import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready(); print(time.perf_counter()-t)"], capture_output=True, text=True)
print("import jax + first jnp.ones(3) (backend init):", r.stdout.strip(), "s")
r = subprocess.run([PY, "-c", "import time; t=time.perf_counter(); import torch; torch.ones(3)+1; print(time.perf_counter()-t)"], capture_output=True, text=True)
print("import torch + first op:", r.stdout.strip(), "s")
