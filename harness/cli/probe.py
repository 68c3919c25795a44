"""The one-point commands: ``harness probe`` (any value, evaluated and judged as the study
does, or its standalone TensorFlow script) and ``harness trace`` (the upstream gradient
each custom gradient receives). TensorFlow starts only when a value is computed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness.cli.output import EXIT_INVALID

__all__ = ["add_probe_commands"]


def _cmd_trace(args: argparse.Namespace) -> int:
    from harness.cases.load import load_case
    from harness.cases.model import CaseError

    try:
        case = load_case(args.case)
    except CaseError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    point = _parse_point(case, args.at, "trace", complete=False)
    if point is None:
        return EXIT_INVALID
    from harness.backends.tensorflow.gradient_trace import trace_gradients  # TensorFlow starts here

    try:
        trace = trace_gradients(case, args.implementation, point, args.dtype)
    except KeyError as exc:
        print(f"harness trace: {exc.args[0]}", file=sys.stderr)
        return EXIT_INVALID
    for call in trace.calls:
        inputs = " ".join(f"{k}={_scalar(v)}" for k, v in call.inputs.items())
        out = " ".join(f"d{k}={_scalar(v)}" for k, v in call.downstream.items())
        print(f"{call.function}: {inputs}  upstream={_scalar(call.upstream)}  downstream: {out}")
    if not trace.calls:
        print("(no custom gradient was called)")
    print("gradient: " + " ".join(f"d/d{k}={v}" for k, v in trace.gradient.items()))
    return 0


def _scalar(value) -> str:
    import numpy as np

    if value is None:
        return "None"
    return f"{np.asarray(value).reshape(-1)[0]:.9g}"


def _parse_point(
    case, items: Sequence[str], command: str, complete: bool = True
) -> dict[str, float] | None:
    """``NAME=VALUE`` items as a point of ``case`` (every input, where ``complete``), or
    ``None`` after saying what is wrong in one line."""
    point = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            point[name.strip()] = float(value)
        except ValueError:
            print(f"harness {command}: --at {item!r}: expected NAME=NUMBER", file=sys.stderr)
            return None
    unknown = sorted(set(point) - set(case.input_names))
    missing = [n for n in case.input_names if n not in point] if complete else []
    if unknown or missing:
        what = f"has no input {unknown[0]!r}" if unknown else f"needs {', '.join(missing)}"
        print(
            f"harness {command}: --at: {case.id} {what}; inputs: " + ", ".join(case.input_names),
            file=sys.stderr,
        )
        return None
    return point


def _cmd_probe(args: argparse.Namespace) -> int:
    from harness.cases.load import load_case
    from harness.cases.model import CaseError
    from harness.cases.schema import MAX_ORDER
    from harness.config import ConfigError, load_config, settings_for

    try:
        case = load_case(args.case)
        config = load_config(args.config)
    except (CaseError, ConfigError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    if getattr(case, "experiment", None):
        print(f"harness probe: {case.id} is an experiment case; probe its page", file=sys.stderr)
        return EXIT_INVALID
    point = _parse_point(case, args.at, "probe")
    if point is None:
        return EXIT_INVALID
    names = {i.name for i in case.implementations}
    if args.implementation not in names:
        print(
            f"harness probe: {case.id} has no implementation {args.implementation!r}; it has "
            + ", ".join(sorted(names)),
            file=sys.stderr,
        )
        return EXIT_INVALID
    label = "" if args.partial in ("f", "") else args.partial
    by_label = {case.label(p): p for p in case.partials}
    if label not in by_label:
        print(
            f"harness probe: --partial {args.partial!r}: {case.id} has "
            + ", ".join(lbl or "f" for lbl in by_label),
            file=sys.stderr,
        )
        return EXIT_INVALID
    if not 0 <= args.index < args.batch:
        print("harness probe: --index must lie in the batch (0 <= index < batch)", file=sys.stderr)
        return EXIT_INVALID
    from harness.backends.catalogue import SPECS

    spec = SPECS[args.backend]
    for what, value, offered in (
        ("method", args.method, spec.methods),
        ("mode", args.mode, spec.modes),
    ):
        if value not in offered:
            print(
                f"harness probe: {spec.title} has no {what} {value!r}; it offers "
                + ", ".join(offered),
                file=sys.stderr,
            )
            return EXIT_INVALID
    partial = by_label[label]
    settings = settings_for(case, config)
    # Every partial the run computes with this method, in the same pass: compilers
    # rewrite a graph as a whole, so a value can depend on what else it computes.
    cap = (
        settings.max_order.get(args.method, MAX_ORDER) if args.max_order is None else args.max_order
    )
    beside = sorted(
        {*(p for p in case.partials if len(p) <= cap), partial}, key=lambda p: (len(p), p)
    )
    value = dict(
        case=case,
        implementation=args.implementation,
        point=point,
        partial=partial,
        method=args.method,
        mode=args.mode,
        dtype=args.dtype,
        batch=args.batch,
        index=args.index,
    )
    writer = SPECS[args.backend].repro
    if args.snippet and writer:  # the back end's finding writer (TensorFlow's)
        import importlib

        sys.stdout.write(importlib.import_module(writer).snippet(**value, partials=beside))
        return 0
    if args.snippet:
        return _minimal_snippet(args.backend, case, value, beside)
    from harness.stages.probe import probe  # the framework starts here

    got = probe(**value, settings=settings, beside=beside, backend=args.backend)
    where = ", ".join(f"{k}={v!r}" for k, v in point.items())
    print(
        f"{case.id} · {spec.title} · {args.implementation} · {label or 'f'} · {args.method} · "
        f"{args.mode} · {args.dtype} at {where} (index {args.index} of a batch of {args.batch})"
    )
    print(f"  got      {got.value!r}" + (f"  ({got.message})" if got.status != "value" else ""))
    print(f"  truth    {got.reference or 'not verified: ' + got.message}")
    print(f"  rounded  {got.reference_rounded!r} ({args.dtype})")
    print(f"  outcome  {got.outcome}  [{got.tolerance_reason}]")
    return 0


def _minimal_snippet(backend: str, case, value: dict, beside: list) -> int:
    """A standalone script in ``backend`` (:mod:`harness.backends.snippet`); ``beside``:
    the partials the run computes in the same pass (a Taylor series to their order)."""
    import importlib

    from harness.backends.catalogue import SPECS
    from harness.backends.snippet import script, series_order

    module = importlib.import_module(SPECS[backend].snippet)
    names = list(case.input_names)
    written = module.write(case, value["implementation"], names)
    if written is None:
        print(f"harness probe: no standalone {backend} script for {value['implementation']} "
              "(a registered implementation or a nested rule)", file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    title = f"{case.id} · {value['implementation']}"
    top = series_order(beside, value["partial"])
    text = script(module.STYLE, written[0], names, value["point"], value["partial"],
                  value["method"], value["mode"], value["dtype"], title, "see harness probe",
                  top)  # fmt: skip
    sys.stdout.write(text)
    return 0


def add_probe_commands(sub) -> None:
    """Add ``probe`` and ``trace`` to the command line's subparsers."""
    from harness.cases.schema import BACKENDS, DEFAULT_BACKEND, DTYPES, METHODS, MODES

    p = sub.add_parser(
        "trace",
        help="the upstream gradient each custom gradient receives, at one point (seed 003)",
    )
    p.add_argument("case", help="the case file (cases/NAME.yaml)")
    p.add_argument("implementation", help="one of the case's implementations")
    p.add_argument("--at", nargs="+", required=True, metavar="NAME=VALUE", help="the point")
    p.add_argument("--dtype", default="float32", choices=DTYPES)
    p.set_defaults(func=_cmd_trace)

    p = sub.add_parser(
        "probe",
        help="one value by any method, mode, dtype and order, evaluated and judged as the "
        "study does (--snippet: a standalone TensorFlow script instead)",
    )
    p.add_argument("case", help="the case file (cases/NAME.yaml)")
    p.add_argument("implementation", help="one of the case's implementations")
    p.add_argument("--at", nargs="+", required=True, metavar="NAME=VALUE", help="the point")
    p.add_argument("--partial", default="f", help="the derivative's label (x, xx, ab; f: value)")
    p.add_argument("--method", default="reverse", choices=METHODS)
    p.add_argument("--mode", default="eager", choices=MODES)
    p.add_argument("--dtype", default="float32", choices=DTYPES)
    p.add_argument("--batch", type=int, default=1, help="batch size the input fills")
    p.add_argument("--index", type=int, default=0, help="the position read in the batch")
    p.add_argument("--config", help="study configuration YAML (tolerances, orders)")
    p.add_argument(
        "--max-order",
        type=int,
        choices=range(0, 5),
        metavar="N",
        help="compute beside it every partial up to order N in the same pass, as the run "
        "did (default: the setting's highest order for the method)",
    )
    p.add_argument(
        "--backend",
        default=DEFAULT_BACKEND,
        choices=BACKENDS,
        help=f"the framework that computes the value (default {DEFAULT_BACKEND})",
    )
    p.add_argument(
        "--snippet",
        action="store_true",
        help="print a standalone script in the back end's framework instead",
    )
    p.set_defaults(func=_cmd_probe)
