"""A submission read as data, by both of intake's walkers (file descriptors; paths, as on Windows).

Each rule is tried on real links: those that refuse (the folder itself, a folder on its path,
a linked `*.py` a worker would import) and those left alone, never followed (relative,
absolute, to /proc/self/cwd/solutions, to the kit's solutions/, nested, in a folder not
walked); a FIFO read and one not read; sizes and counts over the caps; a folder whose listing
stops at the cap; and a file swapped between the survey and the read. The path walker also
runs with `O_NOFOLLOW`, `O_DIRECTORY` and `dir_fd` taken away, as on Windows, where it is
chosen by itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.sandbox import walkers
from grader.sandbox.intake import SubmissionRefused, copy_submission, read_submission, survey


def _files(folder, *args, **kw) -> dict[str, bytes]:
    """What a worker imports, with nothing refused alone."""
    files, refused = read_submission(str(folder), *args, **kw)
    assert refused == {}, refused
    return files

KIT = Path(__file__).resolve().parents[2]
EX01 = "ex01_windows.py"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="makes POSIX links and FIFOs")


@pytest.fixture(params=["fd", "paths"])
def portable(request) -> bool:
    return request.param == "paths"


def _submission(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / EX01).write_text("X = 1\n", encoding="utf-8")
    (folder / "data" / "notes.txt").write_text("mine\n", encoding="utf-8")
    return folder


def test_a_plain_submission_gives_its_top_level_py_files(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    assert _files(sub, portable=portable) == {EX01: b"X = 1\n"}
    found = survey(str(sub), portable=portable)
    assert sorted(found.entries) == [("data",), (EX01,)]  # data/ is not walked: nothing there is read
    found = survey(str(sub), descend=lambda parts: parts == ("data",), portable=portable)
    assert sorted(found.entries) == [("data",), ("data", "notes.txt"), (EX01,)]


@pytest.mark.parametrize("layout", ["folder_itself", "on_the_path"])
def test_a_link_on_the_way_refuses_the_whole_submission(tmp_path, portable, layout):
    _submission(tmp_path / "sub")
    if layout == "folder_itself":
        os.symlink(KIT / "solutions", tmp_path / "linked")
        graded = tmp_path / "linked"
    else:
        os.symlink(tmp_path / "sub", tmp_path / "via")
        graded = tmp_path / "via" / "data"
    with pytest.raises(SubmissionRefused, match="is a symbolic link") as info:
        read_submission(str(graded), portable=portable)
    assert info.value.reason == "link" and "提交被拒绝" in info.value.zh
    refusals = copy_submission(str(graded), str(tmp_path / "copy"), portable=portable)
    assert "submission refused" in refusals.whole and refusals.of("ex01_windows") == refusals.whole
    assert os.listdir(tmp_path / "copy") == []


@pytest.mark.parametrize("layout", ["linked_module", "relative_module"])
def test_a_linked_module_is_refused_alone(tmp_path, portable, layout):
    """As `grade batch` refuses it: never opened, said for that module, the other files read."""
    sub = _submission(tmp_path / "sub")
    name = "ex02_nll.py" if layout == "linked_module" else "helper.py"
    target = KIT / "solutions" / "ex02_nll.py"
    os.symlink(target if layout == "linked_module" else os.path.relpath(target, sub), sub / name)
    files, refused = read_submission(str(sub), portable=portable)
    assert files == {EX01: b"X = 1\n"} and list(refused) == [name] and refused[name].reason == "link"
    refusals = copy_submission(str(sub), str(tmp_path / "copy"), portable=portable)
    assert refusals.whole is None and refusals.of("ex01_windows") is None
    why = refusals.of(name[:-3])
    assert why.startswith(f"未读取：{name} 是符号链接") and f"not read: {name} is a symbolic link" in why
    assert sorted(os.listdir(tmp_path / "copy")) == [EX01]


@pytest.mark.parametrize("layout", ["relative", "absolute", "proc_cwd", "kit_file", "nested", "venv"])
def test_a_link_that_is_not_read_is_left_alone(tmp_path, portable, layout):
    """Never followed, never read: the submission is its own top-level files, as without the link."""
    sub = _submission(tmp_path / "sub")
    if layout == "relative":
        os.symlink(os.path.relpath(KIT / "solutions", sub), sub / "reference")
    elif layout == "absolute":
        os.symlink(KIT / "solutions", sub / "reference")
    elif layout == "proc_cwd":
        os.symlink("/proc/self/cwd/solutions", sub / "exercises")
    elif layout == "kit_file":
        os.symlink(KIT / "solutions" / EX01, sub / "data" / "answer.txt")
    elif layout == "nested":
        (sub / "data" / "a" / "b").mkdir(parents=True)
        os.symlink(KIT / "solutions", sub / "data" / "a" / "b" / "c")
    else:  # a virtual environment beside the exercises: links, and more entries than the cap
        (sub / ".venv" / "bin").mkdir(parents=True)
        os.symlink("/usr/bin/python3", sub / ".venv" / "bin" / "python")
        for i in range(50):
            (sub / ".venv" / f"f{i}").touch()
    assert _files(sub, {"max_entries": 10}, portable=portable) == {EX01: b"X = 1\n"}
    assert copy_submission(str(sub), str(tmp_path / "copy"), portable=portable).files == {}
    assert sorted(os.listdir(tmp_path / "copy")) == [EX01]


def test_special_files_and_caps_refuse(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    os.mkfifo(sub / "data" / "pipe")
    os.mkfifo(sub / "notes")
    assert _files(sub, portable=portable) == {EX01: b"X = 1\n"}  # never opened: would block
    os.mkfifo(sub / "ex02_nll.py")
    files, refused = read_submission(str(sub), portable=portable)  # what a worker would import: refused, not opened
    assert files == {EX01: b"X = 1\n"} and "ex02_nll.py is a FIFO" in refused["ex02_nll.py"].alone
    os.unlink(sub / "ex02_nll.py")
    files, refused = read_submission(str(sub), {"max_file": 2}, portable=portable)
    assert files == {} and "too large (6 bytes, the cap is 2)" in refused[EX01].alone
    (sub / "data" / "big.txt").write_bytes(b"#" * 64)
    (sub / "big.txt").write_bytes(b"#" * 64)
    assert _files(sub, {"max_total": 8}, portable=portable) == {EX01: b"X = 1\n"}  # not read
    (sub / "two.py").write_text("Y = 2\n", encoding="utf-8")
    files, refused = read_submission(str(sub), {"max_total": 8}, portable=portable)  # the files read, together
    assert files == {EX01: b"X = 1\n"} and list(refused) == ["two.py"]  # the exercise file first: it fits
    assert "takes the submission's files together over the cap (8 bytes)" in refused["two.py"].alone
    (sub / "a_data.py").write_text("Z = 3\n", encoding="utf-8")  # a helper sorting before the exercise
    files, refused = read_submission(str(sub), {"max_total": 8}, portable=portable)
    assert files == {EX01: b"X = 1\n"} and sorted(refused) == ["a_data.py", "two.py"]
    (sub / "a_data.py").unlink()
    with pytest.raises(SubmissionRefused, match="too many entries"):
        read_submission(str(sub), {"max_entries": 2}, portable=portable)
    (sub / "data" / "a" / "b").mkdir(parents=True)
    with pytest.raises(SubmissionRefused, match="nested too deeply"):
        survey(str(sub), {"max_depth": 2}, descend=lambda parts: True, portable=portable)


def test_a_listing_stops_at_the_cap(tmp_path, portable, monkeypatch):
    """A folder of many entries is refused from the first cap + 1 names: the rest are never listed."""
    sub = _submission(tmp_path / "sub")
    for i in range(200):
        (sub / f"n{i:03}").touch()
    listed = []
    real = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: listed.append(path) or real(path, *a, **k))
    with pytest.raises(SubmissionRefused, match="too many entries"):
        read_submission(str(sub), {"max_entries": 20}, portable=portable)
    assert len([p for p in listed if os.path.basename(str(p)).startswith("n")]) <= 21


def test_tolerated_entries_are_recorded_not_followed(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    os.symlink(KIT / "solutions" / EX01, sub / "ex02_nll.py")
    found = survey(str(sub), tolerate=lambda parts, err: parts == ("ex02_nll.py",), portable=portable)
    assert [(p.parts, p.reason) for p in found.problems] == [(("ex02_nll.py",), "link")]
    assert ("ex02_nll.py",) not in found.entries


def test_a_file_swapped_after_the_survey_is_not_read(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    found = survey(str(sub), portable=portable)
    (sub / "other.py").write_text("X = 2\n", encoding="utf-8")  # made while the surveyed file lives
    os.replace(sub / "other.py", sub / EX01)
    (result,) = found.read([(EX01,)], 1 << 20).values()
    assert isinstance(result, SubmissionRefused) and result.reason == "changed"
    found = survey(str(sub), portable=portable)
    os.unlink(sub / EX01)
    os.symlink(KIT / "solutions" / EX01, sub / EX01)
    (result,) = found.read([(EX01,)], 1 << 20).values()
    assert isinstance(result, SubmissionRefused) and result.reason == "link"


def test_without_nofollow_and_dir_fd_the_path_walker_is_chosen(tmp_path, monkeypatch):
    """As on Windows: no O_NOFOLLOW, no O_DIRECTORY, no dir_fd; the same answers, the same refusals."""
    for name in ("O_NOFOLLOW", "O_DIRECTORY"):
        monkeypatch.delattr(os, name, raising=False)
    monkeypatch.setattr(os, "supports_dir_fd", set())
    monkeypatch.setattr(os, "supports_fd", set())
    assert isinstance(walkers.walker(), walkers.PathWalk)
    sub = _submission(tmp_path / "sub")
    assert _files(sub) == {EX01: b"X = 1\n"}
    os.symlink(KIT / "solutions", sub / "data" / "reference")
    assert _files(sub) == {EX01: b"X = 1\n"}  # not walked, not followed
    os.symlink(KIT / "solutions" / EX01, sub / "ex02_nll.py")
    files, refused = read_submission(str(sub))
    assert files == {EX01: b"X = 1\n"} and "ex02_nll.py is a symbolic link" in refused["ex02_nll.py"].en
    os.symlink(KIT / "solutions", tmp_path / "via")
    with pytest.raises(SubmissionRefused, match="via is a symbolic link"):
        read_submission(str(tmp_path / "via"))


def test_the_private_copy_holds_only_what_was_read(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    refusals = copy_submission(str(sub), str(tmp_path / "copy"), portable=portable)
    assert refusals.whole is None and refusals.files == {}
    assert sorted(os.listdir(tmp_path / "copy")) == [EX01]
    os.symlink(KIT / "solutions" / EX01, sub / "ex02_nll.py")
    refusals = copy_submission(str(sub), str(tmp_path / "copy2"), portable=portable)
    assert list(refusals.files) == ["ex02_nll.py"] and os.listdir(tmp_path / "copy2") == [EX01]


SURVEY_AS_USER = """
import sys
sys.path.insert(0, sys.argv[1])
from grader.sandbox.intake import SubmissionRefused, survey
for portable in (False, True):
    try:
        survey(sys.argv[2], descend=lambda parts: parts == ("exercises",), portable=portable)
        print("read")
    except SubmissionRefused as err:
        print("refused", err.reason)
