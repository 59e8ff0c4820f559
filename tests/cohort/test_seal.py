"""OUT's seal (grader.cohort.seal): made and checked with the user's key, which no worker reads.

The seal holds for the OUT and cohort it was made for, and for nothing else (another path, a
copy, another cohort, a forged value, another user's key); the key is made once, 0600 in a
0700 folder, and where it cannot be made the batch goes on and says OUT is unsealed. As an
ordinary user (uid 61996, whose workers run as that same uid in their own namespaces), a
submission that opens the key file at import finds nothing there: the fence hides the cache's
private folders.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.sandbox.as_user import as_user_prefix, needs_root

KIT = Path(__file__).resolve().parents[2]
GRADE = [sys.executable, "-c", "from grader.commands.main import entry; entry()"]


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "gpt-course"


def test_the_seal_holds_only_where_it_was_made(cache, tmp_path):
    from grader.cohort.seal import holds_seal, out_seal

    out = tmp_path / "cohort" / "out_1"
    out.mkdir(parents=True)
    assert not holds_seal(out, "/srv/cohort", "0" * 64)  # no key yet: nothing holds
    seal = out_seal(out, "/srv/cohort")
    key = cache / "keys" / "out-seal"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert holds_seal(out, "/srv/cohort", seal) and out_seal(out, "/srv/cohort") == seal  # one key
    assert not holds_seal(out, "/srv/other", seal)
    assert not holds_seal(tmp_path / "cohort" / "copy", "/srv/cohort", seal)
    assert not any(holds_seal(out, "/srv/cohort", forged) for forged in ("0" * 64, seal.upper(), None, 7, [seal]))
    key.write_bytes(os.urandom(32))  # another user's key, as it were
    assert not holds_seal(out, "/srv/cohort", seal)
    key.write_bytes(b"short")
    assert not holds_seal(out, "/srv/cohort", seal)


def test_a_batch_seals_its_out_and_seals_an_old_one_again(cache, tmp_path):
    import json

    from grader.cohort.gradebook import hold_out, sealed_out

    cohort, out = tmp_path / "cohort", tmp_path / "cohort" / "_out"
    cohort.mkdir()
    with hold_out(out, cohort=cohort):
        pass
    assert sealed_out(out, cohort) and not sealed_out(out, tmp_path)
    (out / "cohort.json").write_text(json.dumps({"cohort": str(cohort.resolve())}), encoding="utf-8")  # before seals
    assert not sealed_out(out, cohort)
    with hold_out(out, cohort=cohort):  # resumed: sealed again
        pass
    assert sealed_out(out, cohort)


def test_a_key_that_cannot_be_made_leaves_out_unsealed_and_says_so(cache, tmp_path, capsys):
    """A cache another user owns (here: `keys` is a file): the batch goes on, OUT unsealed."""
    from grader.cohort.gradebook import held_cohort, hold_out, sealed_out

    cache.mkdir(parents=True)
    (cache / "keys").write_text("not a folder", encoding="utf-8")
    cohort, out = tmp_path / "cohort", tmp_path / "cohort" / "_out"
    cohort.mkdir()
    with hold_out(out, cohort=cohort):
        pass
    assert held_cohort(out) == str(cohort.resolve()) and not sealed_out(out, cohort)
    assert "not sealed" in capsys.readouterr().err


PEEK = """
import os
for cache in ({home!r} + "/cache", {home!r} + "/.cache", os.environ.get("XDG_CACHE_HOME", "/none"),
              os.path.join(os.environ["HOME"], ".cache")):  # where the run's cache lies, and what the worker is told
    path = os.path.join(cache, "gpt-course", "keys", "out-seal")
    try:
        with open(path, "rb") as f:
            print("KEY", f.read().hex())
    except OSError as err:
        print("NO KEY", type(err).__name__)
"""


@needs_root
@pytest.mark.skipif(not os.path.isdir("/var/cache"), reason="a home for the user outside /tmp")
@pytest.mark.parametrize("made_in", ["cache", ".cache"])
def test_no_worker_reads_the_key_as_an_ordinary_user(made_in):
    """An official run's worker (bubblewrap, as an ordinary user) finds no seal key: not in the
    cache, nor one an earlier run made in ~/.cache, before this run set XDG_CACHE_HOME
    (made_in=".cache")."""
    place = Path(tempfile.mkdtemp(dir="/tmp", prefix="grade-seal-"))
    # the user's home outside /tmp: a worker's /tmp is a fresh tmpfs, so a key there is out of
    # its sight whatever else the sandbox holds
    home = Path(tempfile.mkdtemp(dir="/var/cache", prefix="grade-seal-home-"))
    uid = 61996
    try:
        os.chmod(place, 0o755)
        os.chmod(home, 0o755)
        prefix = as_user_prefix(place, uid)
        sub = home / "sub"
        sub.mkdir(parents=True)
        (sub / "ex01_windows.py").write_text(PEEK.format(home=str(home)) + "raise RuntimeError('peeked')\n",
                                             encoding="utf-8")  # printed: shown
        for path in (home, sub, sub / "ex01_windows.py"):
            os.chown(path, uid, uid)
        env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "GRADE_LANG": "en",
               "CI": "true"}  # `--submission` graded officially (a user's own folder is graded in the practice tier)
        earlier = {**env, "XDG_CACHE_HOME": ""} if made_in == ".cache" else env
        made = subprocess.run([*prefix, sys.executable, "-c", f"import sys; sys.path.insert(0, {str(KIT)!r}); "
                               "from grader.cohort.seal import _key; _key()"], env=earlier, cwd="/", capture_output=True,
                              text=True, timeout=120)
        assert made.returncode == 0, made.stderr[-2000:]
        key = (home / made_in / "gpt-course" / "keys" / "out-seal").read_bytes().hex()
        run = subprocess.run([*prefix, *GRADE, "ex01", "--submission", str(sub)], env=env, cwd=str(KIT),
                             capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(place, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.count("NO KEY") == 4 and key not in run.stdout, run.stdout[-3000:]


def test_a_key_that_is_not_the_users_alone_seals_nothing(cache, tmp_path):
    """A FIFO (never blocks), a key others can read, another user's key, a folder others can
    write: no seal holds, and a batch would write OUT unsealed (saying so)."""
    from grader.cohort.seal import holds_seal, out_seal

    out = tmp_path / "out"
    seal = out_seal(out, "/srv/cohort")
    key = cache / "keys" / "out-seal"
    key.chmod(0o644)
    assert not holds_seal(out, "/srv/cohort", seal)
    with pytest.raises(OSError):
        out_seal(out, "/srv/cohort")
    key.chmod(0o600)
    (cache / "keys").chmod(0o777)
    assert not holds_seal(out, "/srv/cohort", seal)
    (cache / "keys").chmod(0o700)
    assert holds_seal(out, "/srv/cohort", seal)
    if os.geteuid() == 0:
        os.chown(key, 12345, 12345)  # planted by another user
        assert not holds_seal(out, "/srv/cohort", seal)
    key.unlink()
    os.mkfifo(key)
    assert not holds_seal(out, "/srv/cohort", seal)  # returns at once: opened without blocking
    with pytest.raises(OSError):
        out_seal(out, "/srv/cohort")
    assert [p.name for p in key.parent.iterdir()] == ["out-seal"]  # no draft left behind
