"""The root-cause commands: ``harness repro`` (each root cause's standalone reproducer in
every framework it affects, run and recorded; ``--check`` runs them all again as their
own processes) and ``harness bug-report ID`` (a root cause as a ready-to-paste report)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.cli.output import EXIT_INVALID

__all__ = ["add_cause_commands", "bug_report"]


def _tables(results: Path, filters=None):
    """The study's root causes and its findings (``filters``: only those rows, as
    :func:`harness.results.read_table` takes them), without the columns no root cause
    reads (:data:`harness.causes.study.UNREAD`)."""
    from harness.causes.study import UNREAD
    from harness.results import ResultsError, read_table

    roots, findings = results / "root_causes.parquet", results / "findings.parquet"
    for path in (roots, findings):
        if not path.exists():
            raise ResultsError(f"{path} does not exist; run the study (or `harness collect`) first")
    return read_table(roots), read_table(findings, filters=filters, leave_out=UNREAD)


def _cmd_repro(args: argparse.Namespace) -> int:
    from harness.backends.catalogue import SPECS, installed
    from harness.causes.reproduce import check, reproducers
    from harness.results import ResultsError, read_metadata, read_table, write_table

    results = Path(args.results)
    folder = results / "reproducers"
    backends = args.backend or [b for b in SPECS if installed(b)]
    if args.check:
        problems, scripts = [], 0
        for b in backends:
            path = folder / f"{b}.parquet"
            if not path.exists():
                print(
                    f"harness repro: {path} does not exist; run `harness repro --backend {b}`",
                    file=sys.stderr,
                )
                return EXIT_INVALID
            table = read_table(path)
            scripts += int((table["script"] != "").sum())
            problems += check(table)
        for p in problems:
            print(p)
        print(f"{scripts} scripts run; {len(problems)} disagree with the values recorded")
        return 1 if problems else 0
    try:
        roots, findings = _tables(results)
    except ResultsError as exc:
        print(f"harness repro: {exc}", file=sys.stderr)
        return EXIT_INVALID
    meta = read_metadata(results / "root_causes.parquet")
    from harness.config import ConfigError, load_config

    try:
        config = load_config(args.config, json.loads(args.study) if args.study else None)
    except (ConfigError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    for b in backends:
        if not installed(b):
            print(f"harness repro: {b} is not installed here; {SPECS[b].install}", file=sys.stderr)
            return EXIT_INVALID
        table = reproducers(roots, findings, b, args.cases, config.tolerances)
        write_table(table, folder / f"{b}.parquet", {**meta, "stage": "reproduce", "backend": b})
        shown = int(table["reproduces"].sum())
        print(
            f"{SPECS[b].title}: {len(table)} root causes, {int((table['script'] != '').sum())} "
            f"scripts, {shown} show the failure -> {folder / f'{b}.parquet'}"
        )
    return 0


def bug_report(root: dict, members, reproducers: dict, versions: dict) -> str:
    """A root cause as a report to paste into a framework's issue tracker (Markdown)."""
    from harness.causes.regions import regions_text
    from harness.causes.repro_words import probe_words, script_words
    from harness.causes.study import title

    worst = json.loads(root["worst"])
    lines = [f"## {root['text'].split('. ')[0]}", "", root["text"], ""]
    lines += [
        f"- **What**: {root['kind']} `{root['primitive']}`, {root['outcome']} values "
        f"({root['severity_label']}), {root['expected']}",
        f"- **Frameworks**: {', '.join(title(b) for b in root['frameworks'].split(', '))}",
        f"- **Scope**: dtypes {root['dtypes']}; orders {root['orders']}; methods "
        f"{root['methods']}; modes {root['modes']}; cases {root['cases']}",
        f"- **Where**: {regions_text(json.loads(root['regions']), root['dtypes'].split(', ')[0])}",
        f"- **Worst**: {worst['case']}.{worst['implementation']} {worst['derivative']} at "
        + ", ".join(f"{k} = {v!r}" for k, v in worst["inputs"].items())
        + f": got {worst['got']!r}, truth {worst['truth']} (certified by Arb ball arithmetic)",
        f"- **Findings it absorbs** ({len(members)}): "
        + ", ".join(json.loads(root["findings"])[:12])
        + (" ..." if len(members) > 12 else ""),
    ]
    for backend, r in reproducers.items():
        lines += ["", f"### Reproducer ({title(backend)} {versions.get(backend, '')})", ""]
        if r["script"]:
            words = script_words(r)
            lines += [
                words[0].upper() + words[1:] + ".",
                "",
                "```python",
                r["script"].rstrip(),
                "```",
            ]
        else:
            lines.append(r["note"])
        lines += ["", f"With the harness, {probe_words(r)}: `" + r["probe"] + "`"]
    return "\n".join(lines) + "\n"


