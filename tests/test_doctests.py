"""Run the docstring examples of every module: the scoring core and all of vision."""

import doctest
import importlib
import pkgutil

import pytest

import scoring
import vision

MODULES = sorted(
    [m.name for m in pkgutil.walk_packages(scoring.__path__, "scoring.")] + ["scoring", "vision"]
    + [m.name for m in pkgutil.walk_packages(vision.__path__, "vision.")]
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
