"""A case implementation's candidate repairs (:mod:`harness.repair.candidates`): the
seeds' stable rule and formula among them, each a valid implementation of the case file
(a copy of the case with them loads and validates), registered code left alone."""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.repair.candidates import candidates, with_candidates

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_explicit_square_s_rule_for_b_gets_the_answer_s_quotient(tmp_path):
    case = load_case(CASES / "ratio.yaml")
    found = candidates(case, "explicit_square", symbolic=False)
    parts = {c.part for c in found.found}
    # The expression (its rules kept), then one rule rewritten at a time.
    assert parts == {"expression", "gradient:a", "gradient:b"}
    stable = ex.unparse(ex.parse("dy * a / b / b", {"dy", "a", "b"}))
    (hit,) = [c for c in found.found if c.part == "gradient:b" and c.form == stable]
    # The other rule as the case wrote it; the expression unchanged.
    assert hit.mapping["gradient"]["a"] == ex.unparse(ex.parse("-dy / b", {"dy", "b"}))
    assert hit.mapping["expression"] == ex.unparse(ex.parse("-a/b", {"a", "b"}))
    assert all(c.form != ex.unparse(case.implementation("explicit_square").gradient["b"])
               for c in found.found if c.part == "gradient:b")  # fmt: skip
    assert set(found.searches) == parts and all(s.nodes for s in found.searches.values())
    # A copy of the case with the candidates is a case: it loads and validates.
    data = yaml.safe_load((CASES / "ratio.yaml").read_text())
    copy = tmp_path / "ratio_candidates.yaml"
    copy.write_text(yaml.safe_dump(with_candidates(data, found), sort_keys=False))
    loaded = load_case(copy)
    assert ex.unparse(loaded.implementation(hit.name).gradient["b"]) == stable
    names = {i.name for i in loaded.implementations}
    assert {i.name for i in case.implementations} | {c.name for c in found.found} == names


def test_explicit_square_s_symbolic_rule_for_b_is_the_answer_s_quotient(tmp_path):
    # d/db of -a/b, by the chain rule and rewritten: (-a/b)/b among the forms, the
    # seed's answer; no form takes the logarithm of a negative constant.
    case = load_case(CASES / "ratio.yaml")
    found = candidates(case, "explicit_square")
    symbolic = [c for c in found.found if c.part == "rule (symbolic, first order)"]
    stable = ex.unparse(ex.parse("dy * (-(((-a) / b) / b))", {"dy", "a", "b"}))
    names = {"dy", "a", "b"}
    assert stable in {ex.unparse(ex.parse(c.mapping["gradient"]["b"], names)) for c in symbolic}
    # A first-order rule serves reverse and forward mode: the same derivative as both.
    assert all(c.mapping["tangent"]["b"] == "dx" + c.mapping["gradient"]["b"][2:] for c in symbolic)
    assert not any("log((-1)" in c.form for c in found.found)
    nested = [c for c in found.found if c.part == "rule (symbolic, nested)"]
    assert nested and all(isinstance(c.mapping["gradient"]["b"], dict) for c in nested)
    # The copy with them loads: each a valid implementation of the case file.
    data = yaml.safe_load((CASES / "ratio.yaml").read_text())
    copy = tmp_path / "ratio_candidates.yaml"
    copy.write_text(yaml.safe_dump(with_candidates(data, found), sort_keys=False))
    loaded = {i.name for i in load_case(copy).implementations}
    assert {c.name for c in symbolic + nested} <= loaded


def test_naive_softplus_s_expression_gets_the_kernel_and_registered_code_is_left_alone():
    case = load_case(CASES / "softplus.yaml")
    found = candidates(case, "naive", per_part=4, symbolic=False)
    assert {c.part for c in found.found} == {"expression"} and len(found.found) == 4
    assert "softplus(x)" in {c.form for c in found.found}
    ratio = load_case(CASES / "ratio.yaml")
    skipped = candidates(ratio, "seed_newdiv")
    assert skipped.found == () and "registered code" in skipped.skipped[0]
