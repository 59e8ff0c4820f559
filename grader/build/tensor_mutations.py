"""Mutation operators particular to tensor code, in cosmic-ray's operator interface.

cosmic-ray (`cosmic_ray.operators`) has the generic ones: arithmetic, comparisons, booleans,
numbers ±1, loops with no iteration. What it has not is what a student gets wrong in the
lesson's code: the dimension a reduction runs over, `keepdim`, a slice bound off by one, the
shift by one between inputs and targets, `view`'s sizes or a shape's names in the wrong
order, a call left out (`model.eval()`, `optimizer.zero_grad()`), `torch.no_grad()` left
out, a `.clone()` left out, a keyword argument left out (`generator=`). Each operator here
is a cosmic-ray `Operator` over parso's tree, so `cosmic_ray.mutating.mutate_code` applies
it like the library's own:

    >>> from cosmic_ray.mutating import mutate_code
    >>> mutate_code("y = x.sum(dim=-1)\\n", ChangeDim(), 0)
    'y = x.sum(dim=0)\\n'

An operator names, for a node, the node's replacement texts (`rewrites`); each is one
mutant. The text replaces the node's code after its prefix (the whitespace and comments
before it), so the layout around a mutation stays as written and lines keep their numbers.
"""

from __future__ import annotations

import parso
from cosmic_ray.operators.operator import Example, Operator

# Calls whose integer arguments are dimensions (`x.sum(-1)`, `torch.cat(xs, 1)`,
# `F.softmax(z, dim=-1)`, `x.transpose(0, 1)`). Only called as attributes: Python's own
# `max(a, 2)` is not a tensor reduction.
DIM_CALLS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "std", "var", "norm",
    "softmax", "log_softmax", "logsumexp", "cumsum", "cumprod", "cat", "concat", "stack",
    "squeeze", "unsqueeze", "gather", "transpose", "flatten",
})
DIM_KEYWORDS = frozenset({"dim", "dim0", "dim1"})
DIMS = (-1, 0, 1)  # what a dimension becomes: the last, the first, the second

# Calls that return their tensor in another form; left out, the code often still runs.
DROPPABLE_METHODS = frozenset({"clone", "detach", "contiguous", "float", "long", "item"})


class TensorOperator(Operator):
    """An operator given by the replacement texts of a node (one mutant each)."""

    def rewrites(self, node) -> list[str]:
        raise NotImplementedError

    def mutation_positions(self, node):
        for _ in self.rewrites(node):
            yield node.start_pos, node.end_pos

    def mutate(self, node, index):
        return parso.parse(node.get_first_leaf().prefix + self.rewrites(node)[index])


# --------------------------------------------------------------------------- reading parso's tree

def text(node, replace: dict | None = None) -> str:
    """The node's code without its own prefix, with the subtrees in `replace` (by id) written
    as given (each keeps its prefix; None leaves a subtree out with its prefix).

        a[i:j]      with j replaced by "j + 1"            ->  "a[i:j + 1]"
        f(a, k=1)   with "," and "k=1" replaced by None   ->  "f(a)"
    """
    replace = replace or {}
    if id(node) in replace:
        return replace[id(node)] or ""
    if not hasattr(node, "children"):
        return node.value
    parts = []
    for k, child in enumerate(node.children):
        if replace.get(id(child), "") is None:
            continue
        if k:
            parts.append(child.get_first_leaf().prefix)
        parts.append(text(child, replace))
    return "".join(parts)


def int_literal(node) -> int | None:
    """The value of `3` or `-1`; None for anything else."""
    if node.type == "number" and node.value.isdigit():
        return int(node.value)
    if node.type == "factor" and node.children[0].value == "-" and node.children[1].type == "number":
        inner = int_literal(node.children[1])
        return None if inner is None else -inner
    return None


def is_literal(node) -> bool:
    """A number or a string, negated or not: cosmic-ray's NumberReplacer owns the numbers."""
    if node.type == "factor":
        return is_literal(node.children[1])
    return node.type in ("number", "string", "strings", "fstring")


def call_name(trailer) -> str | None:
    """`"sum"` for the trailer `(…)` of `x.sum(…)`; None when it is not an attribute's call."""
    if trailer.type != "trailer" or trailer.children[0].value != "(":
        return None
    before = trailer.get_previous_sibling()
    if before is None or before.type != "trailer" or before.children[0].value != ".":
        return None
    return before.children[1].value


def arguments(trailer) -> list:
    """The argument nodes of a call's trailer `(a, b, dim=1)`, in order."""
    if len(trailer.children) != 3:
        return []
    inner = trailer.children[1]
    if inner.type == "arglist":
        return [c for c in inner.children if c.type != "operator"]
    return [inner]


def is_keyword_argument(node) -> bool:
    return node.type == "argument" and len(node.children) == 3 and node.children[1].value == "="


def is_positional(node) -> bool:
    return node.type != "argument" and not (node.type == "operator" or node.get_first_leaf().value in ("*", "**"))


def enclosing_call(node):
    """The call trailer an argument node belongs to, or None."""
    parent = node.parent
    if parent is not None and parent.type == "arglist":
        parent = parent.parent
    return parent if parent is not None and parent.type == "trailer" and parent.children[0].value == "(" else None


