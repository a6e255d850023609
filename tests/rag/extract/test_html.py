from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.extract import extract

PAGE = b"""<!doctype html><html><head><title>Agent Notes</title>
<style>p { color: red }</style><script>var secret = 1;</script></head>
<body><nav>Menu</nav><h1>Durable <em>runs</em></h1>
<p>Checkpoints let a run   resume
after a crash.</p><ul><li>one</li><li>two</li></ul>
<h2>Resume</h2><p>Resume from the last step &amp; continue.<br>Next line.</p>
<pre>code
  indented</pre></body></html>"""


def test_visible_text_only_with_paragraph_breaks() -> None:
    doc = extract("notes.html", PAGE)
    assert doc.title == "Agent Notes"
    assert "secret" not in doc.text and "color" not in doc.text
    assert "Checkpoints let a run resume after a crash." in doc.text
    assert "one\ntwo" in doc.text  # a list item per line
    assert "Resume from the last step & continue.\nNext line." in doc.text
    assert "code\n  indented" in doc.text


def test_headings_point_at_their_text() -> None:
    doc = extract("notes.html", PAGE)
    assert [s.heading for s in doc.sections] == ["Durable runs", "Durable runs > Resume"]
    for section in doc.sections:
        assert doc.text[section.start : section.body_start] == section.heading.split(" > ")[-1]


def test_broken_html_still_yields_text() -> None:
    doc = extract("broken.html", b"<p>unclosed <b>bold <div>text</p></span>")
    assert "unclosed bold" in doc.text and "text" in doc.text


def test_unclosed_head_and_title_do_not_swallow_the_body() -> None:
    doc = extract("x.html", b"<html><head><title>Quick<meta charset=utf-8><body><p>Body text.</p>")
    assert doc.title == "Quick"
    assert doc.text == "Body text."
    doc = extract("y.html", b"<head><title></title></head><p>Only body.</p>")
    assert doc.title == "Y" and doc.text == "Only body."


def test_page_chrome_is_left_out() -> None:
    doc = extract("x.html", PAGE.replace(b"<pre>", b"<footer>(c) 2024</footer><pre>"))
    assert "Menu" not in doc.text and "2024" not in doc.text


def test_a_folding_table_of_contents_and_a_tagline_are_left_out() -> None:
    page = (
        b'<body><div class="tagline desktoponly">Small. Fast. Reliable.<br>Choose any three.'
        b'</div><h1>Application-Defined SQL Functions</h1><div class="fancy_toc">'
        b'<a onclick="toggle_toc()"><span class="fancy_toc_mark">&#x25ba;</span>'
        b'Table Of Contents</a><div id="toc_sub"><div class="fancy-toc1">'
        b'<a href="#s">1. Executive Summary</a></div></div></div>'
        b"<p>Applications can define new SQL functions.</p></body>"
    )
    doc = extract("appfunc.html", page)
    assert "Table Of Contents" not in doc.text and "Executive Summary" not in doc.text
    assert "Choose any three" not in doc.text  # a site's tagline
    assert "Applications can define new SQL functions." in doc.text


def test_texinfo_navigation_lines_and_skip_links_are_dropped() -> None:
    page = (
        b'<body><a class="skip" href="#main">Skip to main content</a>'
        b'<div class="header"><p>Next: <a href="t.html">Thread Safety</a>, Previous: '
        b'<a href="c.html">The Closure API</a>, Up: <a href="u.html">Using libffi</a> '
        b'[<a href="i.html">Index</a>]</p></div><h3>Closure Example</h3>'
        b"<p>A trivial example that creates a new puts by binding fputs with stdout.</p>"
        b"<pre>ffi_type *tm_type_elements[12];\nvoid **code;</pre>"
        b"</body>"
    )
    doc = extract("closures.html", page)
    assert "Thread Safety" not in doc.text and "Skip to" not in doc.text
    assert "ffi_type *tm_type_elements[12];\nvoid **code;" in doc.text
    assert doc.code and doc.text[doc.code[0][0] : doc.code[0][1]].startswith("ffi_type")


