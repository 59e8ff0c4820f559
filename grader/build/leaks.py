"""Find the reference's code and the hand answers in a folder, however they are hidden.

`grade release` runs this on every file of the built release and refuses to finish when it
finds anything; the tests run it too. A solution function's body counts as found when it is
in a file as code (the same syntax tree, or the same tree with every name renamed), as text
(its code lines in order), when any one of its lines is (an answer line: a line of a
solution body long enough to be the answer rather than `return x, y`, and not given to the
student on purpose, by a stub's text or an exercise's hint ladder, whose last level is the fixes;
compared without white space, so a probe or a sentence of the README that quotes it is
found), or inside a blob that decodes to any of these: a string or bytes
constant of a Python file, or a whole file, decoded as base64 / base85 / ascii85 / base32 /
hex and decompressed with zlib / gzip / bz2 / lzma, up to three layers deep (the recorded
answers, `grader/answers.bin`, are decompressed and read with the kit's codec, a notebook
as JSON, and every string in them is searched). Bytecode is searched as bytecode: a `.pyc`
file's code objects are compared with each solution function compiled here.

The same search refuses the hand answers (grader.build.hand_answers: ANSWER_PARAMS and
the like) wherever they can be read: in a text, a dict literal, or decoded data; a release
holds them sealed (grader.judge.sealed).

    >>> leaks = find_solution_leaks(course, Path("/tmp/release"))
    >>> leaks  # [] for a clean release
    ['grader/pieces/get_batch.py:get_batch has the body of solutions/ex08_get_batch.py:get_batch']
"""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import gzip
import lzma
import marshal
import re
import types
import zlib
from dataclasses import dataclass
from pathlib import Path

from grader.build.hand_answers import HandAnswers, hand_answers
from grader.model.course import Course
from grader.student.hints import ladder

MIN_BLOB = 24  # shorter constants cannot hold a function body once encoded
MAX_DEPTH = 3  # layers of encoding / compression undone
MIN_RENAMED_STATEMENTS = 3  # a renamed-tree match needs a body this big (one line matches too much)
MIN_ANSWER_LINE = 24  # characters of a solution line without white space: shorter ones (`return x, y`) are no answer


@dataclass(frozen=True)
class Fingerprint:
    """One solution function: where it is, its body as a tree, renamed, as lines, as bytecode."""

    where: str
    dump: str
    renamed: str | None
    lines: tuple[str, ...]
    code: bytes | None


# --------------------------------------------------------------------------- fingerprints


def body_without_docstring(func) -> list[ast.stmt]:
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def is_stub_body(body: list[ast.stmt]) -> bool:
    return not body or all(isinstance(s, (ast.Raise, ast.Pass)) or
                           (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and
                            isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "__init__")
                           for s in body)


def functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def norm_lines(text: str) -> list[str]:
    """Code lines without indentation, comments or blank lines (for a text search)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(re.sub(r"\s+", " ", line))
    return out


class _Rename(ast.NodeTransformer):
    """Every name, argument and attribute renamed by order of first use: `x, y = f(a)` and
    `p, q = g(b)` become the same tree."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=self._new(node.id), ctx=node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg=self._new(node.arg), annotation=None), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = self._new(node.attr)
        return node


def _statements(body: list[ast.stmt]) -> int:
    return sum(1 for s in body for n in ast.walk(s) if isinstance(n, ast.stmt))


def _renamed_dump(body: list[ast.stmt]) -> str | None:
    if _statements(body) < MIN_RENAMED_STATEMENTS:
        return None
    module = ast.Module(body=[ast.parse(ast.unparse(s)).body[0] for s in body], type_ignores=[])
    return ast.dump(_Rename().visit(module))


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def squashed(text: str) -> str:
    """`text` without white space: `x = data[i : i + T]` and `x=data[i:i+T]` read the same."""
    return re.sub(r"\s+", "", text)


def answer_lines(course: Course, fingerprints: list[Fingerprint]) -> dict[str, str]:
    """{line without white space: the solution function it is from} for every line of a
    solution body that is long enough to be an answer and that the course does not give on
    purpose: not in a stub of exercises/ (given code, such as `super().__init__()`, or a line
    the task quotes), nor in course.toml, nor in an exercise's hint ladder (its last level, built
    from the known mistakes, states each fix).

    >>> "solutions/ex08_get_batch.py:get_batch" in answer_lines(course, solution_fingerprints(course)).values()
    True
    """
    given = [squashed(path.read_text(encoding="utf-8")) for path in sorted(course.exercises_dir.glob("*.py"))]
    if (course.root / "course.toml").is_file():
        given.append(squashed((course.root / "course.toml").read_text(encoding="utf-8")))
    given += [squashed(level.zh + "\n" + level.en) for ex in course.exercises for level in ladder(ex)]
    found = {}
    for fp in fingerprints:
        for line in map(squashed, fp.lines):
            if len(line) >= MIN_ANSWER_LINE and not any(line in text for text in given):
                found.setdefault(line, fp.where)
    return found


