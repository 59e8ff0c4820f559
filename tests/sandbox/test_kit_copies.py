"""The reference in the kit's other copies stays out of a worker's reach: what a build leaves in
a checkout (`build/`, `dist/`), its history, the checkout an installed kit came from, the
installed package beside a checkout (grader.model.paths.other_copies). In the bubblewrap tier
none of it is there at all; in the container tier each is among the paths whose modes are
checked as the workers' uid before any submission runs (grader.run.startup.secret_paths)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.model import paths
from grader.run.startup import CHECKOUT_COPIES, secret_paths
from grader.sandbox.bubblewrap import bwrap_path

KIT = Path(__file__).resolve().parents[2]
SOURCES = ["grader", "exercises", "solutions", "datasets", "course.toml", "pyproject.toml"]
THIEF = '''
import os
_path = os.path.join({kit!r}, "build", "lib", "grader", "_kit", "snoitulos"[::-1], "ex01_windows.py")
_ns = {{}}
exec(compile(open(_path).read(), "ex01", "exec"), _ns)
make_windows, shift_pairs, count_targets = _ns["make_windows"], _ns["shift_pairs"], _ns["count_targets"]
'''


@pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None, reason="the bubblewrap tier")
def test_a_build_folder_in_the_checkout_is_out_of_a_workers_reach(tmp_path):
    """`grade ex01 --submission` of a student who reads the reference a build left in the checkout."""
    kit = tmp_path / "kit"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade*")
    for name in SOURCES:
        if (KIT / name).is_dir():
            shutil.copytree(KIT / name, kit / name, ignore=ignore)
        else:
            shutil.copy2(KIT / name, kit / name)
    shutil.copytree(kit / "solutions", kit / "build" / "lib" / "grader" / "_kit" / "solutions")
    for folder, _, _ in os.walk(tmp_path):
        os.chmod(folder, 0o755)
    student = tmp_path / "thief"
    student.mkdir()
    (student / "ex01_windows.py").write_text(THIEF.format(kit=str(kit)))
    env = {**os.environ, "PYTHONPATH": str(kit), "GRADE_LANG": "en", "PYTHONDONTWRITEBYTECODE": "1", "CI": "true"}
    run = subprocess.run([sys.executable, "-c", "from grader.commands.main import entry; entry()", "ex01",
                          "--submission", str(student), "--format", "json"],
                         capture_output=True, text=True, env=env, cwd=kit, timeout=600)
    result = json.loads(run.stdout)
    assert result["score"] == 0, run.stdout[-2000:] + run.stderr[-2000:]
    told = " ".join(c["message"] for e in result["exercises"] for c in e["checks"])
    assert "FileNotFoundError" in told, told  # not there at all, as the worker sees it


class _Dist:
    def __init__(self, url: str | None, site: Path):
        self.url, self.site = url, site

    def read_text(self, name):
        return json.dumps({"url": self.url, "dir_info": {}}) if name == "direct_url.json" and self.url else None

    def locate_file(self, name):
        return self.site / name


def test_the_checkout_an_install_came_from_and_the_installed_package_are_found(tmp_path, monkeypatch):
    from importlib import metadata

    checkout, site = tmp_path / "checkout", tmp_path / "site-packages"
    (checkout / "solutions").mkdir(parents=True)
    (site / "grader" / "_kit" / "solutions").mkdir(parents=True)
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(checkout.as_uri(), site))
    monkeypatch.setattr(paths, "in_checkout", lambda: False)  # the kit running installed
    assert paths.other_copies() == [checkout, site.resolve()]
    monkeypatch.setattr(paths, "in_checkout", lambda: True)  # from a checkout: only the installed package
    assert paths.other_copies() == [site.resolve()]
    hidden = secret_paths(None)
    assert str(site.resolve() / "grader") in hidden and str(site.resolve() / "build") not in hidden
    for name in CHECKOUT_COPIES:  # this checkout's own build/, dist/, history, …
        assert str(paths.KIT_ROOT / name) in hidden
    (checkout / "course.toml").write_text("")
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    hidden = secret_paths(None)
    for name in ("solutions", "grader", "build", "dist", ".git"):  # the checkout it was installed from
        assert str(checkout / name) in hidden
    monkeypatch.setattr(paths, "in_checkout", lambda: True)
    # only the instructor's distribution installed (a wheel built from the repository, named so)
    def instructors_only(name):
        if name != paths.INSTRUCTOR_DISTRIBUTION:
            raise metadata.PackageNotFoundError(name)
        return _Dist(checkout.as_uri(), site)

    monkeypatch.setattr(metadata, "distribution", instructors_only)
    assert paths.other_copies() == [site.resolve()]
    # an editable install (of this kit, or of the checkout a developer copied it from): nothing
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(checkout.as_uri(), tmp_path / "none"))
    assert paths.other_copies() == []