def test_tables_are_rows_and_definition_lists_are_entries() -> None:
    page = (
        b"<h1>Limits</h1><table><tr><th>Limit</th><th>Default</th></tr>"
        b"<tr><td>steps</td><td>5</td></tr><tr><td>retries</td><td>3</td></tr></table>"
        b"<dl><dt><code>-q</code></dt><dt><code>--quiet</code></dt><dd><p>Print less.</p></dd>"
        b"<dt>EOL</dt><dd>The end-of-line marker.</dd></dl>"
        b"<ul><li><p>First item,</p><p>still first.</p></li><li>Second</li></ul>"
    )
    doc = extract("limits.html", page)
    assert "Limit | Default\nsteps | 5\nretries | 3" in doc.text
    assert "-q, --quiet: Print less.\nEOL: The end-of-line marker." in doc.text
    assert "First item, still first.\nSecond" in doc.text


def test_main_content_is_preferred_over_the_page_around_it() -> None:
    page = (
        b"<body><div class='sidebar'><p>Site menu text</p></div><div><p>Banner words</p></div>"
        b"<main><h1>Guide</h1><p>The document itself.</p></main><p>Copyright line</p></body>"
    )
    doc = extract("m.html", page)
    assert doc.text == "Guide\n\nThe document itself."


def test_several_articles_are_a_listing_and_all_of_them_are_kept() -> None:
    page = b"<body><article><p>First post.</p></article><article><p>Second post.</p></article>"
    assert extract("l.html", page).text == "First post.\n\nSecond post."


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *[
                    "<p>",
                    "</p>",
                    "<h2>",
                    "</h2>",
                    "<li>",
                    "<ul>",
                    "</ul>",
                    "<pre>",
                    "</pre>",
                    "<td>",
                    "<tr>",
                    "<table>",
                    "</table>",
                    "<dl>",
                    "<dt>",
                    "<dd>",
                    "<nav>",
                    "</nav>",
                    "<br>",
                    "word",
                    "&amp;",
                    "**x",
                    "[12]",
                    "<main>",
                    "</div>",
                ],
                "two words",
                "  ",
                "\n",
            ]
        ),
        max_size=60,
    )
)
def test_for_any_tag_soup_headings_point_at_their_text(parts: list[str]) -> None:
    doc = extract("soup.html", "".join(parts).encode())
    for section in doc.sections:
        assert doc.text[section.start : section.body_start] == section.heading.split(" > ")[-1]
    for start, end in doc.code:
        assert 0 <= start < end <= len(doc.text)


def test_a_texinfo_page_is_titled_by_its_section_not_its_manual() -> None:
    head = b'<head><title>%s</title><meta name="Generator" content="texi2html 1.78a"></head>'
    body = b"<body><h1>Footnotes</h1><p>(1) A note.</p></body>"
    titled = extract("fot.html", head % b"GNU gettext utilities: Footnotes" + body)
    assert titled.title == "Footnotes"
    untitled = extract("fot.html", head % b"GNU gettext utilities" + body)
    assert untitled.title == "Footnotes"
    assert untitled.extra["full_title"] == "GNU gettext utilities: Footnotes"


def test_a_list_of_links_to_the_page_itself_is_its_table_of_contents_and_is_left_out() -> None:
    page = b"""<html><body><h1>Frequently Asked Questions</h1><ol>
    <li value='18'><a href="#q18">Case-insensitive matching does not work.</a></li>
    <li value='19'><a href="#q19">INSERT is really slow - I can only do few dozen INSERTs</a></li>
    <li value='20'><a href="#q20">I accidentally deleted some important information.</a></li>
    </ol><p><b>(19) INSERT is really slow - I can only do few dozen INSERTs</b></p>
    <p>Actually, SQLite will easily do 50,000 or more INSERT statements per second.</p>
    <ul><li><a href="#a">See a</a> for the rest.</li><li><a href="#b">b</a></li>
    <li><a href="#c">c</a></li></ul>
    </body></html>"""
    text = extract("faq.html", page).text
    assert text.count("INSERT is really slow") == 1  # the question, once, where it is answered
    assert "Case-insensitive matching" not in text
    assert "See a for the rest." in text  # an item saying more than its link stays


