"""Docstring parameter docs in Google, NumPy and Sphinx style."""

from __future__ import annotations

from kforge.tools.docstrings import parse_docstring


def test_google() -> None:
    doc = parse_docstring(
        """Summary line.

        Longer text.

        Args:
            a (int): first
                continued.
            b: second.

        Returns:
            something
        """
    )
    assert doc.description == "Summary line.\n\nLonger text."
    assert doc.params == {"a": "first continued.", "b": "second."}


def test_numpy() -> None:
    doc = parse_docstring(
        """Summary.

        Parameters
        ----------
        a : int
            The first.
        b : str, optional
            The second
            on two lines.

        Returns
        -------
        int
            not a parameter
        """
    )
    assert doc.description == "Summary."
    assert doc.params == {"a": "The first.", "b": "The second on two lines."}


def test_sphinx_and_empty() -> None:
    doc = parse_docstring("Do it.\n\n:param x: the x\n:param int y: the y\n:returns: z")
    assert doc.params == {"x": "the x", "y": "the y"} and doc.description == "Do it."
    assert parse_docstring(None).params == {}


def test_numpy_names_sharing_one_entry() -> None:
    doc = parse_docstring(
        """Compare.

        Parameters
        ----------
        arg1, arg2 : dtype_like
            A dtype or an object coercible to one.
        start, end : int, optional
        """
    )
    assert doc.params == {
        "arg1": "A dtype or an object coercible to one.",
        "arg2": "A dtype or an object coercible to one.",
        "start": "",
        "end": "",
    }
