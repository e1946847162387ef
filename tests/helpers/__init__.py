"""Test helpers shared by aorc's test suite and benchmarks.

These modules are deliberately independent of aorc: they parse ORC type strings, render Arrow
tables in the ORC C++ row-printer format, locate the conformance corpus and build random
tables, so that they can judge aorc's output instead of repeating it.
"""