DOXYGEN_PAGE = b"""<html><head><meta name="generator" content="Doxygen 1.9.4"/>
<title>Widgets: Configuration</title></head><body>
<div id="top"><div id="titlearea"><div id="projectname">Widgets</div></div></div>
<div id="side-nav"><div id="nav-tree">Tree</div></div>
<div id="doc-content"><div><div class="header"><div class="headertitle">
<div class="title">Configuration </div></div></div>
<div class="contents"><div class="toc"><h3>Table of Contents</h3><ul>
<li class="level1"><a href="#format">Format</a></li><li class="level1"><a href="#a">A</a></li>
<li class="level1"><a href="#b">B</a></li></ul></div>
<div class="textblock"><ul class="multicol"><li><a class="el" href="config.html#cfg_a">TAB_SIZE</a></li>
<li><a class="el" href="config.html#cfg_b">THREADS</a></li></ul>
<h1><a class="anchor" id="format"></a>Format</h1>
<p>A configuration file is a free-form ASCII text file.</p>
<dl><dt><code>TAB_SIZE</code></dt><dd><p>The number of spaces in a tab.</p></dd></dl>
</div></div></div>
<hr class="footer"/><address class="footer">Generated by doxygen 1.9.4</address></body></html>"""


def test_a_doxygen_page_reads_as_its_contents_titled_by_its_header() -> None:
    # Doxygen's div.contents holds the page; its option index and table of contents do not
    doc = extract("config.html", DOXYGEN_PAGE)
    assert doc.title == "Configuration"
    assert doc.text == (
        "Format\n\nA configuration file is a free-form ASCII text file.\n\n"
        "TAB_SIZE: The number of spaces in a tab."
    )


DOCUTILS_PAGE = b"""<!doctype html><html><head><title>Introduction</title></head><body>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><p>Quick search</p></div>
<div class="body" role="main"><aside class="sidebar"><p class="sidebar-title">Trainings</p>
<p>A course in March.</p></aside><section><h1>Introduction</h1>
<aside class="sidebar"><p class="sidebar-title">Version Requirements</p>
<p>Version 5.2 runs on Python 3.7 or newer.</p></aside>
<p>Workers take tasks from a queue.<a class="footnote-reference brackets" href="#f1">1</a></p>
<aside class="topic"><p class="topic-title">Finding a precise rule</p>
<p>Run the monitor and connect the drive.</p></aside>
<section><h2>Workers</h2><p>A worker runs tasks.</p></section></section>
<div class="contents topic" id="contents"><p class="topic-title">Contents</p>
<ul><li><a href="#a">Introduction</a></li></ul></div>
<aside class="footnote-list brackets"><aside class="footnote brackets" id="f1" role="note">
<span class="label"><span class="fn-bracket">[</span>1<span class="fn-bracket">]</span></span>
<span class="backrefs">(<a role="doc-backlink" href="#r1">1</a>,<a href="#r2">2</a>)</span>
<p>Only the prefork pool is supported.</p></aside></aside>
</div>
<aside class="toc-drawer"><p>On this page</p></aside></body></html>"""


def test_a_documents_topics_sidebars_and_footnotes_are_its_text() -> None:
    # docutils writes them as <aside> since 0.18; a theme's asides stay out, a sidebar is read
    # after the text it stands beside (before the next section), and a footnote's "[1]" label,
    # quoted, would read as a citation marker
    doc = extract("introduction.html", DOCUTILS_PAGE)
    assert doc.text == (
        "Introduction\n\nWorkers take tasks from a queue.\n\nFinding a precise rule\n\n"
        "Run the monitor and connect the drive.\n\nVersion Requirements\n\n"
        "Version 5.2 runs on Python 3.7 or newer.\n\nWorkers\n\nA worker runs tasks.\n\n"
        "Only the prefork pool is supported.\n\nTrainings\n\nA course in March."
    )


