"""The package's documented examples run as written."""

from __future__ import annotations

import doctest

import a13n_stream_rs


def test_the_package_docstring_examples_run() -> None:
    result = doctest.testmod(a13n_stream_rs)
    assert result.attempted > 0 and result.failed == 0
