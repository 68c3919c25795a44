"""``harness check path/to/module.py:function --framework jax``: a user's own function
checked from the command line (:func:`harness.api.check.check`): the tables in
``--results``, the page at ``--page``, each failing check and its root cause printed.
Exit 0 when every derivative is right, 1 when one fails, 2 on bad input (no such file or
function, an untraceable primitive, a trace that differs from the function)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from harness.cli.output import EXIT_INVALID

__all__ = ["add_check_commands", "parse_inputs", "parse_orders"]

_KINDS = "log:FROM:TO[:SIGNS[:COUNT]], linear:FROM:TO[:COUNT], values:V1,V2,..., tie:NAME"


class BadInput(ValueError):
    """An argument of ``harness check`` that cannot be used; its message says which."""


def parse_inputs(items) -> dict:
    """``NAME=SPEC`` items (``x=log:1e-30:1e30:both``) as ``harness.check``'s inputs."""
    from harness.api import sweep

    out = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        kind, _, rest = text.partition(":")
        parts = rest.split(":") if rest else []
        try:
            if not sep or not name:
                raise ValueError("NAME=SPEC")
            if kind == "log" and 2 <= len(parts) <= 4:
                signs = parts[2] if len(parts) > 2 else "positive"
                count = int(parts[3]) if len(parts) > 3 else sweep.COUNT
                out[name] = sweep.log(float(parts[0]), float(parts[1]), count, signs)
            elif kind == "linear" and 2 <= len(parts) <= 3:
                count = int(parts[2]) if len(parts) > 2 else sweep.COUNT
                out[name] = sweep.linear(float(parts[0]), float(parts[1]), count)
            elif kind == "values" and len(parts) == 1:
                out[name] = sweep.values(*(float(v) for v in parts[0].split(",")))
            elif kind == "tie" and len(parts) == 1:
                out[name] = sweep.tie(parts[0])
            else:
                out[name] = sweep.values(*(float(v) for v in text.split(",")))
        except ValueError:
            raise BadInput(f"--inputs {item!r}: NAME=SPEC with SPEC one of {_KINDS}") from None
    return out


def parse_orders(text: str) -> tuple[int, ...]:
    """``1-4`` or ``1,2`` as orders 1 to 4."""
    try:
        if "-" in text:
            low, high = (int(v) for v in text.split("-"))
            orders = tuple(range(low, high + 1))
        else:
            orders = tuple(int(v) for v in text.split(","))
    except ValueError:
        orders = ()
    if not orders or not all(1 <= o <= 4 for o in orders):
        raise BadInput(f"--orders {text!r}: orders 1 to 4, as 1-4 or 1,2")
    return orders


def load_function(target: str):
    """``path/to/module.py:function`` imported (its folder first on the import path)."""
    path_text, sep, name = target.rpartition(":")
    path = Path(path_text)
    if not sep or not name:
        raise BadInput(f"{target!r}: path/to/module.py:function")
    if not path.is_file():
        raise BadInput(f"{path}: no such file")
    sys.path.insert(0, str(path.resolve().parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)
    spec.loader.exec_module(module)  # the user's own code, named on their command line
    fn = getattr(module, name, None)
    if not callable(fn):
        raise BadInput(f"{path}: no function {name!r}")
    return fn


def _cmd_check(args: argparse.Namespace) -> int:
    from harness.api.errors import cause_lines, failure_lines
    from harness.backends.interface import TraceError
    from harness.cases.model import CaseError

    try:
        inputs = parse_inputs(args.inputs)
        orders = parse_orders(args.orders)
        fn = load_function(args.target)
        from harness.api.check import check

        result = check(
            fn,
            args.framework,
            inputs or None,
            orders=orders,
            dtypes=args.dtypes,
            methods=args.methods,
            modes=args.modes,
            results=args.results,
            progress=not args.quiet,
        )
    except (BadInput, TraceError, CaseError) as exc:
        print(f"harness check: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.page:
        print(f"page -> {result.page(args.page)}")
    counts = result.rows["outcome"].value_counts()
    print(
        f"{result.case.id} ({args.framework}, traced as {result.traced.text}): "
        f"{len(result.rows)} values: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    )
    failures = result.failures
    lines = failure_lines(result, failures) if len(failures) else []
    for line in lines:
        print("  " + line)
    for line in cause_lines(result, lines):
        print(line)
    if len(failures):
        print(f"{len(failures)} values fail in {len(lines)} checks")
        return 1
    undecided = len(result.undecided)
    print("every derivative is right" + (f" ({undecided} undecided)" if undecided else ""))
    return 0


def add_check_commands(sub) -> None:
    """Add ``check`` to the command line's subparsers."""
    from harness.cases.schema import BACKENDS, DTYPES, METHODS, MODES

    p = sub.add_parser(
        "check",
        help="check your own function (path/to/module.py:function) against its certified "
        "reference; exit 1 when a derivative fails",
    )
    p.add_argument("target", help="path/to/module.py:function")
    p.add_argument("--framework", required=True, choices=BACKENDS)
    p.add_argument(
        "--inputs", nargs="+", metavar="NAME=SPEC", help=f"each input's points: {_KINDS}"
    )
    p.add_argument("--orders", default="1-4", help="the derivatives' orders (default 1-4)")
    p.add_argument("--dtypes", nargs="+", choices=DTYPES)
    p.add_argument("--methods", nargs="+", choices=METHODS)
    p.add_argument("--modes", nargs="+", choices=MODES)
    p.add_argument("--results", help="where the tables go (default: a temporary folder)")
    p.add_argument("--page", help="write the HTML page here")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress and no verdicts while it runs (standard error); the result only",
    )
    p.set_defaults(func=_cmd_check)
