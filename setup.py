"""Build hook: the course files travel inside the wheel, in grader/_kit/.

pyproject.toml holds the metadata; this only adds to setuptools' `build_py` the files a kit
installed from its wheel needs beside the grader package: course.toml, exercises/ (the
stubs), solutions/ (an instructor's kit only: a student release has none), and the data set
catalog (datasets/catalog.toml, README.md). `grader.model.paths.kit_file` finds them there.
An editable install (`pip install -e .`) reads them from the checkout instead.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COURSE_FILES = ["course.toml", "exercises/*.py", "solutions/*.py", "datasets/catalog.toml", "datasets/README.md"]


class build_py_with_course(build_py):
    """setuptools' build_py, then the course files copied into grader/_kit/ of the build."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "grader" / "_kit"
        for pattern in COURSE_FILES:
            for path in sorted(ROOT.glob(pattern)):
                destination = target / path.relative_to(ROOT)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, destination)


setup(cmdclass={"build_py": build_py_with_course})
