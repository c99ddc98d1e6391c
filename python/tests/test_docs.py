"""The package's documented examples run as written: every module with examples in its docstrings."""

from __future__ import annotations

import doctest
import importlib
import pathlib

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


def test_the_stubs_refuse_a_display_item_where_a_source_item_goes(tmp_path: pathlib.Path) -> None:
    """Found by helper-62: the README's snippet handed a display `Item` to `observe`, and the stubs, which typed a
    source item as `Any`, let mypy pass it. A source item is a native Harness item or a journal line."""
    # Without the Harness the stubs' source type is its `Any` (the package does not depend on it).
    pytest.importorskip("a13n_harness", reason="the source type names a13n-harness==0.21.0's (Python >= 3.13)")
    from mypy import api

    script = tmp_path / "misuse.py"
    script.write_text(
        "from a13n_stream_rs import HarnessAguiStreamObserver\n"
        "from a13n_stream_rs.display import DisplayFold\n"
        "item = next(iter(DisplayFold('r').items.values()))\n"
        "HarnessAguiStreamObserver().observe(item)\n"
        "HarnessAguiStreamObserver().observe('{}')\n"
    )
    out, _, status = api.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(script)])
    assert status == 1, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "misuse.py:4:" in errors[0] and '"observe"' in errors[0], out