# --------------------------------------------------------------------------- the operators

class ChangeDim(TensorOperator):
    """A dimension given as a number becomes another of the last, the first, the second.

        top = scores.max(dim=-1, keepdim=True)  ->  scores.max(dim=0, …), scores.max(dim=1, …)
        torch.cat((idx, nxt), dim=1)            ->  dim=-1 (the same for 2-D: an equivalent mutant), dim=0
        picked = scores.gather(-1, i)           ->  gather(0, i), gather(1, i)
    """

    def rewrites(self, node):
        value = int_literal(node)
        if value is None or node.type == "number" and node.parent.type == "factor":
            return []
        holder = node.parent if node.parent.type == "argument" else node
        if holder is not node and not (is_keyword_argument(holder) and holder.children[0].value in DIM_KEYWORDS):
            return []
        call = enclosing_call(holder)
        if call is None or call_name(call) not in DIM_CALLS:
            return []
        return [str(d) for d in DIMS if d != value]

    @classmethod
    def examples(cls):
        return (Example("y = x.sum(dim=-1)", "y = x.sum(dim=0)"),
                Example("y = x.sum(dim=-1)", "y = x.sum(dim=1)", occurrence=1),
                Example("y = torch.stack(rows, 1)", "y = torch.stack(rows, -1)"),
                Example("y = x.transpose(0, 1)", "y = x.transpose(0, -1)", occurrence=2))


class FlipKeepdim(TensorOperator):
    """`keepdim=True` becomes `keepdim=False` and the other way round.

        top = scores.max(dim=-1, keepdim=True).values  ->  scores.max(dim=-1, keepdim=False).values
    """

    def rewrites(self, node):
        if not (is_keyword_argument(node) and node.children[0].value == "keepdim"):
            return []
        value = node.children[2]
        if value.type != "keyword" or value.value not in ("True", "False"):
            return []
        flipped = "False" if value.value == "True" else "True"
        return [text(node, {id(value): flipped})]

    @classmethod
    def examples(cls):
        return (Example("s = e.sum(dim=-1, keepdim=True)", "s = e.sum(dim=-1, keepdim=False)"),)


def _subscripts(trailer) -> list:
    """The parts of a subscript `[a, b:c]`: `[a, b:c]` -> [a, (b:c)]."""
    inner = trailer.children[1]
    if inner.type == "subscriptlist":
        return [c for c in inner.children if not (c.type == "operator" and c.value == ",")]
    return [inner]


