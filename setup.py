"""Build script: compiles every Cython module under svmmap/ and svmstruct_api/, installs the
console scripts, and puts the top-level data/ directory into the package as
svmmap/datasets/data (the repository keeps one copy; the wheel gets it at build time)."""

import os
import shutil
import sys
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent


class BuildPyWithData(build_py):
    """build_py that also copies data/ to svmmap/datasets/data in the build directory."""

    def run(self):
        super().run()
        if not self.editable_mode:  # an editable install reads data/ where it is
            target = Path(self.build_lib) / "svmmap" / "datasets" / "data"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(HERE / "data", target)

# The per-query loops run in parallel with OpenMP where the compiler has it (gcc, clang with
# libomp); SVMMAP_NO_OPENMP=1 builds them serial, with the same results.
USE_OPENMP = sys.platform.startswith("linux") and not os.environ.get("SVMMAP_NO_OPENMP")
OPENMP_FLAGS = ["-fopenmp"] if USE_OPENMP else []
#: processes translating and compiling the extensions (SVMMAP_BUILD_JOBS=1: one at a time)
BUILD_JOBS = int(os.environ.get("SVMMAP_BUILD_JOBS", 0)) or os.cpu_count() or 1

#: Cython's utility code (typed memoryviews, its function and exception helpers) compiled
#: once, into this module, which every extension imports when it loads, instead of into each
#: of them (Cython >= 3.1's shared utility module): half of each generated file
SHARED_UTILITY = "svmmap.kernels._cython_utility"
#: -g0: no debug information (Python's CFLAGS ask for -g; it changes no instruction of the
#: kernels, and writing it took a third of the C/C++ compile time, benchmarks/build_time.py)
COMPILE_ARGS = ["-O3", "-g0"]

extensions = [
    Extension(
        ".".join(pyx.relative_to(HERE).with_suffix("").parts),
        [str(pyx.relative_to(HERE))],
        # the folder's C headers: an extension is compiled again when one changes (Cython
        # follows the .pxd files a module cimports by name, ``cimport
        # svmmap.kernels._query_core``, not the headers its ``cdef extern`` blocks include)
        depends=[str(header.relative_to(HERE)) for header in sorted(pyx.parent.glob("*.h"))],
        include_dirs=[numpy.get_include(), str(pyx.parent.relative_to(HERE))],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=[*COMPILE_ARGS, *OPENMP_FLAGS],
        extra_link_args=OPENMP_FLAGS,
    )
    for package in ("svmmap", "svmstruct_api")
    for pyx in sorted((HERE / package).rglob("*.pyx"))
] + [Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".c"],
               extra_compile_args=COMPILE_ARGS)]

setup(
    name="svmmap",
    version="0.1.0",
    description=(
        "Structural SVMs that optimise Mean Average Precision (Yue et al., SIGIR 2007), "
        "with the paper's ROC-area and accuracy baselines"
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    python_requires=">=3.9",
    packages=find_packages(include=["svmmap", "svmmap.*", "svmstruct_api", "svmstruct_api.*"]),
    # the Cython translation and the C/C++ compilation run on every core (cythonize's
    # nthreads, build_ext's parallel below): a build takes the longest module, not the sum
    ext_modules=cythonize(
        extensions,
        nthreads=BUILD_JOBS,
        shared_utility_qualified_name=SHARED_UTILITY,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
    # tqdm: the live progress line of svmmap_learn on a terminal (svmmap.core.progress)
    install_requires=["numpy>=1.23", "scipy>=1.9", "cvxopt>=1.3", "scikit-learn>=1.6",
                      "tqdm>=4.60"],
    extras_require={
        # ir_measures: ERR@k is checked against its value (tests/api/test_measures.py)
        "test": ["pytest>=7", "hypothesis>=6", "pytrec-eval-terrier>=0.5.5", "ir_measures>=0.3",
                 "ruff==0.17.5",
                 # .ci/run: mypy svmmap svmstruct_api (its configuration in pyproject.toml)
                 "mypy==2.4.1",
                 "matplotlib>=3.5", "lightgbm>=4",
                 # tests/input_output/test_datasets.py runs setup.py's build_py, which
                 # imports Cython
                 "Cython>=3.1",
                 # DataFrame input (feature_names_in_, Dask DataFrames) is tested with pandas;
                 # dask.dataframe needs pyarrow (dask's dataframe extra)
                 "pandas>=1.5",
                 "dask[dataframe,distributed]>=2023.1",
                 # svmmap.pyterrier and the ir_measures cross-checks: PyTerrier's Java-free
                 # core (Java is its [java] extra, not installed), which brings ir_measures
                 "pyterrier>=1.0", "ir-measures>=0.3.1",
                 # svmmap.experiments.classic: runs over the classic test collections
                 "PyStemmer>=2.2", "bm25s>=0.2"],
        "plot": ["matplotlib>=3.5"],
        # svmmap.pyterrier: the SVMMapRanker stage (PyTerrier 1.x core, no Java)
        "pyterrier": ["pyterrier>=1.0"],
        # svmmap.experiments.classic: the stemmer and BM25 of the retrieval runs
        "experiments": ["PyStemmer>=2.2", "bm25s>=0.2"],
        # svmmap.dask: training and prediction on a Dask cluster (svmmap_learn --dask-workers)
        "dask": ["dask[distributed]>=2023.1"],
        # the manual: mkdocs build --strict -f docs/mkdocs.yml (docs/: MkDocs 1.6's
        # File.generated for the figures, the Material theme, the API reference by
        # mkdocstrings' Python handler; matplotlib draws the figures of docs/examples)
        "docs": ["mkdocs>=1.6.1,<2", "mkdocs-material>=9.8,<10", "mkdocstrings[python]>=1.0,<2",
                 "mkdocstrings-python>=2.0,<3", "matplotlib>=3.5"],
    },
    entry_points={
        "console_scripts": [
            # svmmap.commands.console: Ctrl-C during the imports is one line too (issue 12)
            "svmmap_learn=svmmap.commands.console:learn_main",
            "svmmap_classify=svmmap.commands.console:classify_main",
            "svmmap_baseline_learn=svmmap.commands.console:baseline_learn_main",
            "svmmap_baseline_classify=svmmap.commands.console:baseline_classify_main",
        ]
    },
    cmdclass={"build_py": BuildPyWithData},
    options={"build_ext": {"parallel": BUILD_JOBS}},
    zip_safe=False,
)