def _cmd_bug_report(args: argparse.Namespace) -> int:
    from harness.results import ResultsError, read_metadata, read_table

    results = Path(args.results)
    try:
        roots, findings = _tables(results, filters=[("root_cause", "==", args.id)])
    except ResultsError as exc:
        print(f"harness bug-report: {exc}", file=sys.stderr)
        return EXIT_INVALID
    match = roots[roots["id"] == args.id]
    if match.empty:
        near = [i for i in roots["id"] if args.id in i][:5]
        hint = (
            f"; did you mean {', '.join(near)}"
            if near
            else "; `harness bug-report --list` lists them"
        )
        print(f"harness bug-report: no root cause {args.id!r} in {results}{hint}", file=sys.stderr)
        return EXIT_INVALID
    root = match.iloc[0].to_dict()
    members = findings[findings["root_cause"] == args.id]
    reproducers, versions = {}, {}
    for b in root["frameworks"].split(", "):
        path = results / "reproducers" / f"{b}.parquet"
        if path.exists():
            table = read_table(path)
            found = table[table["root_cause"] == args.id]
            if not found.empty:
                reproducers[b] = found.iloc[0].to_dict()
    for case in root["cases"].split(", "):
        facts = read_metadata(results / case / "errors.parquet").get("frameworks") or {}
        for b, f in facts.items():
            versions.setdefault(
                b, ", ".join(f"{k} {v}" for k, v in (f or {}).items() if k in (b, "jaxlib"))
            )
    sys.stdout.write(bug_report(root, members, reproducers, versions))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from harness.results import ResultsError

    try:
        roots, _ = _tables(Path(args.results))
    except ResultsError as exc:
        print(f"harness bug-report: {exc}", file=sys.stderr)
        return EXIT_INVALID
    for r in roots.itertuples(index=False):
        print(f"{r.id}  [{r.expected}, severity {r.severity}, {r.members} findings]")
    return 0


def _cmd_check_statements(args: argparse.Namespace) -> int:
    from harness.causes.audit import audit
    from harness.results import ResultsError

    results = Path(args.results)
    try:
        roots, findings = _tables(results)
    except ResultsError as exc:
        print(f"harness check-statements: {exc}", file=sys.stderr)
        return EXIT_INVALID
    problems = audit(roots, findings)
    for p in problems:
        print(p)
    print(f"{len(roots)} root causes read; {len(problems)} problems")
    return 1 if problems else 0


def add_cause_commands(sub) -> None:
    """Add ``repro``, ``bug-report`` and ``check-statements`` to the command line's
    subparsers."""
    from harness.cases.schema import BACKENDS

    p = sub.add_parser(
        "repro",
        help="write each root cause's standalone reproducer per framework and the value it "
        "prints (--check: run them all again, each as its own process)",
    )
    p.add_argument("--results", default="results")
    p.add_argument("--cases", default="cases")
    p.add_argument("--backend", action="append", choices=BACKENDS, help="only this back end")
    p.add_argument("--check", action="store_true", help="run every script; exit 1 on a difference")
    p.add_argument("--config", help="study configuration YAML (the tolerances)")
    p.add_argument("--study", help="study settings as JSON, over --config (the workflow's)")
    p.set_defaults(func=_cmd_repro)

    p = sub.add_parser("bug-report", help="a root cause as a ready-to-paste report")
    p.add_argument("id", nargs="?", help="the root cause's id (results/root_causes.csv)")
    p.add_argument("--results", default="results")
    p.add_argument("--list", action="store_true", help="list the root causes' ids")
    p.set_defaults(func=lambda a: _cmd_list(a) if a.list or not a.id else _cmd_bug_report(a))

    p = sub.add_parser(
        "check-statements",
        help="read every root cause's statement against its findings' evidence "
        "(harness.causes.audit); exit 1 on a problem",
    )
    p.add_argument("--results", default="results")
    p.set_defaults(func=_cmd_check_statements)
