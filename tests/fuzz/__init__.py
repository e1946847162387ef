"""The fuzzing harness and the hostile-input regressions (issues 2 and 20).

- :mod:`fuzz.sources`, :mod:`fuzz.model`, :mod:`fuzz.mutations`: valid base files and the
  seeded damage done to them; :mod:`fuzz.runner` reads the mutants in watched child processes
  and :mod:`fuzz.limits` measures and caps their CPU time and memory;
  ``test_fuzz_files.py`` runs a fixed, seeded number of mutants in the main test run.
- :mod:`fuzz.orcfile` assembles ORC files by hand; :mod:`fuzz.hostile` builds one file per
  hostile-input class of issue 20, which ``test_hostile.py`` reads under bounds in child
  processes (:mod:`fuzz.watch`); ``scripts/build_hostile.py`` writes them to a folder and
  measures them.
- :mod:`fuzz.cli` is the long run (``nox -s fuzz``): the mutation fuzzer for a count or a
  time, and atheris's coverage-guided fuzzer where it installs.
"""
