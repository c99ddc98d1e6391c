"""The package's documented examples run as written: every module with examples in its docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

# The modules whose docstrings hold examples; each must have at least one, and every one must pass.
DOCUMENTED = ["a13n_stream_rs", "a13n_stream_rs.display"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no docstring examples"
    assert result.failed == 0


def test_the_version_is_the_distributions() -> None:
    from importlib.metadata import version

    import a13n_stream_rs

    assert isinstance(a13n_stream_rs.__version__, str)
    assert a13n_stream_rs.__version__ == version("a13n-stream-rs")