NAVIGATED_PAGE = b"""<!doctype html><html><head><title>dropuser</title></head><body>
<div id="hd"><h1><a href="index.html">Manual 3.2 documentation</a></h1>
<div id="global-nav"><a href="index.html">Home</a> | <a href="genindex.html">Index</a></div>
<div class="nav">&laquo; <a href="a.html">previous</a> | <a href="b.html">next</a> &raquo;</div></div>
<div class="navheader"><table><tr><th colspan="3">dropuser</th></tr><tr><td><a href="a.html">
Prev</a></td><td><a href="u.html">Up</a></td><td><a href="b.html">Next</a></td></tr></table></div>
<div class="deck"><p>This document describes the current stable version of Tool (5.2).
For development docs, <a href="https://example.org/dev/">go here</a>.</p></div>
<h2>dropuser</h2><p>dropuser removes an existing user.</p>
<h2 id="nav">nav</h2><p>The nav option sets the order of the pages.</p>
<p>Go to the next section or return to the <a href="index.html">index</a>.</p>
<div class="navfooter"><table><tr><td><a href="a.html">Prev</a></td><td>
<a href="index.html">Home</a></td></tr></table></div>
<div id="ft"><div class="nav"><a href="a.html">previous</a> | <a href="b.html">next</a></div>
</div></body></html>"""


def test_navigation_bars_version_banners_and_where_next_lines_are_left_out() -> None:
    # a YUI page header (Django's manual), DocBook's Prev/Up/Next tables (PostgreSQL's), a
    # theme's release banner and a "go to the next section" line are on every page alike;
    # a section whose id is "nav" (an option of that name) is the document
    doc = extract("dropuser.html", NAVIGATED_PAGE)
    assert doc.text == (
        "dropuser\n\ndropuser removes an existing user.\n\n"
        "nav\n\nThe nav option sets the order of the pages."
    )


APACHE_MANUAL_PAGE = b"""<!DOCTYPE html><html lang="en"><head><title>Log Files</title></head>
<body id="manual-page"><div id="page-header">
<p class="menu"><a href="mod/">Modules</a> | <a href="glossary.html">Glossary</a></p>
<p class="apache">Apache HTTP Server Version 2.4</p></div>
<div id="path"><a href="http://www.apache.org/">Apache</a> &gt; <a href="/">HTTP Server</a>
&gt; <a href="./">Documentation</a> &gt; <a href="./">Version 2.4</a></div>
<div id="page-content"><div id="preamble"><h1>Log Files</h1>
<div class="toplang"><p><span>Available Languages: </span><a href="logs.html.en">en</a> |
<a href="logs.html.fr">fr</a></p></div>
<p>The server keeps an error log and an access log.</p></div>
<div id="quickview"><ul id="toc"><li><a href="#errorlog">Error Log</a></li></ul>
<h3>See also</h3><ul class="seealso"><li><a href="custom-error.html">Errors</a></li></ul></div>
<div class="top"><a href="#page-header"><img alt="top" src="up.gif"></a></div>
<div class="section"><h2><a name="errorlog" id="errorlog">Error Log</a></h2>
<p>The error log is set by the ErrorLog directive.</p></div>
<div class="section" id="section-path"><h2>The path &gt; of a request</h2>
<p>A request goes from the client &gt; the proxy &gt; the server.</p></div></div>
<div class="bottomlang"><p><span>Available Languages: </span><a href="logs.html.en">en</a></p>
</div><div class="top"><a href="#page-header"><img alt="top" src="up.gif"></a></div>
<div id="footer"><p class="apache">Copyright 2025 The Apache Software Foundation.</p></div>
</body></html>"""


def test_the_apache_manuals_header_breadcrumbs_and_language_bars_are_left_out() -> None:
    # a trail of links is chrome; a sentence with ">" in it is the document
    doc = extract("logs.html", APACHE_MANUAL_PAGE)
    assert doc.text == (
        "Log Files\n\nThe server keeps an error log and an access log.\n\n"
        "Error Log\n\nThe error log is set by the ErrorLog directive.\n\n"
        "The path > of a request\n\nA request goes from the client > the proxy > the server."
    ), doc.text