def solution_fingerprints(course: Course) -> list[Fingerprint]:
    """Every function body in solutions/ that is not a stub."""
    found = []
    for path in sorted(course.solutions_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        compiled = {c.co_name: c.co_code for c in _code_objects(compile(source, str(path), "exec"))}
        for func in functions(tree):
            body = body_without_docstring(func)
            if is_stub_body(body):
                continue
            segment = "\n".join(ast.get_source_segment(source, s, padded=True) or "" for s in body)
            found.append(Fingerprint(where=f"solutions/{path.name}:{func.name}",
                                     dump="\n".join(ast.dump(s) for s in body), renamed=_renamed_dump(body),
                                     lines=tuple(norm_lines(segment)), code=compiled.get(func.name)))
    return found


# --------------------------------------------------------------------------- decoding blobs


def _decodings(data: bytes) -> list[bytes]:
    """What `data` could be an encoding of (base64, base85, ascii85, base32, hex), undone."""
    text = re.sub(rb"\s+", b"", data)
    out = []
    for decode in (lambda t: base64.b64decode(t, validate=True), _urlsafe_b64, base64.b85decode,
                   base64.a85decode, base64.b32decode, binascii.unhexlify):
        try:
            decoded = decode(text)
        except (ValueError, binascii.Error, TypeError):
            continue
        if decoded and decoded != text:
            out.append(decoded)
    return out


def _urlsafe_b64(text: bytes) -> bytes:
    if not re.fullmatch(rb"[A-Za-z0-9_-]+=*", text):
        raise ValueError("not urlsafe base64")  # the decoder itself would skip stray characters
    return base64.urlsafe_b64decode(text)


def _decompressions(data: bytes) -> list[bytes]:
    out = []
    for decompress in (zlib.decompress, gzip.decompress, bz2.decompress, lzma.decompress,
                       lambda d: zlib.decompress(d, -15)):
        try:
            out.append(decompress(data))
        except Exception:  # noqa: BLE001 - not that format
            continue
    return out


def unwrap(data: bytes, depth: int = MAX_DEPTH) -> list[bytes]:
    """`data` and everything it decodes or decompresses to, layer after layer."""
    found, frontier = [data], [data]
    for _ in range(depth):
        nxt = []
        for blob in frontier:
            nxt += _decompressions(blob)
            if len(blob) >= MIN_BLOB:
                nxt += _decodings(blob)
        nxt = [b for b in nxt if b not in found]
        found += nxt
        frontier = nxt
    return found


def _strings_in_plain_data(value, out: list[bytes], depth: int = 0) -> None:
    if depth > 40:
        return
    if isinstance(value, str):
        out.append(value.encode("utf-8", "replace"))
    elif isinstance(value, (bytes, bytearray)):
        out.append(bytes(value))
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings_in_plain_data(k, out, depth + 1)
            _strings_in_plain_data(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings_in_plain_data(v, out, depth + 1)


_NOT_DATA = object()


def _data_in(blob: bytes):
    """The plain data a blob is, in the kit's codec (the recorded answers) or JSON (a
    notebook); `_NOT_DATA` when it is neither."""
    try:
        import grader.sandbox.wire as wire

        return wire.decode(blob)
    except Exception:  # noqa: BLE001 - not a wire blob
        pass
    if blob[:1] in (b"{", b"["):
        import json

        try:
            return json.loads(blob)
        except ValueError:
            pass
    return _NOT_DATA


def _strings_of(value) -> list[bytes]:
    out: list[bytes] = []
    _strings_in_plain_data(value, out)
    return out


def _constants(tree: ast.AST) -> list[bytes]:
    """A Python file's string and bytes constants, and each run of them joined (a blob cut
    into chunks: `_SOURCE = ("…" "…")`, `"".join([...])`, `a + b`)."""
    out, run = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            data = node.value.encode("utf-8", "replace") if isinstance(node.value, str) else node.value
            out.append(data)
            run.append(data)
        elif isinstance(node, ast.stmt) and run:
            if len(run) > 1:
                out.append(b"".join(run))
            run = []
    if len(run) > 1:
        out.append(b"".join(run))
    return [c for c in out if len(c) >= MIN_BLOB]


# --------------------------------------------------------------------------- searching


class _Index:
    def __init__(self, fingerprints: list[Fingerprint], lines: dict[str, str], hand: HandAnswers):
        self.fingerprints = fingerprints
        self.lines = lines
        self.hand = hand
        self.by_dump = {fp.dump: fp.where for fp in fingerprints}
        self.by_renamed = {fp.renamed: fp.where for fp in fingerprints if fp.renamed}
        self.by_code = {fp.code: fp.where for fp in fingerprints if fp.code}

    def in_source(self, text: str, where: str) -> list[str]:
        """A solution body in `text`, as code or as lines."""
        leaks = []
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        for func in functions(tree) if tree else ():
            body = body_without_docstring(func)
            if is_stub_body(body):
                continue
            dump = "\n".join(ast.dump(s) for s in body)
            renamed = _renamed_dump(body)
            if dump in self.by_dump:
                leaks.append(f"{where}:{func.name} has the body of {self.by_dump[dump]}")
            elif renamed and renamed in self.by_renamed:
                leaks.append(f"{where}:{func.name} has the body of {self.by_renamed[renamed]} (renamed)")
        haystack = "\n" + "\n".join(norm_lines(text)) + "\n"
        for fp in self.fingerprints:
            if fp.lines and "\n" + "\n".join(fp.lines) + "\n" in haystack:
                leaks.append(f"{where} contains the text of {fp.where}")
        flat = squashed(text)
        leaks += [f"{where} contains a line of {source}: {line[:60]}" for line, source in self.lines.items()
                  if line in flat]
        not_code = ast.Module(body=[], type_ignores=[])  # a text that is not Python has no dict literal
        leaks += [f"{where} holds the hand answer {name}"
                  for name in self.hand.found_in_text(text, tree if tree is not None else not_code)]
        return leaks

    def in_data(self, value, where: str) -> list[str]:
        """A hand answer in decoded data (the recorded answers, a notebook's JSON)."""
        return [f"{where} holds the hand answer {name}" for name in sorted(set(self.hand.found_in_value(value)))]

    def in_bytes(self, data: bytes, where: str) -> list[str]:
        leaks = [f"{where} holds the bytecode of {w}" for code, w in self.by_code.items() if code in data]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return leaks
        return leaks + self.in_source(text, where)

    def in_pyc(self, data: bytes, where: str) -> list[str]:
        try:
            code = marshal.loads(data[16:])
        except Exception:  # noqa: BLE001 - not bytecode of this Python
            return [f"{where} is a bytecode file"]
        leaks = [f"{where} is a bytecode file"]
        for obj in _code_objects(code) if isinstance(code, types.CodeType) else ():
            if obj.co_code in self.by_code:
                leaks.append(f"{where}:{obj.co_name} holds the bytecode of {self.by_code[obj.co_code]}")
        return leaks


def _search_file(index: _Index, path: Path, rel: str) -> list[str]:
    data = path.read_bytes()
    if path.suffix in (".pyc", ".pyo"):
        return index.in_pyc(data, rel)
    leaks = index.in_bytes(data, rel) + _in_data(index, data, rel)
    blobs: list[bytes] = []
    if path.suffix == ".py":
        try:
            blobs = _constants(ast.parse(data))
        except (SyntaxError, ValueError):
            blobs = []
    blobs.append(data)
    for n, blob in enumerate(blobs):
        for layer, decoded in enumerate(unwrap(blob)):
            if layer == 0 and blob is data:
                continue  # the file itself: searched above
            label = f"{rel} (decoded blob {n})"
            leaks += index.in_bytes(decoded, label) + _in_data(index, decoded, label)
    return leaks


def _in_data(index: _Index, blob: bytes, where: str) -> list[str]:
    value = _data_in(blob)
    if value is _NOT_DATA:
        return []
    return index.in_data(value, where) + [leak for text in _strings_of(value) for leak in index.in_bytes(text, where)]


def find_solution_leaks(course: Course, root: Path, fingerprints: list[Fingerprint] | None = None,
                        only: list[Path] | None = None) -> list[str]:
    """Places in `root` (every file under it, or the files of `only` there) that hold a
    solution function's body, one of its answer lines, or a hand answer
    (grader.build.hand_answers), in any recoverable form."""
    fingerprints = solution_fingerprints(course) if fingerprints is None else fingerprints
    index = _Index(fingerprints, answer_lines(course, fingerprints), hand_answers(course))
    leaks = []
    paths = sorted(Path(root).rglob("*")) if only is None else sorted(Path(root) / path for path in only)
    for path in paths:
        if path.is_file() and not path.is_symlink():
            leaks += _search_file(index, path, str(path.relative_to(root)))
    return sorted(set(leaks))
