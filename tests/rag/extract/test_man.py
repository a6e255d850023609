"""Manual pages (troff with the man macros) read as ``man`` shows them, and files compressed
with gzip read as the file they hold."""

from __future__ import annotations

import gzip

import pytest

from kforge.rag.extract import ExtractionError, extract, format_of

PAGE = r""".\" A comment line shows nothing.
.TH KF\-WIDGET 3 "2026-01-02" "widget 1.0" "Widget Manual"
.SH NAME
kf-widget \- build a widget from parts
.SH SYNOPSIS
.nf
#include <widget.h>

int kf_widget(const char *\fIname\fP, long \fBflags\fP);
.fi
.SH DESCRIPTION
\fBkf_widget\fP builds a widget called
\fIname\fP \(em it never blocks.
The default timeout is 30 seconds.
.SS Flags
.TP
.B WIDGET_FAST
Skip the checks\&.
.TP
.BR WIDGET_SLOW " (2)"
Run every check.
.IP \(bu 2
A bulleted item.
.PP
\-v, \-\-verbose
.RS 4
Print each step.
.RE
.ie n .IP "tty only" 4
.el .IP "typeset only" 4
Shown on a terminal.
.if t \{\
This line is for typesetters.
.\}
.de XX
a macro's body is no text
..
.TS
tab(:);
l l.
Name:Value
size:T{
twelve
units
T}
.TE
.SH EXAMPLE
.EX
kf_widget("w", 0);
.EE
.SH DEFAULT
No flags.
.SH "SEE ALSO"
.BR kf_free (3),
.BR kf_new (3)
"""


def test_names_of_files_that_are_read() -> None:
    assert format_of("man3/curl_easy_setopt.3") == "man"
    assert format_of("man1/ls.1.gz") == "man"
    assert format_of("man3/Net::DBus.3pm.gz") == "man"
    assert format_of("man3/PA_FLAG_PTR.3const.gz") == "man"
    assert format_of("man3/readline.3readline.gz") == "man"
    assert format_of("HSTS.md.gz") == "markdown"
    assert format_of("doc/FAQ.gz") == "text"
    assert format_of("README") == "text"
    assert format_of("KNOWN_BUGS") == "text"
    assert format_of("examples/http") is None  # a lower-case name without a suffix
    assert format_of("changelog.gz") is None
    assert format_of("archive.tar.gz") is None


def test_a_manual_page_reads_as_man_shows_it() -> None:
    doc = extract("man3/kf-widget.3", PAGE.encode())
    assert doc.format == "man"
    assert doc.title == "kf-widget"  # the NAME section's spelling of the .TH name
    assert [s.heading for s in doc.sections] == [
        "kf-widget",
        "kf-widget > SYNOPSIS",
        "kf-widget > DESCRIPTION",
        "kf-widget > DESCRIPTION > Flags",
        "kf-widget > EXAMPLE",
    ]
    text = doc.text
    # a section of one short paragraph is a field of the one before; NAME is the first line
    assert text.startswith("kf-widget\n\nkf-widget - build a widget from parts\n\nSYNOPSIS")
    assert text.endswith(
        'kf_widget("w", 0);\n\nDEFAULT: No flags.\nSEE ALSO: kf_free(3), kf_new(3)'
    )
    assert (
        "kf_widget builds a widget called name \u2014 it never blocks. "
        "The default timeout is 30 seconds." in text
    )
    assert "WIDGET_FAST: Skip the checks.\nWIDGET_SLOW (2): Run every check." in text
    assert "\nA bulleted item.\n" in text
    assert "-v, --verbose: Print each step." in text
    assert "tty only: Shown on a terminal." in text
    assert "typeset" not in text and "macro" not in text and "comment" not in text
    assert "Name | Value\nsize | twelve units" in text
    assert "\\" not in text
    assert [text[start:end] for start, end in doc.code] == [
        "#include <widget.h>\n\nint kf_widget(const char *name, long flags);",
        'kf_widget("w", 0);',
    ]


