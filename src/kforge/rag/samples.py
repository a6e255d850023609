"""The sample corpus shipped with kforge: short documents on agents, retrieval and oversight."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kforge.errors import ConfigurationError

__all__ = ["SAMPLE_CORPUS", "sample_corpus_path"]

SAMPLE_CORPUS = "samples"
"""The corpus name the sample documents are ingested under by default."""


def sample_corpus_path() -> Path:
    """The folder of sample Markdown documents inside the installed package."""
    folder = Path(str(resources.files("kforge").joinpath("samples", "corpus")))
    if not folder.is_dir():
        raise ConfigurationError(
            f"the sample corpus is missing from the installation ({folder}); reinstall "
            "knowledge-forge, or pass your own folder of documents"
        )
    return folder
