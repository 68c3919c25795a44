"""The case schema's hand-written derivatives: custom-gradient rules (nestable), forward
(tangent) rules, the case's own functions and its implementations (a part of :mod:`harness.cases.schema`)."""

from __future__ import annotations

from harness.cases.schema_parts import NAME as _NAME
from harness.cases.schema_parts import TEXT as _TEXT
from harness.cases.schema_parts import obj as _obj

__all__ = ["FUNCTION", "GRADIENT", "IMPLEMENTATION", "NESTED_PATTERNS", "RULE", "TANGENT"]

NESTED_PATTERNS = ("nested_function", "decorated_grad_fn")

RULE_REF = {"$ref": "#/$defs/rule"}
GRADIENT = {
    "type": "object",
    "propertyNames": {"pattern": _NAME},
    "additionalProperties": RULE_REF,
    "minProperties": 1,
    "description": "Custom gradient: for each input, its vector-Jacobian product as an "
    "expression of the inputs and the upstream gradient `dy`.",
}
TANGENT = {
    "type": "object",
    "propertyNames": {"pattern": _NAME},
    "additionalProperties": _TEXT,
    "minProperties": 1,
    "description": "Custom forward rule (jax.custom_jvp, torch.autograd.Function.jvp): for "
    "each input, its share of the output's tangent as an expression of the inputs and `dx`, "
    "that input's tangent; the output's tangent is the sum over the inputs given.",
}
RULE = {
    "description": "Either an expression of the inputs and `dy`, or a nested custom function "
    "{expression, gradient}: the product is then dy * F(inputs), where F has the value "
    "`expression` and its own custom gradient (the nested second-order pattern).",
    "anyOf": [
        _TEXT,
        _obj(
            {
                "expression": _TEXT,
                "gradient": GRADIENT,
                "pattern": {
                    "enum": list(NESTED_PATTERNS),
                    "description": "How the nested rule is written in TensorFlow: "
                    "`nested_function` (default), the documented `first_order_custom(x)` "
                    "whose own gradient is the second-order rule; `decorated_grad_fn`, "
                    "TensorFlow issue #34503: the gradient function itself decorated with "
                    "tf.custom_gradient as a function of dy, x captured from the enclosing "
                    "scope (the rule for x has no input to attach to).",
                },
            },
            ["expression", "gradient"],
        ),
    ],
}

FUNCTION = _obj(
    {
        "args": {
            "type": "array",
            "items": {"type": "string", "pattern": _NAME},
            "minItems": 1,
            "uniqueItems": True,
            "description": "Its parameters (names local to the function).",
        },
        "expression": {**_TEXT, "description": "Its value, in its parameters."},
        "gradient": {
            **GRADIENT,
            "description": "Optional custom gradient: for each parameter, its vector-Jacobian "
            "product in the parameters and `dy` (nestable as in implementations).",
        },
        "tangent": {
            **TANGENT,
            "description": "Optional custom forward rule: for each parameter, its share of the "
            "tangent in the parameters and `dx` (that parameter's tangent).",
        },
        "description": _TEXT,
    },
    ["args", "expression"],
    description="A function the case's expressions may call, e.g. foo(foo(foo(x))).",
)

IMPLEMENTATION = _obj(
    {
        "expression": {**_TEXT, "description": "The function as this implementation writes it."},
        "gradient": GRADIENT,
        "tangent": TANGENT,
        "registered": {
            **_TEXT,
            "description": "The name of a Python implementation registered in the harness "
            "package (`harness implementations` lists them).",
        },
        "description": _TEXT,
    },
    description="Exactly one of `expression` (optionally with `gradient` and/or `tangent`) "
    "or `registered`.",
)
