"""``harness.check``'s other doors: what it refuses (an untraceable primitive, the wrong
number of inputs, a non-scalar output, a trace that differs from the function), the
``harness check FILE:FUNCTION`` command, the pytest plugin and the entry-point group
``harness.implementations`` through which installed packages register implementations."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import harness

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
jnp = jax.numpy

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]


def _refused(fn, inputs, tmp_path) -> str:
    with pytest.raises(harness.TraceError) as caught:
        harness.check(fn, "jax", inputs, orders=(1,), dtypes=("float64",), results=tmp_path)
    assert not list(tmp_path.rglob("*.parquet"))  # nothing ran, nothing half-written
    return str(caught.value)


def test_what_cannot_be_checked_is_refused_in_one_message(tmp_path):
    def cube_root(x):
        return jnp.cbrt(x) + 1.0

    message = _refused(cube_root, {"x": [8.0]}, tmp_path / "a")
    # The primitive, and the user's line (this file, the line of jnp.cbrt).
    assert "JAX's primitive 'cbrt'" in message and "test_check_interfaces.py" in message
    message = _refused(lambda x: x * 2.0, {"x": [1.0], "y": [2.0]}, tmp_path / "b")
    assert "calling the function with 2 inputs" in message
    message = _refused(lambda x: jnp.stack([x, x]), {"x": [1.0]}, tmp_path / "c")
    assert "returns [(2,)]: one scalar is what can be traced" in message

    # A cast rounds: the trace (the exact function) differs from the function in float64.
    def thirds(x):
        return (x.astype(jnp.float32) / 3).astype(jnp.float64)

    message = _refused(thirds, {"x": [1.0, 2.0]}, tmp_path / "d")
    assert "does not compute what the function computes: at x = 1.0" in message
    assert "the trace is not used" in message


def _harness(*args, cwd=ROOT, env=None):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
def test_an_untraceable_function_is_checked_against_a_given_mpmath_reference(tmp_path):
    import warnings

    import mpmath

    jax.config.update("jax_enable_x64", True)

    def bessel(x):
        return jnp.i0(x)  # i0: no entry of the operator table

    def i0(x):
        return mpmath.besseli(0, x)

    arguments = {"inputs": {"x": [0.5, 2.0]}, "orders": (1, 2), "dtypes": ("float64",)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = harness.check(bessel, "jax", methods=["reverse"], reference=i0, **arguments)
    said = [str(w.message) for w in caught if "not traced" in str(w.message)]
    assert said and "i0" in said[0], said
    # The truth from Bessel's identities, not from mpmath.diff: I0' = I1, I0'' = (I0 + I2)/2.
    with mpmath.workdps(40):
        truth = {(1, x): float(mpmath.besseli(1, x)) for x in (0.5, 2.0)} | {
            (2, x): float((mpmath.besseli(0, x) + mpmath.besseli(2, x)) / 2) for x in (0.5, 2.0)
        }
    rows = result.rows[result.rows["order"] > 0]
    assert len(rows) == 8  # eager and jit, orders 1-2, two points
    for r in rows.itertuples():
        assert r.reference_rounded == truth[r.order, r.x], (r.order, r.x)
    assert set(rows["outcome"]) == {"ok"}
    with pytest.raises(ValueError, match="names no Python code"):
        result.to_case()
    page = result.page(tmp_path / "bessel.html").read_text()
    assert "Reference: the registered <code>check:jax:" in page
    # Another reference, the same function: the cached reference is not reused.
    doubled = harness.check(
        bessel, "jax", methods=["reverse"], reference=lambda x: 2 * i0(x), **arguments
    )
    first = doubled.rows[(doubled.rows["order"] == 1) & (doubled.rows["x"] == 2.0)]
    assert (first["reference_rounded"] == float(2 * mpmath.besseli(1, 2.0))).all()
    assert len(first) and not (set(first["outcome"]) & {"ok"})  # twice the truth: failing


@pytest.mark.slow
def test_the_check_command_exits_1_on_a_failure_2_on_bad_input_0_when_right(tmp_path):
    page = tmp_path / "page.html"
    run = _harness(
        "check", "examples/torch_functions.py:naive_log1pexp", "--framework", "torch",
        "--inputs", "x=values:1,100", "--orders", "1", "--dtypes", "float32",
        "--results", str(tmp_path / "results"), "--page", str(page),
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "torch reverse eager float32 d^1/dx: nan at 1 of the points" in run.stdout
    assert "worst at x = 100.0: got nan, the truth (Arb-certified) 1.0" in run.stdout
    assert "\nroot causes:\n" in run.stdout and page.read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "results" / "naive_log1pexp" / "errors.parquet").exists()
    # The verdicts stream on standard error as each method is judged, before the result.
    judged = [x for x in run.stderr.splitlines() if x.startswith("judged torch ")]
    assert "judged torch reverse eager float32: " in "\n".join(judged), run.stderr[-2000:]
    assert any("nan" in x for x in judged if " reverse " in x)

    module = tmp_path / "mine.py"
    module.write_text("import torch\n\n\ndef cube(x):\n    return x * x * x\n")
    run = _harness("check", f"{module}:cube", "--framework", "torch", "--inputs",
                   "x=values:0.5,2,3", "--orders", "1-3", "--methods", "reverse", "forward",
                   "--quiet")  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "every derivative is right" in run.stdout
    assert "judged " not in run.stderr and "evaluate torch" not in run.stderr

    for target, said in [
        (f"{module}:square", f"{module}: no function 'square'"),
        (f"{tmp_path / 'absent.py'}:cube", "absent.py: no such file"),
    ]:
        run = _harness("check", target, "--framework", "torch")
        assert run.returncode == 2 and said in run.stderr
    run = _harness("check", f"{module}:cube", "--framework", "torch", "--orders", "0-5")
    assert run.returncode == 2 and "--orders '0-5'" in run.stderr
    module.write_text("import torch\n\n\ndef f(x):\n    return torch.special.i0(x)\n")
    run = _harness("check", f"{module}:f", "--framework", "torch", "--inputs", "x=values:1")
    assert run.returncode == 2 and "i0" in run.stderr and "mine.py" in run.stderr


@pytest.mark.slow
def test_the_pytest_plugin_fails_a_test_with_the_table_of_failing_checks_under_xdist(
    pytester, monkeypatch
):
    pytester.makepyfile(
        test_mine=f"""
        import sys
        import pytest
        import torch
        sys.path.insert(0, {str(ROOT / "examples")!r})
        from torch_functions import naive_log1pexp

        def test_cube(check_derivatives):
            check_derivatives(lambda x: x * x * x, "torch", inputs={{"x": [2.0]}}, orders=(1, 2),
                              methods=["reverse"])

        @pytest.mark.derivatives("torch", inputs={{"x": [1.0, 100.0]}}, orders=(1,),
                                 dtypes=("float32",))
        def test_log1pexp():
            return naive_log1pexp
        """
    )
    # Under xdist, two workers, each with one of the tests, sharing one reference cache.
    shared = pytester.path / "shared-cache"
    monkeypatch.setenv("HARNESS_CACHE", str(shared))
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    run.assert_outcomes(passed=1, failed=1)
    assert "2 workers" in run.stdout.str()
    kept = sorted(p.name.split("-")[0] for p in (shared / "reference").glob("*.parquet"))
    assert len(kept) == 2 and "naive_log1pexp" in kept, kept
    text = run.stdout.str()
    assert "DerivativeError" in text
    assert "torch reverse eager float32 d^1/dx: nan at 1 of the points" in text


def test_installed_packages_register_implementations_through_the_entry_point_group(tmp_path):
    (tmp_path / "my_impls.py").write_text(
        textwrap.dedent(
            """
            from harness.registered.register import implementation

            @implementation("installed_square", inputs=("x",), description="x * x.")
            def square(tf, dtype):
                return lambda x: x * x
            """
        )
    )
    (tmp_path / "broken_impls.py").write_text("raise ImportError('no such thing')\n")
    info = tmp_path / "my_impls-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-impls\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[harness.implementations]\nmine = my_impls\nbroken = broken_impls\n"
    )
    case = tmp_path / "squared.yaml"
    case.write_text(
        textwrap.dedent(
            """
            title: x squared by an installed implementation
            source: tests/test_check_interfaces.py
            inputs: {x: {values: [2.0]}}
            function: x**2
            derivatives: {wrt: x, orders: [1]}
            implementations:
              installed: {registered: installed_square}
            """
        )
    )
    import os

    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    listed = _harness("implementations", env=env)
    assert listed.returncode == 0 and "installed_square  (inputs: x)" in listed.stdout
    assert "entry point 'broken' (broken_impls)" in listed.stderr
    assert "ImportError: no such thing" in listed.stderr
    assert _harness("validate", str(case), env=env).returncode == 0
    # Without the package installed the case names nothing the harness knows.
    alone = _harness("validate", str(case))
    assert alone.returncode == 2 and "installed_square" in alone.stderr