"""


@pytest.mark.parametrize("where", ["folder", "exercises"])
def test_a_folder_listed_but_not_searchable_is_refused_not_raised(tmp_path, where):
    """Mode 644 on a folder (read, no search): as an ordinary user its names list but cannot be
    looked at (`lstat` is refused); the submission is refused, never an uncaught PermissionError."""
    import subprocess
    import sys

    from tests.sandbox.as_user import as_user_prefix

    if os.geteuid() == 0 and not (os.path.exists("/usr/bin/setpriv") or os.path.exists("/bin/setpriv")):
        pytest.skip("needs setpriv to run as an ordinary user")
    import shutil
    import tempfile

    place = Path(tempfile.mkdtemp(prefix="grade-intake-"))  # pytest's own tmp_path is root's alone
    try:
        os.chmod(place, 0o755)
        sub = place / "sub"
        (sub / "exercises").mkdir(parents=True)
        (sub / "exercises" / EX01).write_text("X = 1\n", encoding="utf-8")
        (sub / "ex02_nll.py").write_text("X = 1\n", encoding="utf-8")
        os.chmod(sub if where == "folder" else sub / "exercises", 0o644)
        prefix = as_user_prefix(place) if os.geteuid() == 0 else []
        run = subprocess.run([*prefix, sys.executable, "-c", SURVEY_AS_USER, str(KIT), str(sub)],
                             capture_output=True, text=True, cwd="/", timeout=120)
    finally:
        for folder in (place / "sub", place / "sub" / "exercises"):
            os.chmod(folder, 0o755)
        shutil.rmtree(place)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[:2] == ["refused unreadable"] * 2, run.stdout


def test_an_entry_gone_since_the_listing_is_no_reason_to_refuse(tmp_path, portable, monkeypatch):
    """An editor saving (vim's `4913`, a `.swp`, a `~` backup made and removed between the
    listing and its lstat): the file that was there is not there, the rest is read."""
    sub = _submission(tmp_path / "sub")
    real = walkers.first_names
    monkeypatch.setattr(walkers, "first_names", lambda listing, limit: [*real(listing, limit), "4913", ".x.swp"])
    assert _files(sub, portable=portable) == {EX01: b"X = 1\n"}


def test_a_folder_that_cannot_be_listed_is_named_as_the_folder(tmp_path, portable, monkeypatch):
    """The submission itself unreadable: "the folder cannot be opened", never ". cannot be opened"."""
    sub = _submission(tmp_path / "sub")

    def refused(listing, limit):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(walkers, "first_names", refused)
    with pytest.raises(SubmissionRefused) as info:
        read_submission(str(sub), portable=portable)
    assert "submission refused: the folder cannot be opened (Permission denied)" in info.value.en, info.value.en
    assert "提交被拒绝：文件夹 打不开" in info.value.zh
