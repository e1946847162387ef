"""Build the Cython kernels; everything else is in pyproject.toml."""

from __future__ import annotations

import glob
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        path[:-4].replace("/", "."),
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for path in sorted(glob.glob("aorc/**/*.pyx", recursive=True))
    # pread (POSIX): elsewhere the local store reads the plain way
    if not (sys.platform == "win32" and path.endswith("_pread.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