def test_a_manual_with_keyword_menus_and_captioned_examples_reads_as_shown() -> None:
    # a product's manual built with Bootstrap: the title names the product and its version
    # first; each keyword opens a menu of the sections that have it; an example's caption is
    # a division inside its <pre>
    page = (
        b"<html><head><title>Gadget version 2.6.12-1 - Configuration Manual</title></head>"
        b"<body><h1>Timeouts</h1><p>Set <span class='dropdown'><a class='dropdown-toggle' "
        b"href='#'>timeout connect<span class='caret'></span></a><ul class='dropdown-menu'>"
        b"<li class='dropdown-header'>This keyword is available in sections :</li>"
        b"<li><a href='#a'>Proxies</a></li></ul></span> to bound a connection attempt.</p>"
        b"<pre class='prettyprint'>\n<div class='example-desc'>Redirect all traffic to HTTPS."
        b"</div><code>redirect scheme https if !{ ssl_fc }\n</code></pre></body></html>"
    )
    doc = extract("configuration.html", page)
    assert doc.title == "Configuration Manual"
    assert "Set timeout connect to bound a connection attempt." in doc.text
    assert "available in sections" not in doc.text and "Proxies" not in doc.text
    assert "Redirect all traffic to HTTPS.\n\nredirect scheme https if !{ ssl_fc }" in doc.text
    ((start, end),) = doc.code
    assert doc.text[start:end] == "redirect scheme https if !{ ssl_fc }"
    # a title whose first part only holds a version is no product's name
    other = extract(
        "funcargs.html", page.replace(b"Gadget version 2.6.12-1 - ", b"pytest-2.3: a rework - ")
    )
    assert other.title == "pytest-2.3"


def test_a_manual_typed_into_pre_blocks_reads_as_paragraphs_and_entries() -> None:
    page = b"""<html><head><title>Guide</title></head><body><h1>balance</h1>
<pre class="text">When a worker's limit is reached, jobs are left waiting in a
queue. If the timeout is reached, the job is dropped and an
error is returned to the caller.

  roundrobin  Each worker is used in turns, according to their
              weights. It is limited by design to 4095 workers.
  first       The first worker with a free slot is used.

This statement enables statistics with default settings defined
at build time. Unless stated otherwise, these settings are used :
  - stats uri   : /status?stats
  - stats auth  : no authentication
</pre>
<pre>balance roundrobin
server s1 10.0.0.1:80</pre></body></html>"""
    doc = extract("guide.html", page)
    assert (
        "When a worker's limit is reached, jobs are left waiting in a queue. If the timeout is "
        "reached, the job is dropped and an error is returned to the caller.\n\n" in doc.text
    )
    assert (
        "roundrobin: Each worker is used in turns, according to their weights. It is limited "
        "by design to 4095 workers.\nfirst: The first worker with a free slot is used." in doc.text
    )
    assert (
        "This statement enables statistics with default settings defined at build time. Unless "
        "stated otherwise, these settings are used :\n\n- stats uri   : /status?stats\n"
        "- stats auth  : no authentication" in doc.text
    )
    ((start, end),) = doc.code  # the configuration stays code
    assert doc.text[start:end] == "balance roundrobin\nserver s1 10.0.0.1:80"


def test_prose_shown_verbatim_in_an_ordinary_page_stays_code() -> None:
    page = b"""<html><body><h1>Contexts</h1><p>Outside a request you will see this error,
which names what went wrong and says what to read next, and the sections below tell how to
set up a context for tests, commands and background work, one by one.</p>
<pre>RuntimeError: Working outside of request context.

This typically means that you attempted to use functionality that
needed an active HTTP request. Consult the documentation on testing
for information about how to avoid this problem.</pre>
<p>Push a context with the test client, or wrap the code that needs it in a block that
pushes one; the context is popped when the block ends, whatever happens inside it, and the
error above is gone. The same holds for commands run from the command line.</p></body></html>"""
    doc = extract("contexts.html", page)
    ((start, end),) = doc.code
    assert doc.text[start:end].startswith("RuntimeError: Working outside of request context.")


