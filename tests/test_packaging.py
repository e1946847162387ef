"""Issue 24 item 15: scripts/check_dist.py, which ``nox -s build`` runs on the real sdist and
wheel in CI, finds what a distribution lacks. Checked here on distributions made by hand
from the source tree's own file list (building a real wheel takes minutes: that is nox's)."""

from __future__ import annotations

import io
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import check_dist  # noqa: E402


def _make(dist: Path, *, drop: str | None = None, entry: bool = True) -> None:
    modules, cython, stubs = check_dist._source_files()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    kernels = [c[:-len(".pyx")] + suffix for c in cython if c.endswith(".pyx")]
    sdist_names = ["pyproject.toml", "setup.py", "README.md", *modules, *cython, *stubs]
    with tarfile.open(dist / "aorc-0.1.0.tar.gz", "w:gz") as tar:
        for name in sdist_names:
            if name == drop:
                continue
            info = tarfile.TarInfo(f"aorc-0.1.0/{name}")
            tar.addfile(info, io.BytesIO(b""))
    with zipfile.ZipFile(dist / "aorc-0.1.0-cp311-cp311-linux_x86_64.whl", "w") as wheel:
        for name in [*modules, *stubs, *kernels]:
            if name != drop:
                wheel.writestr(name, b"")
        wheel.writestr("aorc-0.1.0.dist-info/entry_points.txt",
                       "[console_scripts]\naorc = aorc.cli:main\n" if entry else "")


def test_a_complete_distribution_passes(tmp_path: Path) -> None:
    _make(tmp_path)
    assert check_dist.check_dist(tmp_path) == []


@pytest.mark.parametrize("drop", ["aorc/format/codec/_decode.pyx", "aorc/py.typed",
                                  "aorc/format/codec/_decode.pyi", "aorc/sync.py"])
def test_a_missing_file_is_found(tmp_path: Path, drop: str) -> None:
    _make(tmp_path, drop=drop)
    problems = check_dist.check_dist(tmp_path)
    assert problems and all(drop in p or "compiled kernel" in p for p in problems)


def test_a_missing_kernel_or_command_is_found(tmp_path: Path) -> None:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    _make(tmp_path, drop=f"aorc/format/codec/_lzo{suffix}", entry=False)
    problems = check_dist.check_dist(tmp_path)
    assert any("compiled kernel aorc/format/codec/_lzo" in p for p in problems)
    assert any("aorc command" in p for p in problems)
    (tmp_path / "extra-0.1.tar.gz").write_bytes(b"")
    assert "expected one sdist and one wheel" in check_dist.check_dist(tmp_path)[0]


def test_install_section_names_what_ci_checks() -> None:
    readme = (ROOT / "docs" / "getting-started.md").read_text()  # the README links to it
    section = readme[readme.index("## Install"):readme.index("## Set-up")]
    assert "pip install aorc\n" not in section  # no release on PyPI (yet)
    for needed in ("python3 -m build", "dist/aorc-", "editable_mode=strict", "nox -s build"):
        assert needed in section, needed
    run = (ROOT / ".ci" / "run").read_text()
    assert "-s build" in run or " build" in run.split("nox", 1)[1]
