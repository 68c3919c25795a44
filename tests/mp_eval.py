"""An expression of the case language evaluated by mpmath's own functions, walking Python's
AST: the tests' independent evaluator (the operator table's functions written from their
definitions, not from the harness's code)."""

from __future__ import annotations

import ast
import operator

import mpmath

#: The operator table's functions from mpmath's own (their definitions, not the harness's).
_MP = {
    "exp": mpmath.exp,
    "log": mpmath.log,
    "log1p": mpmath.log1p,
    "expm1": mpmath.expm1,
    "sqrt": mpmath.sqrt,
    "abs": abs,
    "tanh": mpmath.tanh,
    "square": lambda x: x * x,
    "reciprocal": lambda x: 1 / x,
    "maximum": max,
    "hypot": mpmath.hypot,
    "softplus": lambda x: mpmath.log1p(mpmath.exp(x)),
    "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
    "log_sigmoid": lambda x: -mpmath.log1p(mpmath.exp(-x)),
    "logaddexp": lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b)),
    "xlogy": lambda x, y: x * mpmath.log(y),
    "xlog1py": lambda x, y: x * mpmath.log1p(y),
    "exp2": lambda x: mpmath.mpf(2) ** x,
    "rsqrt": lambda x: 1 / mpmath.sqrt(x),
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "atan": mpmath.atan,
    "asinh": mpmath.asinh,
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
            ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}  # fmt: skip
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}  # fmt: skip


def mp_value(text: str, point: dict):
    """``text`` evaluated by mpmath over ``point`` (the test's own walk of Python's AST)."""

    def go(n):
        if isinstance(n, ast.Expression):
            return go(n.body)
        if isinstance(n, ast.Name):
            return mpmath.pi if n.id == "pi" and "pi" not in point else point[n.id]
        if isinstance(n, ast.Compare):
            return _COMPARE[type(n.ops[0])](go(n.left), go(n.comparators[0]))
        if isinstance(n, ast.Call) and n.func.id == "where":
            cond, then, otherwise = n.args
            return go(then) if go(cond) else go(otherwise)
        if isinstance(n, ast.Constant):
            return mpmath.mpf(n.value)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -go(n.operand)
        if isinstance(n, ast.BinOp):
            return _BINARY[type(n.op)](go(n.left), go(n.right))
        if isinstance(n, ast.Call):
            return _MP[n.func.id](*(go(a) for a in n.args))
        raise TypeError(ast.dump(n))

    return go(ast.parse(text, mode="eval"))
