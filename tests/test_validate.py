"""``harness validate`` on the malformed corpus, the real cases and the template.

Every file in ``tests/malformed/`` is a small, otherwise realistic case with one problem
(a few have several). Its first line says what the validator must report::

    # expect: <line> <dotted key or (file)> <substring of the message>

The corpus is validated in one subprocess (the command users run), from an empty
working directory, so the tests also see that nothing is written and that no Python
tag is ever executed. Each file is also validated alone, in-process, to check its own
exit status without paying for one interpreter per file.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import cli
from harness.cases.load import validate_paths
from harness.cases.schema import CASE_SCHEMA
from harness.cases.yaml_lines import load as yaml_load

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "malformed"
FILES = sorted(CORPUS.glob("*.yaml"))
TEMPLATE = REPO / "cases" / "templates" / "example.yaml"
HEADER = re.compile(r"^# expect: (?P<line>\d+) (?P<key>\S+) (?P<text>.+)$")
PROBLEM = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<key>\S+): (?P<message>.*)$")


def _expected(path: Path) -> tuple[int, str, str]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = HEADER.match(first)
    assert match, f"{path.name}: first line must be '# expect: LINE KEY SUBSTRING'"
    return int(match["line"]), match["key"], match["text"]


def _validate(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "harness", "validate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _problems(stderr: str) -> list[dict[str, str]]:
    return [m.groupdict() for m in map(PROBLEM.match, stderr.splitlines()) if m]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _has_problem(problems: list[dict[str, str]], file: str, line: int, key: str, text: str):
    return any(
        p["file"] == file and p["line"] == str(line) and p["key"] == key and text in p["message"]
        for p in problems
    )


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory):
    """The whole corpus, copied into an empty directory and validated in one call."""
    work = tmp_path_factory.mktemp("corpus")
    for path in FILES:
        shutil.copy(path, work / path.name)
    before = _tree(work)
    result = _validate([p.name for p in FILES], work)
    return result, _problems(result.stderr), before, _tree(work), work


def test_corpus_is_large_enough():
    assert len(FILES) >= 34
    for path in FILES:
        assert path.stem[0].isalpha(), f"{path.name}: a case id starts with a letter"
        _expected(path)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_malformed_file(path: Path, corpus_run, tmp_path: Path, monkeypatch, capsys):
    line, key, text = _expected(path)
    result, problems, before, after, _ = corpus_run
    assert result.returncode == 2
    assert _has_problem(problems, path.name, line, key, text), (
        f"expected '{path.name}:{line}: {key}: ...{text}...' in:\n"
        + "\n".join(ln for ln in result.stderr.splitlines() if ln.startswith(path.name + ":"))
    )
    assert before == after, "validate must write nothing"

    # Alone, the file fails on its own, with the same report, and writes nothing either.
    shutil.copy(path, tmp_path / path.name)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["validate", path.name]) == 2
    alone = _problems(capsys.readouterr().err)
    assert alone and all(p["file"] == path.name for p in alone)
    assert _has_problem(alone, path.name, line, key, text)
    assert not (tmp_path / "results").exists()
    assert _tree(tmp_path) == {path.name}


def test_corpus_reports_every_file_at_once(corpus_run):
    result, problems, _, _, work = corpus_run
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert {p["file"] for p in problems} == {p.name for p in FILES}
    assert result.stderr.splitlines()[-1] == f"{len(problems)} problem(s) in {len(FILES)} file(s)"
    # Every stderr line is a problem or the closing count: nothing else leaks out.
    assert len(result.stderr.splitlines()) == len(problems) + 1
    assert not (work / "results").exists()
    assert not (work / "pwned").exists()


def test_three_independent_problems_are_all_reported(corpus_run):
    _, problems, _, _, _ = corpus_run
    found = [(p["line"], p["key"]) for p in problems if p["file"] == "m45_three_problems.yaml"]
    assert found == [
        ("7", "inputs.x.log.count"),
        ("16", "implementations.scaled.expression"),
        ("17", "dtypes[1]"),
    ]


def test_nested_rule_reports_both_problems(corpus_run):
    _, problems, _, _, _ = corpus_run
    keys = [p["key"] for p in problems if p["file"] == "m46_nested_rule_problems.yaml"]
    assert keys == [
        "implementations.nested.gradient.x.expression",
        "implementations.nested.gradient.x.gradient.x",
    ]


_ALLOWED = {
    "m05_unknown_top_level_key.yaml": CASE_SCHEMA["properties"],
    "m06_unknown_key_in_input.yaml": CASE_SCHEMA["properties"]["inputs"]["additionalProperties"][
        "properties"
    ]["log"]["properties"],
    "m07_unknown_key_in_implementation.yaml": CASE_SCHEMA["properties"]["implementations"][
        "additionalProperties"
    ]["properties"],
    "m08_unknown_key_in_expectation.yaml": CASE_SCHEMA["properties"]["expectations"]["items"][
        "properties"
    ],
    "m54_unknown_key_at_input_level.yaml": CASE_SCHEMA["properties"]["inputs"][
        "additionalProperties"
    ]["properties"],
}


@pytest.mark.parametrize("name", sorted(_ALLOWED))
def test_unknown_key_hint_lists_allowed_keys(name: str, corpus_run):
    _, problems, _, _, _ = corpus_run
    (problem,) = [
        p for p in problems if p["file"] == name and p["message"].startswith("unknown key")
    ]
    hint = re.search(r"allowed: ([^)]*)\)$", problem["message"])
    assert hint, problem["message"]
    assert hint[1].split(", ") == sorted(_ALLOWED[name])


def test_misspelt_key_suggests_the_right_one(corpus_run):
    _, problems, _, _, _ = corpus_run
    (problem,) = [p for p in problems if p["key"] == "implementations.custom.gradiant"]
    assert "did you mean 'gradient'?" in problem["message"]


def test_repository_cases_are_valid(tmp_path: Path):
    cases = sorted(str(p) for p in (REPO / "cases").glob("*.yaml"))
    assert cases
    result = _validate(cases, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert f"{len(cases)} case file(s) valid" in result.stdout
    assert _tree(tmp_path) == set()


def test_template_is_valid(tmp_path: Path):
    result = _validate([str(TEMPLATE)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert _tree(tmp_path) == set()


def test_template_sets_every_top_level_key():
    text = TEMPLATE.read_text(encoding="utf-8")
    for key in CASE_SCHEMA["properties"]:
        assert re.search(rf"^{key}:", text, re.M), f"the template does not show {key!r}"


# -- no input makes the validator crash --------------------------------------------------

_TEMPLATE_DATA = yaml_load(TEMPLATE.read_text(encoding="utf-8")).data
_JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 10**6),
        st.floats(),
        st.sampled_from(["x", "a", "b", "ab", "dy", "exp(a)", "float32", "reverse", "log", ""]),
        st.text(max_size=10),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["log", "tie", "from", "expression", "zz"]), inner, max_size=3
        ),
    ),
    max_leaves=6,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


_TEMPLATE_PATHS = [p for p in _paths(_TEMPLATE_DATA) if p]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_TEMPLATE_PATHS), _JSONISH), min_size=1, max_size=3))
def test_mutated_cases_never_crash_the_validator(edits):
    data = copy.deepcopy(_TEMPLATE_DATA)
    for path, value in edits:
        parent = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced this path's parent
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "mutated.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        cases, problems = validate_paths([path])
    assert len(cases) + bool(problems) == 1
    for p in problems:
        assert p.file == str(path) and p.line >= 1 and p.message


_TRICKY = [
    "a: 1e-3\nb: -0.0\nc: .nan\nd: -.inf\ne: 0x1A\nf: 1_000\ng: '1e-3'\nh: 1E+38\n",
    "x: [1, 2\ny: 3\n",  # an unclosed bracket
    "a:\n\tb: 1\n",  # a tab
    "a: 1\na: 2\n",  # a repeated key
    "a: &x [1, *x]\n",  # a recursive alias
    "a: !!python/object:os.system ls\n",
    "a: !!int abc\n",
    "a: 2001-12-14\nb: !!binary aGk=\n",
    "--- 1\n--- 2\n",
    "\ufeffa: b\n",
    "a: b: c\n",
    "[" * 70 + "]" * 70 + "\n",  # nested deeper than the limit
    "? [1, 2]\n: x\n",
    "",
    "# only a comment\n",
]


def _read_both(text: str, monkeypatch) -> tuple:
    """``text`` read by libyaml (the default path) and by PyYAML's own parser alone."""
    from harness.cases import yaml_lines

    def read():
        try:
            got = yaml_lines.load(text)
        except yaml_lines.YamlProblem as exc:
            return ("problem", exc.message, exc.line)
        # repr tells -0.0 from 0.0; a NaN is the same text either way.
        return (repr(got.data), got.lines, got.problems)

    assert len(yaml_lines._LOADERS) == 2, "PyYAML here was built with libyaml"
    fast = read()
    with monkeypatch.context() as m:
        m.setattr(yaml_lines, "_LOADERS", (yaml_lines._Loader,))
        slow = read()
    return fast, slow


@pytest.mark.parametrize("text", _TRICKY, ids=range(len(_TRICKY)))
def test_libyaml_reads_a_tricky_text_as_pyyaml_does(text, monkeypatch):
    """The case files are parsed by libyaml, ten times faster; PyYAML's own parser is the
    reference it must agree with: the same data, lines and problems, or the same error
    message at the same line."""
    fast, slow = _read_both(text, monkeypatch)
    assert fast == slow


def test_libyaml_reads_every_case_file_as_pyyaml_does(tmp_path, monkeypatch):
    """The malformed corpus, the repository's cases and template, the configuration and
    the census's generated case files (their long lists of floats, printed by repr)."""
    from harness.census.cases import write_cases

    census = write_cases(tmp_path, ["float32", "float64"], 24, ["softplus", "pow", "lgamma"])
    paths = [*FILES, *REPO.glob("cases/**/*.yaml"), REPO / "config" / "study.yaml", *census]
    assert len(census) >= 9 and len(paths) > 60
    for path in paths:
        fast, slow = _read_both(path.read_text(encoding="utf-8"), monkeypatch)
        assert fast == slow, path
