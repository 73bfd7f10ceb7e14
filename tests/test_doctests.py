"""Run the docstring examples of the scoring core and the shared vision modules."""

import doctest
import importlib
import pkgutil

import pytest

import scoring

MODULES = sorted(
    [f"scoring.{m.name}" for m in pkgutil.iter_modules(scoring.__path__)] + ["scoring", "vision", "vision.geometry"]
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
