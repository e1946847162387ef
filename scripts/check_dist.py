"""Check aorc's built distributions (``nox -s build`` runs this; see the README, "Install").

``python scripts/check_dist.py DIST``: DIST holds exactly one sdist and one wheel; the sdist
carries what a build needs (``pyproject.toml``, ``setup.py``, every module, Cython source and
stub, ``py.typed``); the wheel carries every module, stub and ``py.typed``, one compiled
extension per Cython module, and the ``aorc`` command.

``python scripts/check_dist.py --installed``: run by the interpreter of a clean virtualenv
the wheel was installed into, from a folder outside the source tree: aorc and its compiled
kernels import from that virtualenv, a file written by aorc reads back (with pyarrow.orc as
the peer), the ``aorc`` command runs, and mypy (strict) sees aorc's types: a correct snippet
passes and a wrong one fails.

``python scripts/check_dist.py --mypy``: only that last check (for an editable install in
setuptools' strict mode, which the README names for type checking).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GOOD = """\
import asyncio
import aorc

async def main() -> int:
    async with aorc.open_reader("t.orc") as reader:
        rows: int = reader.num_rows
        return rows

print(asyncio.run(main()))
"""
BAD = GOOD.replace("rows: int = reader.num_rows", "rows: str = reader.num_rows")


def _source_files() -> tuple[list[str], list[str], list[str]]:
    """The package's modules (and data files), Cython sources and stubs, relative to ROOT."""
    package = ROOT / "aorc"
    modules = sorted(str(p.relative_to(ROOT)) for p in package.rglob("*.py")
                     if "__pycache__" not in p.parts)
    cython = sorted(str(p.relative_to(ROOT)) for p in package.rglob("*.pyx"))
    cython += sorted(str(p.relative_to(ROOT)) for p in package.rglob("*.pxd"))
    stubs = sorted(str(p.relative_to(ROOT)) for p in package.rglob("*.pyi"))
    return modules + ["aorc/py.typed"], cython, stubs


def check_dist(dist: Path) -> list[str]:
    """Problems with the sdist and wheel in ``dist`` (empty: none)."""
    problems: list[str] = []
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        return [f"expected one sdist and one wheel in {dist}, found {sdists + wheels}"]
    modules, cython, stubs = _source_files()
    with tarfile.open(sdists[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ["pyproject.toml", "setup.py", "README.md", *modules, *cython, *stubs]:
        if needed not in names:
            problems.append(f"sdist {sdists[0].name} lacks {needed}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        members = set(wheel.namelist())
        entry_points = next((wheel.read(n).decode() for n in members
                             if n.endswith(".dist-info/entry_points.txt")), "")
    for needed in [*modules, *stubs]:
        if needed not in members:
            problems.append(f"wheel {wheels[0].name} lacks {needed}")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    for source in (c for c in cython if c.endswith(".pyx")):
        compiled = source[:-len(".pyx")] + suffix
        if compiled not in members:
            problems.append(f"wheel {wheels[0].name} lacks the compiled kernel {compiled}")
    if "aorc = aorc.cli:main" not in entry_points:
        problems.append(f"wheel {wheels[0].name} does not install the aorc command")
    return problems


def check_installed() -> list[str]:
    """Problems with the aorc this interpreter imports (a clean install of the wheel)."""
    import importlib

    import pyarrow as pa
    import pyarrow.orc as pa_orc

    import aorc
    import aorc.sync

    problems: list[str] = []
    prefix = Path(sys.prefix).resolve()
    if prefix not in Path(aorc.__file__).resolve().parents:
        problems.append(f"aorc imports from {aorc.__file__}, not from {prefix}")
    modules, cython, _ = _source_files()
    for source in (c for c in cython if c.endswith(".pyx")):
        name = source[:-len(".pyx")].replace("/", ".")
        module = importlib.import_module(name)
        if not str(module.__file__).endswith(sysconfig.get_config_var("EXT_SUFFIX") or ".so"):
            problems.append(f"{name} is not a compiled extension: {module.__file__}")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        table = pa.table({"id": list(range(1000)), "name": [f"n{i % 7}" for i in range(1000)]})
        aorc.sync.write_table(table, "t.orc", bloom_filter_columns=["name"])
        if not pa_orc.read_table("t.orc").equals(table):
            problems.append("pyarrow.orc reads another table than aorc wrote")
        if not aorc.sync.read_table("t.orc", filters=[("name", "==", "n3")]).num_rows == 143:
            problems.append("a filtered read gives the wrong rows")
        command = Path(sys.executable).with_name("aorc")
        done = subprocess.run([str(command), "count", "t.orc"], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0 or "rows: 1000" not in done.stdout:
            problems.append(f"`aorc count` failed: {done.stdout}{done.stderr}")
        problems += _mypy_sees_types(Path(tmp))
    return problems


def _mypy_sees_types(folder: Path) -> list[str]:
    """mypy --strict passes a correct use of aorc and fails a wrong one (so it reads aorc's
    types from the install: py.typed)."""
    results = {}
    for name, code in (("good.py", GOOD), ("bad.py", BAD)):
        (folder / name).write_text(code)
        done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                               name], cwd=folder, capture_output=True, text=True, check=False)
        results[name] = done
    problems = []
    if results["good.py"].returncode != 0:
        problems.append(f"mypy --strict fails a correct use of aorc: "
                        f"{results['good.py'].stdout}")
    bad = results["bad.py"]
    if bad.returncode == 0 or "Incompatible types in assignment" not in bad.stdout:
        problems.append(f"mypy --strict does not see aorc's types: {bad.stdout}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", nargs="?", type=Path, help="folder of the built sdist and wheel")
    parser.add_argument("--installed", action="store_true",
                        help="check the installed aorc instead (run from a clean venv)")
    parser.add_argument("--mypy", action="store_true",
                        help="only check that mypy sees the installed aorc's types")
    args = parser.parse_args(argv)
    if (args.installed or args.mypy) == (args.dist is not None):
        parser.error("give DIST, --installed or --mypy")
    if args.mypy:
        with tempfile.TemporaryDirectory() as tmp:
            problems = _mypy_sees_types(Path(tmp))
    else:
        problems = check_installed() if args.installed else check_dist(args.dist)
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        what = "mypy" if args.mypy else "installed" if args.installed else str(args.dist)
        print(f"check_dist: ok ({what})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
