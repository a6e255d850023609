"""Real documentation sets for the benchmarks, taken from Debian's `*-doc` packages.

Each set is a folder of one package's documentation as Debian ships it (the same files a user
finds under /usr/share/doc). The packages are fetched with `apt-get download` (the Debian
registry) and unpacked with `dpkg-deb`, once, into a cache folder; nothing is installed.

    python benchmarks/docsets.py                 # fetch every set, print where each is
    python benchmarks/docsets.py nodejs git      # only these

| set | package (version used) | licence | what the folder holds |
| --- | --- | --- | --- |
| nodejs | nodejs-doc 18.20.4 | MIT | the API reference as Markdown (api/*.md) |
| git | git-doc 2.39.5 | GPL-2 | manual pages and guides as AsciiDoc (.txt) and HTML |
| gettext | gettext-doc 0.21 | GFDL-1.2+ / GPL-3+ | the GNU gettext manual, Texinfo HTML |
| python | python3.11-doc 3.11.2 | PSF-2.0 | the Python library reference, Sphinx HTML |
| mkdocs | mkdocs-doc 1.4.2 | BSD-2-Clause | the MkDocs user guide, MkDocs HTML |
| sqlite | sqlite3-doc 3.40.1 | public domain | SQLite's documentation, HTML (the C API as one page) |
| flask | python-flask-doc 2.2.2 | BSD-3-Clause | the Flask guide, tutorial and API, Sphinx HTML |
| click | python-click-doc 8.1.3 | BSD-3-Clause | the Click guide and API, Sphinx HTML |
| jinja | python-jinja2-doc 3.1.2 | BSD-3-Clause | the Jinja template designer guide and API, Sphinx HTML |
| pytest | python-pytest-doc 7.2.1 | MIT | pytest's how-to guides, explanations and reference, Sphinx HTML |
| scrapy | python-scrapy-doc 2.8.0 | BSD-3-Clause | the Scrapy tutorial, topic guides and FAQ, Sphinx HTML |
| postgresql | postgresql-doc-15 15.20 | PostgreSQL | PostgreSQL's client and server programs, backup and client authentication, DocBook HTML |
| sphinx | sphinx-doc 5.3.0 | BSD-2-Clause | the Sphinx tutorial, user guide, command manual pages, FAQ and glossary, Sphinx HTML |
| borgbackup | borgbackup-doc 1.2.4 | BSD-3-Clause | BorgBackup's introduction, quick start, command usage, deployment guides, FAQ and internals, Sphinx HTML |
| mypy | mypy-doc 1.0.1 | MIT | the mypy guide to type checking, command line, configuration and error codes, Sphinx HTML |
| django | python-django-doc 3.2.25 | BSD-3-Clause | Django's topic guides (models and queries, views, forms, templates, auth, testing, …) and FAQ, Sphinx HTML |
| celery | python-celery-doc 5.2.6 | CC-BY-SA-4.0 | Celery's getting-started guides, broker pages, user guide, FAQ and glossary, Sphinx HTML |
| psycopg | python-psycopg-doc 3.1.7 | LGPL-3 | Psycopg 3's basic usage, advanced topics and API reference, Sphinx HTML |
| aiohttp | python-aiohttp-doc 3.8.4 | Apache-2.0 | aiohttp's client and server guides and references, deployment, testing, FAQ, glossary and migration essays, Sphinx HTML |
| snakemake | snakemake-doc 7.21.0 | MIT | Snakemake's installation, tutorials, executor tutorials, Snakefile and execution guides and FAQ, Sphinx HTML |
| doxygen | doxygen-doc 1.9.4 | GPL-2 | the Doxygen manual: guides, FAQ, troubleshooting, usage, configuration and command reference, Doxygen HTML |
| diffutils | diffutils-doc 3.8 | GFDL-1.3+ | the GNU diffutils manual (diff, cmp, diff3, sdiff, patch), Texinfo HTML, one page per chapter |
| hypothesis | python-hypothesis-doc 6.67.1 | MPL-2.0 | Hypothesis's quick start, guides (settings, strategies, stateful testing, Django, NumPy, database, health checks, reproducing failures) and support pages, Sphinx HTML |
| apache | apache2-doc 2.4.71 | Apache-2.0 | the Apache HTTP Server manual's user's guide, how-tos, rewrite guide, SSL/TLS guide, virtual hosts and security and performance notes, English HTML |
| attrs | python-attr-doc 22.2.0 | MIT | the attrs overview, comparison with alternatives, examples, guides (type annotations, initialization, comparison, hashing, extending, how it works, API names), glossary and API reference, Sphinx HTML |
| requests | python-requests-doc 2.28.1 | Apache-2.0 | the Requests front page, installation, quickstart, advanced usage and authentication guides, FAQ, recommended packages, support, vulnerability disclosure and release process pages, and the API reference, Sphinx HTML |
| werkzeug | python-werkzeug-doc 2.2.2 | BSD-3-Clause | Werkzeug's overview, installation, tutorial, API levels, quickstart, serving, testing and debugging guides, reference pages (request and response objects, routing, data structures, HTTP and URL utilities, exceptions, context locals, …), middleware and deployment guides, Sphinx HTML |
| cmd2 | python-cmd2-doc 2.4.2 | MIT | the cmd2 overview, features (commands, argument parsing, completion, history, multiline commands, output redirection, scripting, settings, …), migration guide, examples and plugins, Sphinx HTML |
| doit | python-doit-doc 0.31.1 | MIT | doit's tasks, dependencies, task creation, the run command and the others, configuration, task arguments, up-to-date checks, tools, extending, FAQ and stories, Sphinx HTML |
| factoryboy | python-factory-boy-doc 2.11.1 | MIT | factory_boy's introduction, reference, ORM guides, recipes, fuzzy attributes, examples and internals, Sphinx HTML |
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DOCSETS", "Docset", "copy_set", "docset_path"]


@dataclass(frozen=True, slots=True)
class Docset:
    name: str
    package: str
    root: str
    """Folder inside the package that holds the documentation."""
    keep: tuple[str, ...]
    """Glob patterns (relative to ``root``) of the files that make up the set."""
    licence: str
    skip: tuple[str, ...] = ()
    """Patterns (``Path.match``) of kept files to leave out: indexes, link lists and pages that
    only repeat other pages' sentences or diagrams, which would compete with the pages that
    explain."""


_SPHINX_INDEXES = ("genindex.html", "py-modindex.html", "search.html", "404.html")
"""The pages of a Sphinx build that only index or search the others."""

DOCSETS: dict[str, Docset] = {
    d.name: d
    for d in (
        Docset("nodejs", "nodejs-doc", "usr/share/doc/nodejs/api", ("*.md.gz",), "MIT"),
        Docset("git", "git-doc", "usr/share/doc/git-doc", ("*.txt", "*.html"), "GPL-2"),
        Docset("gettext", "gettext-doc", "usr/share/doc/gettext", ("gettext_*.html",), "GFDL"),
        Docset(
            "python",
            "python3.11-doc",
            "usr/share/doc/python3.11/html/library",
            ("*.html",),
            "PSF-2.0",
        ),
        Docset("mkdocs", "mkdocs-doc", "usr/share/doc/mkdocs/html", ("**/*.html",), "BSD-2-Clause"),
        Docset(
            "sqlite",
            "sqlite3-doc",
            "usr/share/doc/sqlite3",
            ("*.html",),
            "public domain",
            skip=(
                "doc_*_crossref.html",
                "doclist.html",
                "keyword_index.html",
                "sitemap.html",
                "requirements.html",
                "syntaxdiagrams.html",
            ),
        ),
        Docset(
            "flask",
            "python-flask-doc",
            "usr/share/doc/python-flask-doc/html",
            ("**/*.html",),
            "BSD-3-Clause",
            skip=_SPHINX_INDEXES,
        ),
        Docset(
            "click",
            "python-click-doc",
            "usr/share/doc/python-click-doc/html",
            ("*.html",),
            "BSD-3-Clause",
            skip=_SPHINX_INDEXES,
        ),
        Docset(
            "jinja",
            "python-jinja2-doc",
            "usr/share/doc/python-jinja2-doc/html",
            ("*.html",),
            "BSD-3-Clause",
            skip=_SPHINX_INDEXES,
        ),
        Docset(
            "pytest",
            "python-pytest-doc",
            "usr/share/doc/python-pytest-doc/html",
            ("*.html", "how-to/*.html", "explanation/*.html", "reference/*.html", "example/*.html"),
            "MIT",
            # contents.html is the table of contents; plugin_list.html lists a thousand plugins
            skip=(*_SPHINX_INDEXES, "contents.html", "plugin_list.html"),
        ),
        Docset(
            "scrapy",
            "python-scrapy-doc",
            "usr/share/doc/python-scrapy-doc/html",
            ("*.html", "intro/*.html", "topics/*.html"),
            "BSD-3-Clause",
            # README.html only says how to build these pages
            skip=(*_SPHINX_INDEXES, "README.html"),
        ),
        Docset(
            "postgresql",
            "postgresql-doc-15",
            "usr/share/doc/postgresql-doc-15/html",
            (
                "app-*.html",
                "pg*.html",
                "backup*.html",
                "continuous-archiving.html",
                "client-authentication*.html",
                "auth-*.html",
                "gssapi-auth.html",
                "sspi-auth.html",
            ),
            "PostgreSQL",
            skip=(
                # the pages that only say a program was renamed
                "app-pgreceivexlog.html",
                "app-pgresetxlog.html",
                "app-postmaster.html",
                "pgxlogdump.html",
                # the extension modules of the appendix, not the programs or chapters kept
                "pgbuffercache.html",
                "pgcrypto.html",
                "pgfreespacemap.html",
                "pgprewarm.html",
                "pgrowlocks.html",
                "pgstatstatements.html",
                "pgstattuple.html",
                "pgsurgery.html",
                "pgtrgm.html",
                "pgvisibility.html",
                "pgwalinspect.html",
                "auth-delay.html",
                # the file format of backup manifests, an appendix of its own
                "backup-manifest-*.html",
            ),
        ),
        Docset(
            "sphinx",
            "sphinx-doc",
            "usr/share/doc/sphinx-doc/html",
            ("faq.html", "glossary.html", "usage/**/*.html", "tutorial/*.html", "man/*.html"),
            "BSD-2-Clause",
            # the two index.html are tables of contents; the example pages hold only sample code
            skip=(
                *_SPHINX_INDEXES,
                "usage/index.html",
                "man/index.html",
                "example_google.html",
                "example_numpy.html",
            ),
        ),
        Docset(
            "borgbackup",
            "borgbackup-doc",
            "usr/share/doc/borgbackup/html",
            ("*.html", "usage/*.html", "deployment/*.html", "internals/*.html"),
            "BSD-3-Clause",
            skip=(
                *_SPHINX_INDEXES,
                # tables of contents, and index.html repeats introduction.html
                "book.html",
                "index.html",
                "usage.html",
                "deployment.html",
                # man_intro.html repeats usage/general.html; changes.html is the change log;
                # paperkey.html is a form for printing a key; authors and development are
                # about the project, not its use
                "man_intro.html",
                "changes.html",
                "paperkey.html",
                "authors.html",
                "development.html",
            ),
        ),
        Docset(
            "mypy",
            "mypy-doc",
            "usr/share/doc/mypy/html",
            ("*.html",),
            "MIT",
            skip=_SPHINX_INDEXES,
        ),
        Docset(
            "django",
            "python-django-doc",
            "usr/share/doc/python-django-doc/html",
            ("topics/**/*.html", "faq/*.html"),
            "BSD-3-Clause",
            # tables of contents, and the FAQ pages on getting help and contributing to Django
            skip=(
                "topics/index.html",
                "topics/db/index.html",
                "topics/db/examples/index.html",
                "topics/http/index.html",
                "faq/index.html",
                "faq/help.html",
                "faq/contributing.html",
            ),
        ),
        Docset(
            "celery",
            "python-celery-doc",
            "usr/share/doc/python-celery-doc/html",
            (
                "faq.html",
                "glossary.html",
                "getting-started/**/*.html",
                "userguide/**/*.html",
                "django/*.html",
                "tutorials/*.html",
            ),
            "CC-BY-SA-4.0",
            # tables of contents (the brokers' index.html compares the brokers: kept)
            skip=(
                "getting-started/index.html",
                "userguide/index.html",
                "django/index.html",
                "tutorials/index.html",
            ),
        ),
        Docset(
            "psycopg",
            "python-psycopg-doc",
            "usr/share/doc/python-psycopg-doc/html",
            ("basic/*.html", "advanced/*.html", "api/*.html"),
            "LGPL-3",
            # the three index.html are tables of contents
            skip=("index.html",),
        ),
        Docset(
            "aiohttp",
            "python-aiohttp-doc",
            "usr/share/doc/python-aiohttp-doc/html",
            ("*.html",),
            "Apache-2.0",
            # tables of contents (client, web, utilities, misc, essays), the change log, the
            # contributors' guide and the lists of projects that use aiohttp
            skip=(
                *_SPHINX_INDEXES,
                "client.html",
                "web.html",
                "utilities.html",
                "misc.html",
                "essays.html",
                "changes.html",
                "contributing.html",
                "external.html",
                "powered_by.html",
                "built_with.html",
                "third_party.html",
            ),
        ),
        Docset(
            "snakemake",
            "snakemake-doc",
            "usr/share/doc/snakemake/html",
            (
                "index.html",
                "getting_started/*.html",
                "tutorial/*.html",
                "executor_tutorial/*.html",
                "snakefiles/*.html",
                "executing/*.html",
                "project_info/faq.html",
            ),
            "MIT",
        ),
        Docset(
            "doxygen",
            "doxygen-doc",
            "usr/share/doc/doxygen/html",
            ("*.html",),
            "GPL-2",
            # pages.html is the table of contents; graph_legend.html explains one sample graph;
            # emojisup.html is mostly the list of emoji names
            skip=("pages.html", "graph_legend.html", "emojisup.html"),
        ),
        Docset(
            "diffutils",
            "diffutils-doc",
            "usr/share/doc/diffutils",
            # the manual's chapters, one page each; the other pages only redirect to a section
            # of a chapter, or are the table of contents, the index and the licence's text
            (
                "Overview.html",
                "Comparison.html",
                "Output-Formats.html",
                "Incomplete-Lines.html",
                "Comparing-Directories.html",
                "Adjusting-Output.html",
                "diff-Performance.html",
                "Comparing-Three-Files.html",
                "diff3-Merging.html",
                "Interactive-Merging.html",
                "Merging-with-patch.html",
                "Making-Patches.html",
                "Invoking-cmp.html",
                "Invoking-diff.html",
                "Invoking-diff3.html",
                "Invoking-patch.html",
                "Invoking-sdiff.html",
                "Standards-conformance.html",
                "Projects.html",
                "Translations.html",
            ),
            "GFDL-1.3+",
        ),
        Docset(
            "hypothesis",
            "python-hypothesis-doc",
            "usr/share/doc/python-hypothesis-doc/html",
            ("*.html",),
            "MPL-2.0",
            # changes.html is the change log; endorsements.html quotes users about the library;
            # ghostwriter.html holds only its title (its reference is generated from the code,
            # which this build leaves out)
            skip=(*_SPHINX_INDEXES, "changes.html", "endorsements.html", "ghostwriter.html"),
        ),
        Docset(
            "apache",
            "apache2-doc",
            "usr/share/doc/apache2-doc/manual/en",
            # the English manual's user's guide and its how-to, rewrite, SSL/TLS, virtual host
            # and miscellaneous guides; not the module and directive reference, the manual
            # pages of the programs, the developer and platform notes or the other languages
            (
                "*.html",
                "howto/*.html",
                "rewrite/*.html",
                "ssl/*.html",
                "vhosts/*.html",
                "misc/*.html",
            ),
            "Apache-2.0",
            # index.html pages list the pages of a folder and sitemap.html all of them;
            # license.html is the licence's text; new_features_*.html are release notes;
            # ssl_compat.html maps other servers' directives and variables onto mod_ssl's;
            # relevant_standards.html lists the RFCs the server follows
            skip=(
                "index.html",
                "sitemap.html",
                "license.html",
                "new_features_*.html",
                "ssl_compat.html",
                "relevant_standards.html",
            ),
        ),
        Docset(
            "attrs",
            "python-attr-doc",
            "usr/share/doc/python-attr-doc/html",
            ("*.html",),
            "MIT",
            # changelog.html is the change log
            skip=(*_SPHINX_INDEXES, "changelog.html"),
        ),
        Docset(
            "requests",
            "python-requests-doc",
            "usr/share/doc/python-requests-doc/html",
            ("*.html", "user/*.html", "community/*.html"),
            "Apache-2.0",
            # updates.html is the change log; out-there.html lists articles and talks
            skip=(*_SPHINX_INDEXES, "updates.html", "out-there.html"),
        ),
        Docset(
            "werkzeug",
            "python-werkzeug-doc",
            "usr/share/doc/python-werkzeug-doc/html",
            ("*.html", "deployment/*.html", "middleware/*.html"),
            "BSD-3-Clause",
            # changes.html is the change log; license.html is the licence's text
            skip=(*_SPHINX_INDEXES, "changes.html", "license.html"),
        ),
        Docset(
            "cmd2",
            "python-cmd2-doc",
            "usr/share/doc/python-cmd2-doc/html",
            (
                "*.html",
                "overview/*.html",
                "migrating/*.html",
                "features/*.html",
                "examples/*.html",
                "plugins/*.html",
            ),
            "MIT",
            # index.html pages and summary.html only list the pages of a folder; resources.html
            # lists links; the api/ pages hold no text in this build (navigation only)
            skip=(*_SPHINX_INDEXES, "index.html", "summary.html", "resources.html"),
        ),
        Docset(
            "doit",
            "python-doit-doc",
            "usr/share/doc/python-doit-doc/html",
            ("*.html",),
            "MIT",
            # contents.html is the table of contents, changes.html the change log and
            # related.html a list of links
            skip=(*_SPHINX_INDEXES, "contents.html", "changes.html", "related.html"),
        ),
        Docset(
            "factoryboy",
            "python-factory-boy-doc",
            "usr/share/doc/python-factory-boy-doc/html",
            ("*.html",),
            "MIT",
            skip=_SPHINX_INDEXES,
        ),
    )
}


def cache_root() -> Path:
    base = os.environ.get("KFORGE_DOCSETS") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "kforge-docsets"
    )
    return Path(base)


def docset_path(name: str, *, fetch: bool = True) -> Path:
    """The folder of doc set ``name``, fetched and unpacked on first use."""
    docset = DOCSETS[name]
    target = cache_root() / name
    if (target / ".complete").exists():
        return target
    if not fetch:
        raise FileNotFoundError(
            f"doc set {name!r} is not fetched; run benchmarks/docsets.py {name}"
        )
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise RuntimeError(
            f"doc set {name!r} comes from the Debian package {docset.package}: "
            "this needs apt-get and dpkg-deb (a Debian or Ubuntu machine)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["apt-get", "download", docset.package],
            cwd=tmp,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deb = next(Path(tmp).glob("*.deb"))
        unpacked = Path(tmp) / "x"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        version = deb.name.split("_")[1].replace("%3a", ":")
        if target.exists():
            shutil.rmtree(target)
        copy_set(docset, unpacked / docset.root, target)
        (target / ".complete").write_text(f"{docset.package} {version}\n")
    return target


def copy_set(docset: Docset, src: Path, target: Path) -> None:
    """The files of ``src`` that ``docset`` keeps and does not skip, copied under ``target`` at
    the same relative paths; a ``.gz`` file is written decompressed, without its suffix."""
    target.mkdir(parents=True, exist_ok=True)
    for pattern in docset.keep:
        for path in sorted(src.glob(pattern)):
            rel = path.relative_to(src)
            if not path.is_file() or any(rel.match(p) for p in docset.skip):
                continue
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".gz":
                out = out.with_suffix("")
                out.write_bytes(gzip.decompress(path.read_bytes()))
            else:
                shutil.copyfile(path, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"sets: {', '.join(DOCSETS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in DOCSETS]
    if unknown:
        parser.error(f"unknown doc set {unknown[0]!r}; known: {', '.join(DOCSETS)}")
    for name in args.names or DOCSETS:
        path = docset_path(name)
        files = sum(1 for p in path.rglob("*") if p.is_file() and p.name != ".complete")
        print(f"{name:8} {(path / '.complete').read_text().strip():32} {files:5} files  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