def test_pages_that_are_not_read_say_why() -> None:
    with pytest.raises(ExtractionError, match=r"only includes man3/other\.3 \(\.so\)"):
        extract("alias.3", b".so man3/other.3\n")
    with pytest.raises(ExtractionError, match=r"no \.TH line"):
        extract("server.log.1", b"12:00 started\n12:01 stopped\n")


def test_a_gzip_file_is_read_as_the_file_it_holds() -> None:
    doc = extract("HSTS.md.gz", gzip.compress(b"# HSTS\n\nHosts are kept a year.\n"))
    assert (doc.format, doc.title, doc.text) == (
        "markdown",
        "HSTS",
        "# HSTS\n\nHosts are kept a year.\n",
    )
    page = extract("kf-widget.3.gz", gzip.compress(PAGE.encode()))
    assert page.format == "man" and "WIDGET_FAST: Skip the checks." in page.text
    two_members = gzip.compress(b"first part\n") + gzip.compress(b"second part\n")
    assert extract("FAQ.gz", two_members).text == "first part\nsecond part\n"


def test_a_broken_gzip_file_is_refused() -> None:
    with pytest.raises(ExtractionError, match="not a readable gzip file"):
        extract("FAQ.gz", b"plain bytes, not gzip")
    with pytest.raises(ExtractionError, match="truncated gzip file"):
        extract("FAQ.gz", gzip.compress(b"x" * 5000)[:-12])


MDOC = r""".\" A BSD manual page: the mdoc macros
.Dd $Mdocdate: January 13 2023 $
.Dt WIDGET_CONFIG 5
.Os
.Sh NAME
.Nm widget_config
.Nd widget client configuration file
.Sh DESCRIPTION
.Xr widget 1
reads
.Pa ~/.widget/config
first
.Pq see Sx FILES .
Lines starting with
.Ql #
are comments.
.Bl -tag -width Ds
.It Cm ServerAliveInterval
Sets a timeout interval in seconds.
The default is 0.
.It Fl b Xo
.Ar bind_address
.Xc
Use bind_address on the local machine.
.It Cm Port
The port to connect to
.Po default
.Dq 22
.Pc .
.El
.Pp
Connect as
.Sm off
.Oo Ar user No @ Oc Ar host
.Sm on
with
.Fl p Ar port .
.Bl -column "Table size" "Default"
.It Sy Table size Ta Sy Default
.It Cm MaxTables Ta 16
.El
.Bd -literal -offset indent
Host example
    Port 2222
.Ed
.Sh FILES
.Pa ~/.widget/config
"""


def test_a_bsd_manual_page_reads_as_man_shows_it() -> None:
    doc = extract("man5/widget_config.5.gz", gzip.compress(MDOC.encode()))
    assert (doc.format, doc.title) == ("man", "widget_config")
    assert [s.heading for s in doc.sections] == ["widget_config", "widget_config > DESCRIPTION"]
    text = doc.text
    assert text.startswith("widget_config\n\nwidget_config - widget client configuration file")
    assert "widget(1) reads ~/.widget/config first (see FILES)." in text
    assert "Lines starting with \u2018#\u2019 are comments." in text
    assert "ServerAliveInterval: Sets a timeout interval in seconds. The default is 0.\n" in text
    assert "Port: The port to connect to (default \u201c22\u201d)." in text
    assert "\n-b bind_address: Use bind_address on the local machine.\n" in text
    assert "Connect as [user@]host with -p port." in text
    assert "\nTable size | Default\nMaxTables | 16\n" in text  # "Table" is no cell break
    assert [text[a:b] for a, b in doc.code] == ["Host example\n    Port 2222"]
    assert text.endswith("FILES: ~/.widget/config")


def test_a_manual_page_not_in_utf8_says_how_it_was_read() -> None:
    doc = extract("x.1", ".TH X 1\n.SH NAME\nx \\- caf\xe9 tool\n".encode("latin-1"))
    assert doc.extra == {"encoding": "cp1252"} and "x - caf\xe9 tool" in doc.text