def _in_subscript(node) -> bool:
    """A slice bound (`j` in `a[i:j]`) or a whole index (`t` in `a[t]`, `a[:, t]`)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "subscript":
        return True
    if parent.type == "subscriptlist":
        parent = parent.parent
    return parent.type == "trailer" and parent.children[0].value == "["


# The expressions `+ 1` can follow without parentheses: it binds to the whole of them.
_BINDS_TIGHTER = frozenset({"name", "atom", "atom_expr", "power", "arith_expr", "term", "factor"})


class OffByOne(TensorOperator):
    """A slice bound or an index that is not a literal moves by one, either way.

        nxt = seq[s + 1:s + n + 1]  ->  seq[s + 1 + 1:…], seq[s + 1 - 1:…], seq[…:s + n + 1 + 1], …
        v = int(row[t])             ->  int(row[t + 1]), int(row[t - 1])

    Literal bounds (`[:-1]`, `[1:]`, `[:, -1, :]`) are NumberReplacer's (cosmic-ray) and
    ShiftByOne's; boolean masks (`labels[labels == pad]`) and string keys are left alone.
    """

    def rewrites(self, node):
        if node.type == "operator" or node.type in ("subscript", "sliceop") or not _in_subscript(node):
            return []
        if is_literal(node) or node.type in ("comparison", "not_test", "and_test", "or_test"):
            return []
        code = text(node)
        if node.type not in _BINDS_TIGHTER:
            code = f"({code})"
        return [f"{code} + 1", f"{code} - 1"]

    @classmethod
    def examples(cls):
        return (Example("x = a[i:i + n]", "x = a[i + 1:i + n]"),
                Example("x = a[i:i + n]", "x = a[i:i + n - 1]", occurrence=3),
                Example("v = y[t]", "v = y[t - 1]", occurrence=1))


class ShiftByOne(TensorOperator):
    """The shift between inputs and targets: `[:-1]` and `[1:]` swapped, `[:-1]` dropped.

        head = seq[:-1]     ->  seq[1:], seq[:]
        tail = rows[:, 1:]  ->  rows[:, :-1]

    (`[1:]` dropped is NumberReplacer's `[0:]`.)
    """

    def rewrites(self, node):
        if node.type != "subscript":
            return []
        code = text(node).replace(" ", "")
        if code == ":-1":
            return ["1:", ":"]
        if code == "1:":
            return [":-1"]
        return []

    @classmethod
    def examples(cls):
        return (Example("x = t[:-1]", "x = t[1:]"),
                Example("x = t[:-1]", "x = t[:]", occurrence=1),
                Example("y = t[:, 1:]", "y = t[:, :-1]"))


class DropKeyword(TensorOperator):
    """A keyword argument after the first argument is left out: the callee's default instead.

        sample(data, n, generator=rng)   ->  sample(data, n)
        w.normal_(mean=0.0, std=s)       ->  w.normal_(mean=0.0)

    (`keepdim` is FlipKeepdim's: left out, it is `keepdim=False`.)
    """

    def rewrites(self, node):
        if node.type != "trailer" or node.children[0].value != "(" or node.children[1].type != "arglist":
            return []
        found = []
        children = node.children[1].children
        for before, argument in zip(children, children[1:]):
            if is_keyword_argument(argument) and argument.children[0].value != "keepdim":
                found.append(text(node, {id(before): None, id(argument): None}))
        return found

    @classmethod
    def examples(cls):
        return (Example("x = get_batch(d, 8, generator=g)", "x = get_batch(d, 8)"),
                Example("w.normal_(mean=0.0, std=s)", "w.normal_(mean=0.0)"))


class SwapArguments(TensorOperator):
    """Two neighbouring positional arguments of a call change places.

        flat = x.view(B * T, V)      ->  x.view(V, B * T)
        pick(table, rows, cols)      ->  pick(rows, table, cols), pick(table, cols, rows)
    """

    def rewrites(self, node):
        if node.type != "trailer" or node.children[0].value != "(":
            return []
        found = []
        args = arguments(node)
        for a, b in zip(args, args[1:]):
            if is_positional(a) and is_positional(b) and text(a) != text(b):
                found.append(text(node, {id(a): text(b), id(b): text(a)}))
        return found

    @classmethod
    def examples(cls):
        return (Example("f = x.view(B * T, V)", "f = x.view(V, B * T)"),
                Example("g(a, b, c)", "g(a, c, b)", occurrence=1))


class SwapShape(TensorOperator):
    """Two neighbouring names read from a shape change places.

        B, T, C = x.shape  ->  T, B, C = x.shape;  B, C, T = x.shape
    """

    def rewrites(self, node):
        if node.type != "expr_stmt" or len(node.children) != 3 or node.children[0].type != "testlist_star_expr":
            return []
        value = node.children[2]
        last = value.children[-1] if value.type == "atom_expr" else None
        reads_shape = last is not None and (
            last.type == "trailer" and last.children[0].value == "." and last.children[1].value == "shape"
            or call_name(last) == "size")
        names = [c for c in node.children[0].children if c.type == "name"]
        if not reads_shape or len(names) != len(node.children[0].children[::2]):
            return []
        return [text(node, {id(a): b.value, id(b): a.value}) for a, b in zip(names, names[1:])]

    @classmethod
    def examples(cls):
        return (Example("B, T, C = x.shape", "T, B, C = x.shape"),
                Example("B, T, C = x.shape", "B, C, T = x.shape", occurrence=1))


class DropCall(TensorOperator):
    """A statement that is only a call is left out (`pass` in its place).

        model.eval()       ->  pass
        opt.zero_grad()    ->  pass
    """

    def rewrites(self, node):
        if node.type != "atom_expr" or node.parent.type != "simple_stmt":
            return []
        last = node.children[-1]
        return ["pass"] if last.type == "trailer" and last.children[0].value == "(" else []

    @classmethod
    def examples(cls):
        return (Example("def f(model):\n    model.eval()\n    return 1\n",
                        "def f(model):\n    pass\n    return 1\n"),)


class DropContext(TensorOperator):
    """A `with` block without `as` runs without its context manager.

        with torch.no_grad():   ->  if True:
            …                           …
    """

    def rewrites(self, node):
        if node.type != "with_stmt" or len(node.children) != 4 or node.children[1].type == "with_item":
            return []
        keyword, manager = node.children[0], node.children[1]
        return [text(node, {id(keyword): "if", id(manager): "True"})]

    @classmethod
    def examples(cls):
        return (Example("with torch.no_grad():\n    y = f(x)\n", "if True:\n    y = f(x)\n"),)


class DropMethod(TensorOperator):
    """A `.clone()`, `.detach()`, `.float()`, `.item()` … with no arguments is left out.

        kept = rows[:, 1:].clone()  ->  kept = rows[:, 1:]
    """

    def rewrites(self, node):
        if node.type not in ("atom_expr", "power"):
            return []
        trailers = node.children[1:]
        found = []
        for dot, call in zip(trailers, trailers[1:]):
            if (dot.type == "trailer" and dot.children[0].value == "." and dot.children[1].value in DROPPABLE_METHODS
                    and call_name(call) is not None and len(call.children) == 2):
                found.append(text(node, {id(dot): "", id(call): ""}))
        return found

    @classmethod
    def examples(cls):
        return (Example("y = t[:, 1:].clone()", "y = t[:, 1:]"),
                Example("v = loss.item()", "v = loss"))


OPERATORS = (ChangeDim, FlipKeepdim, OffByOne, ShiftByOne, DropKeyword, SwapArguments, SwapShape, DropCall,
             DropContext, DropMethod)