def test_a_keywords_header_heads_the_text_after_it() -> None:
    page = b"""<html><body><h2>5.2. Server options</h2>
<div class="keyword"><b><a href="#inter">inter</a></b> <span>&lt;delay&gt;</span></div>
<div class="keyword"><b><a href="#fastinter">fastinter</a></b> <span>&lt;delay&gt;</span></div>
<p>The "inter" parameter sets the interval between two checks. It defaults to 2000 ms.</p>
<div class="keyword"><b>weight</b> <span>&lt;weight&gt;</span></div>
<p>The default weight is 1, and the maximal value is 256.</p>
<h3>5.2.1. Agents</h3><div class="keyword"><b>agent-port</b></div>
<p>The port the agent listens on.</p>
<h2>5.3. Resolvers</h2><p>Name resolution at run time.</p></body></html>"""
    doc = extract("configuration.html", page)
    assert [s.heading for s in doc.sections] == [
        "5.2. Server options",
        "5.2. Server options > inter <delay>, fastinter <delay>",
        "5.2. Server options > weight <weight>",
        "5.2. Server options > 5.2.1. Agents",
        "5.2. Server options > 5.2.1. Agents > agent-port",
        "5.3. Resolvers",
    ]


def test_a_paragraph_holding_a_markdown_heading_is_the_heading_it_was_written_as() -> None:
    # Markdown pages built as reStructuredText leave "## Does X have an API?" a paragraph
    page = (
        b"<html><body><div class='body'><p>## Does widget have an API?</p><p>Not yet.</p>"
        b"<p># make install</p><p>### Notes ###</p><p>Widget is a tool.</p></div></body></html>"
    )
    doc = extract("faq.html", page)
    assert [s.heading for s in doc.sections] == [
        "Does widget have an API?",
        "Does widget have an API? > Notes",
    ]
    assert "# make install" in doc.text  # one hash is as often a root prompt: a paragraph
    assert "##" not in doc.text


def test_a_code_block_holding_only_an_unprocessed_include_is_left_out() -> None:
    # a MkDocs page built without its include extension shows the directive, not the code
    page = (
        b"<html><body><main><p>Ask for it with prompt=True:</p>"
        b"<pre><code class='language-Python'>{!../docs_src/options/prompt/tutorial001.py!}\n"
        b'</code></pre><pre><code>--8&lt;-- "examples/app.py"</code></pre>'
        b"<pre><code>print('kept')\n{!not only an include!}</code></pre></main></body></html>"
    )
    doc = extract("prompt.html", page)
    assert "docs_src" not in doc.text and "--8<--" not in doc.text
    assert "Ask for it with prompt=True:" in doc.text
    assert "print('kept')\n{!not only an include!}" in doc.text


def test_coloured_terminal_output_escaped_into_code_reads_as_shown() -> None:
    # a page's script renders these escaped tags as colours: the reader sees no tag
    page = (
        b"<html><body><main><p>Check the help:</p><div class='termy'><pre>"
        b"&lt;font color=&quot;#F4BF75&quot;&gt;&lt;b&gt;Usage: &lt;/b&gt;&lt;/font&gt;"
        b"main.py [OPTIONS]\n&lt;font color=&quot;#A5A5A1&quot;&gt;Try &lt;/font&gt;"
        b"&lt;font color=&quot;#44919F&quot;&gt;&amp;apos;main.py --help&amp;apos;&lt;/font&gt;"
        b"</pre></div><pre>&lt;b&gt;bold&lt;/b&gt; is how HTML marks it</pre></main></body></html>"
    )
    doc = extract("help.html", page)
    assert "Usage: main.py [OPTIONS]\nTry 'main.py --help'" in doc.text
    assert "<font" not in doc.text
    assert "<b>bold</b> is how HTML marks it" in doc.text  # no colours: code shown as written
