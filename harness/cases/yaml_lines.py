"""Safe YAML loading that remembers where every key and value came from.

Case files are data: they are read with PyYAML's *safe* composer only (no Python tags,
no object construction), and each mapping key and sequence item is recorded with its
1-based line so that every validation message can say ``file:line: key: message``.

Two deliberate departures from PyYAML's YAML 1.1 defaults:

- ``1e-3`` and ``1E+38`` are numbers (YAML 1.1 wants ``1.0e-3``; people write ``1e-45``);
- a key repeated in one mapping is an error, not a silent overwrite.

The text is parsed by libyaml (PyYAML's C parser: the full census's 62 case files, read
each time the workflow is parsed, load in 0.18 s rather than 1.0 s) where PyYAML was
built with it. A text libyaml refuses is parsed again by PyYAML's own parser,
which raises the error, with the wording and line every message here is built from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["Located", "YamlProblem", "load"]

Path = tuple[str | int, ...]

_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _Loader(yaml.SafeLoader):
    """SafeLoader whose float resolver also accepts exponent-only forms like ``1e-3``."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:float"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))

if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.CSafeLoader):
        """libyaml's parser with the same resolvers (the float one above)."""

    _CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
    _LOADERS: tuple[type, ...] = (_CLoader, _Loader)
else:  # pragma: no cover - a PyYAML built without libyaml
    _LOADERS = (_Loader,)


class YamlProblem(ValueError):
    """The file is not loadable YAML; ``line`` is 1-based (0 if unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Located:
    """Loaded data plus the line of each path (``("implementations", "naive")`` -> 12)."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    problems: list[tuple[int, Path, str]] = field(default_factory=list)

    def line(self, path: Path) -> int:
        """The line of ``path``, or of its nearest located ancestor (1 if none)."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)


def load(text: str) -> Located:
    """Parse YAML text into plain Python data with line numbers.

    Raises
    ------
    YamlProblem
        For a syntax error (with its line) or a construct that is not plain data.
    """
    if len(_LOADERS) > 1:
        fast = _LOADERS[0](text)
        try:
            node = fast.get_single_node()
        except (yaml.YAMLError, RecursionError):
            pass  # PyYAML's parser below says what is wrong, as it always has
        else:
            return _located(node, fast)
        finally:
            fast.dispose()
    loader = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        line = _mark_line(exc.problem_mark or exc.context_mark)
        raise YamlProblem(_syntax_message(exc), line) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise YamlProblem(
            f"YAML error: unacceptable character #x{exc.character:04x}: {exc.reason}", line
        ) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"YAML error: {exc}") from None
    except RecursionError:
        raise YamlProblem(f"YAML nested too deeply (more than {_MAX_DEPTH} levels)") from None
    finally:
        if loader is not None:
            loader.dispose()
    return _located(node, loader)


def _located(node: yaml.Node | None, loader) -> Located:
    located = Located(data=None)
    if node is None:
        return located
    located.lines[()] = node.start_mark.line + 1
    located.data = _build(node, (), located, loader)
    return located


def _mark_line(mark: yaml.Mark | None) -> int:
    return mark.line + 1 if mark is not None else 0


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's problem, plus where the construct it was reading began and a hint.

    The parser notices an unclosed bracket or a misindented key only where the next
    token fails to fit, often a line later; naming the start of the enclosing construct
    points at the real mistake.
    """
    message = f"YAML syntax error: {exc.problem or exc}"
    context_line = _mark_line(exc.context_mark)
    if exc.context and (exc.problem or "").startswith("but "):
        # "expected a single document in the stream" + "but found another document"
        message = f"YAML syntax error: {exc.context}, {exc.problem}"
    elif exc.context and context_line:
        message += f" ({exc.context} started on line {context_line})"
    problem = exc.problem or ""
    if "'\\t'" in problem:
        message += " (hint: indent with spaces, not tabs)"
    elif "<block" in problem or "mapping values are not allowed" in problem:
        message += " (hint: check the indentation, and quote values that contain ': ')"
    elif "flow" in (exc.context or ""):
        message += " (hint: a bracket or brace is not closed)"
    return message


_PLAIN_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("map", "seq", "str", "int", "float", "bool", "null")
}


#: Limits on what one file may expand to. Aliases (``*name``) share nodes, so a small
#: file can describe an exponentially large document ("billion laughs"); no case needs
#: anything near these.
_MAX_NODES = 100_000
_MAX_DEPTH = 64


def _build(
    node: yaml.Node,
    path: Path,
    located: Located,
    loader: _Loader,
    ancestors: tuple[int, ...] = (),
    budget: list[int] | None = None,
) -> Any:
    line = node.start_mark.line + 1
    budget = budget if budget is not None else [_MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlProblem(f"the document expands to more than {_MAX_NODES} values (aliases?)", line)
    if id(node) in ancestors:
        raise YamlProblem("a YAML alias refers to a node that contains it (recursive alias)", line)
    if len(ancestors) >= _MAX_DEPTH:
        raise YamlProblem(f"nested deeper than {_MAX_DEPTH} levels", line)
    if node.tag not in _PLAIN_TAGS:
        # Explicit tags (!!python/object, !!binary, custom !tags) are never case data.
        located.problems.append((line, path, f"YAML tag {node.tag} is not allowed"))
        return None
    inner = (*ancestors, id(node))
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem("a mapping key must be a plain scalar", key_line)
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem("YAML merge keys (<<) are not supported", key_line)
            if key_node.tag not in _PLAIN_TAGS:
                raise YamlProblem(f"YAML tag {key_node.tag} is not allowed on a key", key_line)
            key = _scalar(key_node, path, located, loader)
            if not isinstance(key, (str, int, float, bool)):
                raise YamlProblem(f"unsupported mapping key {key!r}", key_line)
            key = str(key) if not isinstance(key, str) else key
            sub = (*path, key)
            if key in out:
                located.problems.append((key_line, sub, f"duplicate key {key!r}"))
                continue
            located.lines[sub] = key_line
            out[key] = _build(value_node, sub, located, loader, inner, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            sub = (*path, i)
            located.lines[sub] = item.start_mark.line + 1
            items.append(_build(item, sub, located, loader, inner, budget))
        return items
    return _scalar(node, path, located, loader)


def _scalar(node: yaml.Node, path: Path, located: Located, loader: _Loader) -> Any:
    line = node.start_mark.line + 1
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        located.problems.append((line, path, f"unsupported YAML value: {exc.problem}"))
        return None
    except Exception:
        # An explicit tag on text that is not of that type (`!!int abc`, `!!float ''`):
        # PyYAML's constructors then fail with whatever the conversion raises.
        tag = node.tag.rsplit(":", 1)[-1]
        located.problems.append((line, path, f"{node.value!r} is not a valid {tag}"))
        return None
    if not isinstance(value, (str, int, float, bool, type(None))):
        # Timestamps, binary and sets are not case data.
        located.problems.append((line, path, f"unsupported YAML value ({type(value).__name__})"))
        return None
    return value
